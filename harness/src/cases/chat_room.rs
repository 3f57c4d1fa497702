//! SPEC 1.11's room for request bodies: the bodies being read hold at most `max_body_mib` together,
//! beyond the first 64 KiB of each (which every request may send whatever others do); a body that
//! finds no room is 503 `server_error` at once. With `max_body_mib` 1, one body left open after
//! 1,048,000 bytes holds the whole room: then a body of 300 KiB, or of 65,537 bytes, is 503, and one
//! of 10,000 or exactly 65,536 bytes is served; once the open body is gone, the 300 KiB body is read.
//! The 503 reaches a client that writes its whole body before it reads (the rest is drained first).

use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::case;
use super::chat_body::{ONE_MIB_BODIES, body_of};
use super::common::{post_chat_body, post_then_read};
use crate::case::{Case, CheckResult, expect, expect_eq};
use crate::context::Ctx;

/// The bytes every body may send without room (SPEC 1.11).
const FREE: usize = 64 << 10;
/// What the body left open sends of its declared 1 MiB: past 1,047,552 (1,023 KiB), so all of the
/// 1,024 KiB of room.
const HELD: usize = 1_048_000;

pub fn cases() -> Vec<Case> {
    vec![
        case!(
            "chat.body-room-shared",
            "1.11",
            Must,
            ONE_MIB_BODIES,
            "with max_body_mib 1 and one body left open after 1,048,000 of its bytes (the whole room), a body of 300 KiB and one of 65,537 bytes are 503 server_error \"the server is reading other large requests…\" at once, bodies of 10,000 and of exactly 65,536 bytes are served (the first 64 KiB need no room), and once the open body is closed the 300 KiB one is read",
            body_room_shared,
            ["body-room-unbounded", "room-refuses-small-bodies"]
        ),
        case!(
            "chat.room-refusal-reaches-a-client-that-writes-first",
            "1.11",
            Must,
            ONE_MIB_BODIES,
            "with max_body_mib 1 and the room held by a body left open, a client that writes a whole 300 KiB body before reading, in 64 KiB pieces 100 ms apart (with Content-Length, and chunked), gets the 503 server_error, not a broken connection",
            room_refusal_reaches_writers,
            ["room-refusal-without-lingering"]
        ),
    ]
}

async fn status_of(ctx: &Ctx, size: usize) -> Result<(u16, String), crate::case::CheckError> {
    let reply = post_chat_body(&ctx.http, body_of(size)).await?;
    let message = serde_json::from_slice::<serde_json::Value>(&reply.body)
        .ok()
        .and_then(|v| Some(format!("{} {}", v["error"]["type"].as_str()?, v["error"]["message"].as_str()?)))
        .unwrap_or_default();
    Ok((reply.status, message))
}

/// Opens a chat request declaring 1 MiB and sends [`HELD`] bytes of it, so it holds the whole room
/// while the returned connection stays open.
async fn hold_the_room(ctx: &Ctx) -> Result<tokio::net::TcpStream, crate::case::CheckError> {
    let address = ctx.http.base().trim_start_matches("http://").to_string();
    let mut open = tokio::net::TcpStream::connect(&address)
        .await
        .map_err(|e| crate::check::broken(format!("connect {address}: {e}")))?;
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{}\r\n",
        1 << 20,
        ctx.http.key().map(|k| format!("authorization: Bearer {k}\r\n")).unwrap_or_default()
    );
    let body = body_of(1 << 20);
    open.write_all(head.as_bytes()).await.map_err(|e| crate::check::broken(format!("write: {e}")))?;
    open.write_all(&body.as_bytes()[..HELD]).await.map_err(|e| crate::check::broken(format!("write: {e}")))?;
    open.flush().await.map_err(|e| crate::check::broken(format!("flush: {e}")))?;
    // The server reads what arrived (on loopback, at once).
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(open)
}

async fn body_room_shared(ctx: Ctx) -> CheckResult {
    let open = hold_the_room(&ctx).await?;
    for size in [300 << 10, FREE + 1] {
        let (status, message) = status_of(&ctx, size).await?;
        expect_eq(&format!("status of a body of {size} bytes while the room is held"), 503, status)?;
        expect(
            message.starts_with("server_error the server is reading other large requests"),
            "server_error \"the server is reading other large requests: try again in a moment\"",
            message,
        )?;
    }
    for size in [10_000, FREE] {
        let (status, message) = status_of(&ctx, size).await?;
        expect(
            status != 503 && status < 500,
            format!("a body of {size} bytes served while the room is held (its first 64 KiB need none)"),
            format!("{status} {message}"),
        )?;
    }
    drop(open);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (status, message) = status_of(&ctx, 300 << 10).await?;
    expect(
        status != 503 && status < 500,
        "the 300 KiB body read once the open body is gone (its room given back)",
        format!("{status} {message}"),
    )
}

async fn room_refusal_reaches_writers(ctx: Ctx) -> CheckResult {
    let open = hold_the_room(&ctx).await?;
    let body = body_of(300 << 10);
    for chunked in [false, true] {
        let how = if chunked { "chunked" } else { "with Content-Length" };
        let (status, answer) = post_then_read(&ctx.http, body.as_bytes(), chunked, Duration::from_millis(100)).await?;
        expect_eq(
            &format!("status for a whole 300 KiB body written first ({how}) while the room is held"),
            503,
            status,
        )?;
        let shape: serde_json::Value = serde_json::from_str(answer.trim()).unwrap_or_default();
        expect(
            shape["error"]["type"] == "server_error"
                && shape["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("the server is reading other large requests")),
            "server_error \"the server is reading other large requests: try again in a moment\"",
            answer,
        )?;
    }
    drop(open);
    Ok(())
}

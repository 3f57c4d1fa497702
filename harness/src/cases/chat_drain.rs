//! SPEC 4.10's lingering read has a bound on both sides: a body over `max_body_mib` is read on and
//! dropped for up to 16 MiB more before the 413 goes out, and no more. With `max_body_mib` 1, a
//! client declares 257 MiB and writes as fast as the connection takes it: the server must take at
//! least the 16 MiB it drains (on loopback far within its 2 s; a server that refuses from the declared
//! length has read nothing before, a chunked body's first 1 MiB comes on top), and at most 17 MiB and
//! what the two sockets' buffers hold (on Linux loopback at most 32 MiB received and 4 MiB
//! sent), so the harness allows 64 MiB. A server that drains without counting takes all 257 MiB in its
//! 2 s.

use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;

use super::case;
use super::chat_body::ONE_MIB_BODIES;
use crate::case::{Case, CheckResult, expect};
use crate::check::broken;
use crate::context::Ctx;

/// The 16 MiB drained (SPEC 4.10): the least the server takes.
const AT_LEAST: usize = 16 << 20;
/// The most a server that stops after 16 MiB can take, with both sockets' buffers full.
const AT_MOST: usize = 64 << 20;
/// What the client declares and would write: far past anything a counted drain takes.
const DECLARED: usize = 257 << 20;
/// One write.
const PIECE: usize = 64 << 10;

pub fn cases() -> Vec<Case> {
    vec![case!(
        "chat.refused-body-drained-at-most-16-mib",
        "4.10",
        Must,
        ONE_MIB_BODIES,
        "with max_body_mib 1, a client that declares a 257 MiB body (with Content-Length, and chunked) and writes it as fast as it is taken gets at least 16 MiB taken (the drain) and at most 64 MiB (that and both sockets' buffers) before the server stops reading",
        drained_at_most_16_mib,
        ["drain-uncounted", "refusal-without-lingering"]
    )]
}

/// Writes the head and then body bytes as fast as the connection takes them, until a write fails,
/// stalls for 3 s, or the whole declared body is out; returns the body bytes written.
async fn bytes_taken(ctx: &Ctx, chunked: bool) -> Result<usize, crate::case::CheckError> {
    let address = ctx.http.base().trim_start_matches("http://").to_string();
    let mut stream =
        tokio::net::TcpStream::connect(&address).await.map_err(|e| broken(format!("connect {address}: {e}")))?;
    let framing =
        if chunked { "transfer-encoding: chunked".to_string() } else { format!("content-length: {DECLARED}") };
    let key = ctx.http.key().map(|k| format!("authorization: Bearer {k}\r\n")).unwrap_or_default();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n{framing}\r\n{key}\r\n"
    );
    stream.write_all(head.as_bytes()).await.map_err(|e| broken(format!("write the head: {e}")))?;
    let mut piece = Vec::with_capacity(PIECE + 16);
    if chunked {
        piece.extend(format!("{PIECE:x}\r\n").as_bytes());
    }
    piece.extend(std::iter::repeat_n(b' ', PIECE));
    if chunked {
        piece.extend(b"\r\n");
    }
    let started = Instant::now();
    let mut body_written = 0usize;
    while body_written < DECLARED && started.elapsed() < Duration::from_secs(20) {
        match tokio::time::timeout(Duration::from_secs(3), stream.write_all(&piece)).await {
            Ok(Ok(())) => body_written += PIECE,
            Ok(Err(_)) | Err(_) => break,
        }
    }
    Ok(body_written)
}

async fn drained_at_most_16_mib(ctx: Ctx) -> CheckResult {
    for chunked in [false, true] {
        let how = if chunked { "chunked" } else { "with Content-Length" };
        let taken = bytes_taken(&ctx, chunked).await?;
        let mib = |bytes: usize| format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20));
        expect(
            taken >= AT_LEAST,
            format!("at least {} of the body taken ({how}): the 16 MiB drained", mib(AT_LEAST)),
            format!("the connection stopped taking it after {}", mib(taken)),
        )?;
        expect(
            taken <= AT_MOST,
            format!("at most {} of the body taken ({how}): the drain stops after 16 MiB", mib(AT_MOST)),
            format!("{} taken", mib(taken)),
        )?;
    }
    Ok(())
}

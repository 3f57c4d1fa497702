//! `gen.body-room-model`: interleavings of bodies that share `max_body_mib` (`generate::body_room`),
//! each on plain TCP connections this file drives: A's body held half sent, or its answer left
//! streaming, while B and C are posted whole; then A's rest.

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::case;
use super::generated_framing::{first_final, read_until};
use crate::case::{Case, CheckResult};
use crate::context::Ctx;
use crate::generate::body_room::{self, FREE, Plan, Seen};
use crate::generate::covering_first;
use crate::generate::framing::body_of;

/// The key of the server the requests go to.
const KEY: &str = "gen-room-key";
/// The script A's streamed answer takes (a token every 20 ms: seconds of answer still to write).
const LONG: &str = "long";

pub fn cases() -> Vec<Case> {
    vec![case!(
        "gen.body-room-model",
        "1.11",
        Must,
        crate::scenario::LAUNCHES,
        "with max_body_mib 1, a body A (600,000 or 1,000,000 bytes, with Content-Length or chunked) half sent and held open, sent whole with its answer still streaming, or answered, while a body B of 65,536, 300,000 or 700,000 bytes comes, then C of 65,536 and A's rest; every pair of those values and the three-axis states 1.11s names on every run, then drawn ones: B is 503 server_error exactly when its bytes do not fit beside what A holds (no room within 64 KiB, else all bytes read in KiB, until parsed, not while answered), C and A are served",
        body_room_model,
        body_room::VARIANTS
    )]
}

async fn body_room_model(ctx: Ctx) -> CheckResult {
    let long = format!("</think>{}", "word ".repeat(400));
    let config = json!({"max_body_mib": 1, "api_key": KEY, "engine": {"delay_ms": 20, "script_sets": {LONG: [long]}}});
    let server = ctx.start_running(&config, &["</think>ok".to_string()], &[]).await?;
    let address = server.http.base().trim_start_matches("http://").to_string();
    let check = move |plan: Plan| {
        let address = address.clone();
        async move { body_room::judge(&plan, &interleave(&address, &plan).await?) }
    };
    let verdict =
        covering_first("body-room", 16, (body_room::covering(), 1), body_room::plans(), body_room::describe, check)
            .await;
    drop(server);
    verdict
}

fn head(address: &str, framing: &str) -> Vec<u8> {
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\nauthorization: Bearer {KEY}\r\n{framing}\r\n\r\n"
    )
    .into_bytes()
}

/// POSTs a whole body of `len` bytes on a connection of its own: the status and body of its answer.
async fn post(address: &str, len: usize) -> Result<(u16, String), String> {
    let mut stream = TcpStream::connect(address).await.map_err(|e| format!("connect: {e}"))?;
    let body = body_of(len, None, false);
    let mut request = head(address, &format!("content-length: {}", body.len()));
    request.extend(body);
    // A refusal may come while the body is still written: a broken write is the answer's to tell.
    let _ = stream.write_all(&request).await;
    let mut read = Vec::new();
    read_until(&mut stream, &mut read, |r| first_final(r).is_some()).await;
    let answer = first_final(&read).ok_or_else(|| format!("no answer to a body of {len} bytes"))?;
    Ok((answer.status, String::from_utf8_lossy(&answer.body).into_owned()))
}

/// A's body as written on the wire, split where the plan holds it.
fn a_wire(plan: &Plan) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let streamed = plan.phase == 1;
    let body = body_of(plan.a_len(), streamed.then_some(LONG), streamed);
    let half = plan.a_sent();
    if plan.a_chunked == 0 {
        return (head("", &format!("content-length: {}", body.len())), body[..half].to_vec(), body[half..].to_vec());
    }
    let frame =
        |piece: &[u8]| [format!("{:x}\r\n", piece.len()).into_bytes(), piece.to_vec(), b"\r\n".to_vec()].concat();
    let first: Vec<u8> = body[..half].chunks(FREE).flat_map(frame).collect();
    let mut rest: Vec<u8> = body[half..].chunks(FREE).flat_map(frame).collect();
    rest.extend(b"0\r\n\r\n");
    (head("", "transfer-encoding: chunked"), first, rest)
}

async fn interleave(address: &str, plan: &Plan) -> Result<Seen, String> {
    let mut a = TcpStream::connect(address).await.map_err(|e| format!("connect: {e}"))?;
    let (a_head, a_first, a_rest) = a_wire(plan);
    let a_head = String::from_utf8_lossy(&a_head).replace("host: \r\n", &format!("host: {address}\r\n"));
    a.write_all(a_head.as_bytes()).await.map_err(|e| format!("A's head: {e}"))?;
    a.write_all(&a_first).await.map_err(|e| format!("A's body: {e}"))?;
    let mut a_read = Vec::new();
    match plan.phase {
        0 => tokio::time::sleep(Duration::from_millis(300)).await, // the server reads what came
        1 => {
            a.write_all(&a_rest).await.map_err(|e| format!("A's rest: {e}"))?;
            read_until(&mut a, &mut a_read, |r| r.windows(5).any(|w| w == b"data:")).await;
        }
        _ => {
            a.write_all(&a_rest).await.map_err(|e| format!("A's rest: {e}"))?;
            read_until(&mut a, &mut a_read, |r| first_final(r).is_some()).await;
        }
    }
    let b = post(address, plan.b_len()).await?;
    let (c, _) = post(address, FREE).await?;
    if plan.phase == 0 {
        a.write_all(&a_rest).await.map_err(|e| format!("A's rest: {e}"))?;
        read_until(&mut a, &mut a_read, |r| first_final(r).is_some()).await;
    }
    let a_status = match plan.phase {
        1 => String::from_utf8_lossy(&a_read).split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0),
        _ => first_final(&a_read).map_or(0, |x| x.status),
    };
    Ok(Seen { b, c, a: a_status })
}

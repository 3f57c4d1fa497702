//! `gen.timeout-model`: requests whose headers or body trickle in (`generate::timeouts`), written over
//! a plain TCP connection piece by piece while the answer is awaited, on a server whose bounds the
//! configuration shortens; every covering request at once (they mostly wait), then drawn ones.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::case;
use super::generated_framing::{first_final, read_until};
use crate::case::{Case, CheckResult};
use crate::context::Ctx;
use crate::generate::covering_first;
use crate::generate::framing::{CONTENT, body};
use crate::generate::timeouts::{self, BODY_TIMEOUT_S, HEADER_TIMEOUT_S, LATE, Seen, Trickle};

/// The key of the server the requests go to.
const KEY: &str = "gen-timeout-key";

pub fn cases() -> Vec<Case> {
    vec![case!(
        "gen.timeout-model",
        "1.11",
        Must,
        crate::scenario::LAUNCHES,
        "with header_timeout_s 2 and body_timeout_s 1, requests whose headers or body trickle in over 0.4 s, 1.4 s (between the two bounds) or past their own bound, in 3 or 12 pieces (every read far quicker than the bound), length-framed or chunked, every pair of those values on every run, then drawn ones: served when complete in time; headers late dropped at header_timeout_s (no answer but a 408); a body late 408 \"the request body did not arrive within 1 s\" at body_timeout_s, however quick each read",
        timeout_model,
        timeouts::VARIANTS
    )]
}

async fn timeout_model(ctx: Ctx) -> CheckResult {
    let config = json!({"header_timeout_s": HEADER_TIMEOUT_S, "body_timeout_s": BODY_TIMEOUT_S, "api_key": KEY});
    let server = ctx.start_running(&config, &[], &[]).await?;
    let address = server.http.base().trim_start_matches("http://").to_string();
    let check = move |trickle: Trickle| {
        let address = address.clone();
        async move {
            let seen = send(&address, &trickle).await?;
            timeouts::judge(&trickle, &seen, CONTENT)
        }
    };
    let rows = timeouts::covering();
    let at_once = rows.len();
    let verdict =
        covering_first("timeouts", 16, (rows, at_once), timeouts::trickles(), timeouts::describe, check).await;
    drop(server);
    verdict
}

/// The request's head and its body as framed.
fn request(trickle: &Trickle, address: &str) -> (Vec<u8>, Vec<Vec<u8>>) {
    let body = body(0);
    let framing = if trickle.chunked == 1 {
        "transfer-encoding: chunked".to_string()
    } else {
        format!("content-length: {}", body.len())
    };
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\nauthorization: Bearer {KEY}\r\n{framing}\r\n\r\n"
    );
    let count = trickle.piece_count();
    let size = body.len().div_ceil(count);
    let mut pieces: Vec<Vec<u8>> = body.chunks(size).map(<[u8]>::to_vec).collect();
    if trickle.chunked == 1 {
        pieces = pieces
            .into_iter()
            .map(|p| [format!("{:x}\r\n", p.len()).into_bytes(), p, b"\r\n".to_vec()].concat())
            .collect();
        if let Some(last) = pieces.last_mut() {
            last.extend(b"0\r\n\r\n");
        }
    }
    (head.into_bytes(), pieces)
}

/// Splits `bytes` into `count` pieces.
fn split(bytes: &[u8], count: usize) -> Vec<Vec<u8>> {
    bytes.chunks(bytes.len().div_ceil(count).max(1)).map(<[u8]>::to_vec).collect()
}

/// Writes the request, its slow part piece by piece (the last piece at the trickle's duration), while
/// the answer is read; what came and when.
async fn send(address: &str, trickle: &Trickle) -> Result<Seen, String> {
    let stream = TcpStream::connect(address).await.map_err(|e| format!("connect {address}: {e}"))?;
    let (mut reader, mut writer) = stream.into_split();
    let (head, body_pieces) = request(trickle, address);
    let (slow, after): (Vec<Vec<u8>>, Vec<u8>) = if trickle.slow == 0 {
        (split(&head, trickle.piece_count()), body_pieces.concat())
    } else {
        (body_pieces, Vec::new())
    };
    let gap = trickle.duration() / (slow.len().max(2) - 1) as u32;
    let started = Instant::now();
    let head_first = if trickle.slow == 0 { Vec::new() } else { head };
    let writing = tokio::spawn(async move {
        writer.write_all(&head_first).await?;
        for (at, piece) in slow.iter().enumerate() {
            if at > 0 {
                tokio::time::sleep(gap).await;
            }
            writer.write_all(piece).await?;
        }
        writer.write_all(&after).await?;
        // Kept open: a half-closed connection may read as a client that went away.
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok::<_, std::io::Error>(writer)
    });
    let mut read = Vec::new();
    let limit = trickle.bound() + trickle.duration() + LATE + Duration::from_secs(2);
    let answer = tokio::time::timeout(limit, async {
        read_until(&mut reader, &mut read, |r| first_final(r).is_some()).await;
        first_final(&read).map(|a| (a.status, String::from_utf8_lossy(&a.body).into_owned()))
    })
    .await;
    let after = started.elapsed();
    writing.abort();
    match answer {
        Ok(answer) => Ok(Seen { answer, after }),
        Err(_) => Err(format!("neither an answer nor a close within {limit:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pieces_make_the_whole_request() {
        let trickle = Trickle { slow: 1, total: 0, pieces: 1, chunked: 1 };
        let (head, pieces) = request(&trickle, "127.0.0.1:1");
        assert!(String::from_utf8(head).expect("ASCII").contains("transfer-encoding: chunked"));
        assert!(pieces.len() >= 10 && pieces.concat().ends_with(b"0\r\n\r\n"));
        assert_eq!(split(b"abcdefg", 3).concat(), b"abcdefg");
    }
}

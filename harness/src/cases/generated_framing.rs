//! `gen.framing-model`: the same chat request written every way HTTP/1.x allows (`generate::framing`),
//! over a plain TCP connection this file drives byte by byte: `Expect: 100-continue` waited on as a
//! client does (the body only after `100 Continue`, or after a second of silence), chunked and
//! length-framed bodies, HTTP/1.0, header names in three cases, a request pipelined behind it; every
//! answer read off the connection, interim ones included, and judged by the model.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::case;
use crate::case::{Case, CheckResult};
use crate::context::Ctx;
use crate::generate::covering_first;
use crate::generate::framing::{self, Answer, Framing, MAX_BODY_MIB};

/// The key of the server the requests go to.
const KEY: &str = "gen-framing-key";
/// How long a client that sent `Expect: 100-continue` waits before it sends the body anyway.
const EXPECT_WAIT: Duration = Duration::from_secs(1);

pub fn cases() -> Vec<Case> {
    vec![case!(
        "gen.framing-model",
        "4.10",
        Must,
        crate::scenario::LAUNCHES,
        "a chat request written every way HTTP/1.x allows (HTTP/1.1 or 1.0; Content-Length, one chunk, or 7-byte chunks, the first 16 with an extension; Expect: 100-continue in two cases or none; header names lower, Title or UPPER case; the key as Bearer or x-api-key; a GET /health pipelined after it or not) at three sizes around max_body_mib 1 (small, exactly 1 MiB, one byte over), every pair of those values in one request at least on every run, then drawn ones: 200 with the same answer up to the bound, 413 past it, no 100 Continue before a 413 a declared length earned, a pipelined request answered after unless the first answer closed",
        framing_model,
        framing::VARIANTS
    )]
}

async fn framing_model(ctx: Ctx) -> CheckResult {
    let config = json!({"max_body_mib": MAX_BODY_MIB, "api_key": KEY});
    let server = ctx.start_running(&config, &[], &[]).await?;
    let address = server.http.base().trim_start_matches("http://").to_string();
    let check = move |request: Framing| {
        let address = address.clone();
        async move {
            let answers = exchange(&address, &request).await?;
            framing::judge(&request, &answers)
        }
    };
    let verdict =
        covering_first("framing", 4, (framing::covering(), 1), framing::requests(), framing::describe, check).await;
    drop(server);
    verdict
}

/// The request's head, its body as written on the wire, and what is pipelined after it.
fn wire(request: &Framing, address: &str) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let body = framing::body(if request.size == 0 { 0 } else { request.body_len() });
    let name = |n: &str| request.name(n);
    let version = if request.version == 0 { "HTTP/1.1" } else { "HTTP/1.0" };
    let mut head = format!("POST /v1/chat/completions {version}\r\n{}: {address}\r\n", name("host"));
    head.push_str(&format!("{}: application/json\r\n", name("content-type")));
    match request.key {
        0 => head.push_str(&format!("{}: Bearer {KEY}\r\n", name("authorization"))),
        _ => head.push_str(&format!("{}: {KEY}\r\n", name("x-api-key"))),
    }
    if let Some(value) = request.expect_value() {
        head.push_str(&format!("{}: {value}\r\n", name("expect")));
    }
    let mut framed = Vec::new();
    if request.chunked() {
        head.push_str(&format!("{}: chunked\r\n", name("transfer-encoding")));
        let size = if request.framing == 1 { body.len() } else { 7 };
        for (at, piece) in body.chunks(size.max(1)).enumerate() {
            // The first 16 chunks carry an extension: within the 16 KiB of them 4.10j bounds.
            let extension = if request.framing == 2 && at < 16 { ";x=1" } else { "" };
            framed.extend(format!("{:x}{extension}\r\n", piece.len()).as_bytes());
            framed.extend(piece);
            framed.extend(b"\r\n");
        }
        framed.extend(b"0\r\n\r\n");
    } else {
        head.push_str(&format!("{}: {}\r\n", name("content-length"), body.len()));
        framed = body;
    }
    head.push_str("\r\n");
    let pipelined = if request.pipelines() {
        format!("GET /health HTTP/1.1\r\n{}: {address}\r\n{}: close\r\n\r\n", name("host"), name("connection"))
            .into_bytes()
    } else {
        Vec::new()
    };
    (head.into_bytes(), framed, pipelined)
}

/// Writes the request as a client does and reads every answer (to the second final one, or the end).
async fn exchange(address: &str, request: &Framing) -> Result<Vec<Answer>, String> {
    let mut stream = TcpStream::connect(address).await.map_err(|e| format!("connect {address}: {e}"))?;
    let (head, body, pipelined) = wire(request, address);
    stream.write_all(&head).await.map_err(|e| format!("write the head: {e}"))?;
    let mut read = Vec::new();
    let mut answers = Vec::new();
    if request.expect_value().is_some() {
        // Told before it sends: the body goes after 100 Continue, or after a second of silence; a
        // final answer first means it never goes.
        let waited =
            tokio::time::timeout(EXPECT_WAIT, read_answers(&mut stream, &mut read, &mut answers, 1, true)).await;
        if waited.is_ok() && answers.iter().any(|a| a.status >= 200) {
            return finish(stream, read, answers, 1).await;
        }
    }
    let mut rest = body;
    rest.extend(pipelined);
    // A server may answer and stop reading while the body still comes (the 413): a broken write is its
    // answer's to tell.
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.write_all(&rest)).await;
    let wanted = if request.pipelines() { 2 } else { 1 };
    finish(stream, read, answers, wanted).await
}

async fn finish(
    mut stream: TcpStream,
    mut read: Vec<u8>,
    mut answers: Vec<Answer>,
    finals: usize,
) -> Result<Vec<Answer>, String> {
    let _ = tokio::time::timeout(
        Duration::from_secs(10),
        read_answers(&mut stream, &mut read, &mut answers, finals, false),
    )
    .await;
    Ok(answers)
}

/// Reads answers off `stream` into `answers` until `finals` final (≥ 200) ones are there, the
/// connection ends, or (`stop_at_interim`) an interim one comes.
async fn read_answers(
    stream: &mut TcpStream,
    read: &mut Vec<u8>,
    answers: &mut Vec<Answer>,
    finals: usize,
    stop_at_interim: bool,
) {
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        while let Some((answer, used)) = parse(read) {
            read.drain(..used);
            let interim = answer.status < 200;
            answers.push(answer);
            if interim && stop_at_interim {
                return;
            }
        }
        if answers.iter().filter(|a| a.status >= 200).count() >= finals || read.len() > 4 << 20 {
            return;
        }
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => {
                // The end of the connection ends a body that had no length.
                if let Some(answer) = parse_to_end(read) {
                    answers.push(answer);
                }
                return;
            }
            Ok(n) => read.extend_from_slice(&buffer[..n]),
        }
    }
}

/// An answer's head: status, headers (lower-case names), where its body starts.
type Head = (u16, Vec<(String, String)>, usize);

/// The head of an answer at the start of `bytes`.
fn head(bytes: &[u8]) -> Option<Head> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = String::from_utf8_lossy(&bytes[..end]);
    let mut lines = text.split("\r\n");
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Some((status, headers, end + 4))
}

/// One whole answer at the start of `bytes`, and the bytes it took (`None`: not all here yet).
pub(super) fn parse(bytes: &[u8]) -> Option<(Answer, usize)> {
    let (status, headers, start) = head(bytes)?;
    let value = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    if status < 200 || status == 204 || status == 304 {
        return Some((Answer { status, headers, body: Vec::new() }, start));
    }
    if value("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked")) {
        let (body, used) = dechunk(&bytes[start..])?;
        return Some((Answer { status, headers, body }, start + used));
    }
    let length: usize = value("content-length")?.parse().ok()?;
    let body = bytes.get(start..start + length)?.to_vec();
    Some((Answer { status, headers, body }, start + length))
}

/// The first final (≥ 200) answer whole in `bytes`, interim ones skipped.
pub(super) fn first_final(bytes: &[u8]) -> Option<Answer> {
    let mut at = 0;
    while let Some((answer, used)) = parse(&bytes[at..]) {
        if answer.status >= 200 {
            return Some(answer);
        }
        at += used;
    }
    None
}

/// Reads from `stream` into `read` until `done` holds for what came (or 20 s pass, 16 MiB came, or it
/// ends): a server that never stops writing costs a bounded buffer.
pub(super) async fn read_until(
    stream: &mut (impl tokio::io::AsyncRead + Unpin),
    read: &mut Vec<u8>,
    done: impl Fn(&[u8]) -> bool,
) {
    let mut buffer = vec![0u8; 64 << 10];
    let _ = tokio::time::timeout(Duration::from_secs(20), async {
        while !done(read) && read.len() < 16 << 20 {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => read.extend_from_slice(&buffer[..n]),
            }
        }
    })
    .await;
}

/// An answer whose body runs to the end of the connection.
fn parse_to_end(bytes: &[u8]) -> Option<Answer> {
    let (status, headers, start) = head(bytes)?;
    Some(Answer { status, headers, body: bytes[start..].to_vec() })
}

/// A chunked body at the start of `bytes`, and the bytes it took.
fn dechunk(bytes: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let line_end = at + bytes[at..].windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&bytes[at..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        at = line_end + 2;
        if size == 0 {
            let end = at + bytes[at..].windows(2).position(|w| w == b"\r\n")?;
            return Some((body, end + 2));
        }
        body.extend_from_slice(bytes.get(at..at + size)?);
        at += size + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_in_every_framing() {
        let bytes = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3;a=b\r\nabc\r\n0\r\n\r\n";
        let (first, used) = parse(bytes).expect("the interim answer");
        assert_eq!((first.status, used), (100, 25));
        let (second, more) = parse(&bytes[used..]).expect("the length-framed answer");
        assert_eq!((second.status, second.body.as_slice()), (200, &b"ok"[..]));
        let (third, _) = parse(&bytes[used + more..]).expect("the chunked answer");
        assert_eq!(third.body, b"abc");
        assert!(parse(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nok").is_none());
    }

    #[test]
    fn the_wire_frames_the_body_as_the_request_says() {
        let request = Framing { framing: 2, names: 2, expect: 1, ..Framing::from_row(&[0; 7]) };
        let (head, body, _) = wire(&request, "127.0.0.1:1");
        let head = String::from_utf8(head).expect("ASCII");
        assert!(head.contains("TRANSFER-ENCODING: chunked") && head.contains("EXPECT: 100-continue"), "{head}");
        assert!(body.starts_with(b"7;x=1\r\n") && body.ends_with(b"0\r\n\r\n"));
        let (unchunked, _) = dechunk(&body).expect("a whole chunked body");
        assert_eq!(unchunked, framing::body(0));
        let old = Framing { version: 1, framing: 2, ..request };
        let (head, _, _) = wire(&old, "127.0.0.1:1");
        assert!(String::from_utf8(head).expect("ASCII").contains("CONTENT-LENGTH: "));
    }
}

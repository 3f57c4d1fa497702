//! Helpers the case files share: request bodies, reading streams, fetching pictures.

use fixtures::scripts::{answer_script, call_script};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::case::{CheckError, CheckResult, broken, expect, expect_eq};
use crate::context::Ctx;
use crate::events::{Media, ResultEvent};
use crate::http::{Http, Reply};
use crate::scenario::FIXTURE_SERVER;
use crate::sse::EventStream;

/// Byte counts as the SPEC writes them (the fixtures' rendering, never the server's).
pub use fixtures::images::with_commas;

/// The chat route.
pub const CHAT: &str = "/v1/chat/completions";

/// A script that calls the fixture's `tool` with `args`.
pub fn call(tool: &str, args: &[(&str, &str)]) -> String {
    call_script(&format!("{FIXTURE_SERVER}__{tool}"), args)
}

/// A script that answers `text`.
pub fn answer(text: &str) -> String {
    answer_script(text)
}

/// A user message.
pub fn user(text: &str) -> Value {
    json!({"messages": [{"role": "user", "content": text}]})
}

/// A user message that opts in to MCP.
pub fn opt_in() -> Value {
    json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true})
}

/// Posts `body` streamed and reads the whole stream (status 200 required).
pub async fn stream(http: &Http, mut body: Value) -> Result<EventStream, CheckError> {
    body["stream"] = json!(true);
    let reply = http.post_json(CHAT, &body).send().await?;
    expect_eq("chat status", 200, reply.status)?;
    Ok(EventStream::parse(&reply.text()))
}

/// Posts `body` not streamed (status 200 required) and returns the JSON.
pub async fn complete(http: &Http, body: &Value) -> Result<Value, CheckError> {
    let reply = http.post_json(CHAT, body).send().await?;
    expect_eq("chat status", 200, reply.status)?;
    reply.json()
}

/// The first `result` event.
pub fn first_result(stream: &EventStream) -> Result<ResultEvent, CheckError> {
    stream.results()?.into_iter().next().ok_or_else(|| CheckError::Fail {
        expected: "a strata_mcp result event".into(),
        actual: format!("events: {:?}", stream.mcp_events()),
    })
}

/// Runs the picture tool once and returns its single media entry.
pub async fn one_picture(ctx: &Ctx) -> Result<Media, CheckError> {
    let stream = stream(&ctx.http, opt_in()).await?;
    let mut media = first_result(&stream)?.media;
    expect_eq("media entries", 1, media.len())?;
    Ok(media.remove(0))
}

/// GETs a picture's URL.
pub async fn fetch(http: &Http, url: &str) -> Result<Reply, CheckError> {
    Ok(http.get(url).send().await?)
}

/// Lowercase hex SHA-256.
pub fn sha256(bytes: &[u8]) -> String {
    fixtures::images::sha256_hex(bytes)
}

/// `usage.prompt_tokens` of a whole answer.
pub fn prompt_tokens(answer: &Value) -> Result<i64, CheckError> {
    answer["usage"]["prompt_tokens"].as_i64().ok_or_else(|| broken(format!("no usage.prompt_tokens in {answer}")))
}

/// Opens a streamed chat and reads it until `until` holds for the text so far; returns the open
/// response (to drop it = to close the connection) and the text.
pub async fn read_until(
    http: &Http,
    mut body: Value,
    until: impl Fn(&str) -> bool,
) -> Result<(hyper::Response<crate::http::Streamed>, String), CheckError> {
    body["stream"] = json!(true);
    let mut response = http.post_json(CHAT, &body).open().await?;
    let mut seen = String::new();
    while !until(&seen) {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(30), response.body_mut().frame())
            .await
            .map_err(|_| broken("the stream stalled"))?;
        match frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    seen.push_str(&String::from_utf8_lossy(data));
                }
            }
            _ => return Err(broken(format!("the stream ended before the awaited event: {}", tail(&seen)))),
        }
    }
    Ok((response, seen))
}

/// POSTs `body` as it is to the chat route, labelled `application/json`.
pub async fn post_chat_body(http: &Http, body: impl Into<bytes::Bytes>) -> Result<Reply, CheckError> {
    Ok(http.call(http::Method::POST, CHAT).header("content-type", b"application/json").body(body).send().await?)
}

/// POSTs a JSON body too large for the server over a plain TCP connection, and returns the status
/// and body of its answer. A server may answer from `Content-Length` alone and close without reading
/// the body; a client still writing then gets a reset instead of the answer, so the headers go first
/// and the answer is awaited for 2 s before the body is sent (a server that counts the bytes as they
/// come gets them all, and answers after).
pub async fn post_oversized(http: &Http, body: &[u8]) -> Result<(u16, String), CheckError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = http.base().trim_start_matches("http://").to_string();
    let mut stream =
        tokio::net::TcpStream::connect(&address).await.map_err(|e| broken(format!("connect {address}: {e}")))?;
    let key = http.key().map(|k| format!("authorization: Bearer {k}\r\n")).unwrap_or_default();
    let head = format!(
        "POST {CHAT} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{key}connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.map_err(|e| broken(format!("write: {e}")))?;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 8192];
    let early = tokio::time::timeout(std::time::Duration::from_secs(2), stream.read(&mut buffer)).await;
    match early {
        Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&buffer[..n]),
        _ => {
            // No answer yet: the server reads bodies as they come. Send it (a close half-way is its answer).
            let _ = stream.write_all(body).await;
        }
    }
    // An answer to a refused body is small: at most 1 MiB of it is read.
    let room = (1u64 << 20).saturating_sub(answer.len() as u64);
    let rest =
        tokio::time::timeout(std::time::Duration::from_secs(30), (&mut stream).take(room).read_to_end(&mut answer))
            .await;
    if rest.is_err() && answer.is_empty() {
        return Err(broken("no answer within 30 s"));
    }
    Ok(status_and_body(&answer))
}

/// The status and body of a raw HTTP/1.1 answer (what the raw-TCP senders below read).
fn status_and_body(answer: &[u8]) -> (u16, String) {
    let text = String::from_utf8_lossy(answer);
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// POSTs `body` to the chat route with `Transfer-Encoding: chunked` (no `Content-Length`, so a server
/// learns the size only by counting), in chunks of `chunk` bytes, over a plain TCP connection; the
/// answer is read while the body is still being written (a server may refuse half-way). The status
/// and body of the answer.
pub async fn post_chunked(http: &Http, body: Vec<u8>, chunk: usize) -> Result<(u16, String), CheckError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let address = http.base().trim_start_matches("http://").to_string();
    let stream =
        tokio::net::TcpStream::connect(&address).await.map_err(|e| broken(format!("connect {address}: {e}")))?;
    let (mut reader, mut writer) = stream.into_split();
    let key = http.key().map(|k| format!("authorization: Bearer {k}\r\n")).unwrap_or_default();
    let head = format!(
        "POST {CHAT} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n{key}connection: close\r\n\r\n"
    );
    let sending = tokio::spawn(async move {
        writer.write_all(head.as_bytes()).await?;
        for piece in body.chunks(chunk.max(1)) {
            writer.write_all(format!("{:x}\r\n", piece.len()).as_bytes()).await?;
            writer.write_all(piece).await?;
            writer.write_all(b"\r\n").await?;
        }
        writer.write_all(b"0\r\n\r\n").await?;
        // Handed back, not dropped: dropping the write half would half-close the connection, which a
        // server may take for a client that went away (4.11) before it answers.
        Ok::<_, std::io::Error>(writer)
    });
    let mut answer = Vec::new();
    let read =
        tokio::time::timeout(std::time::Duration::from_secs(30), (&mut reader).take(1 << 20).read_to_end(&mut answer))
            .await;
    sending.abort();
    if read.is_err() && answer.is_empty() {
        return Err(broken("no answer within 30 s"));
    }
    Ok(status_and_body(&answer))
}

/// POSTs `body` to the chat route the way simple clients do (Python's `urllib`): the whole request
/// written first — with `Content-Length`, or chunked in 64 KiB chunks — and only then the answer read.
/// With a `pause`, the request goes in 64 KiB pieces that far apart (a slow link: a body smaller than
/// the loopback's buffers would otherwise be taken whole before the server answers). A server that
/// answers and closes while the body is still coming breaks the write or the read, which this reports
/// as a failure.
pub async fn post_then_read(
    http: &Http,
    body: &[u8],
    chunked: bool,
    pause: std::time::Duration,
) -> Result<(u16, String), CheckError> {
    use tokio::io::AsyncWriteExt;
    let address = http.base().trim_start_matches("http://").to_string();
    let mut stream =
        tokio::net::TcpStream::connect(&address).await.map_err(|e| broken(format!("connect {address}: {e}")))?;
    let key = http.key().map(|k| format!("authorization: Bearer {k}\r\n")).unwrap_or_default();
    let framing =
        if chunked { "transfer-encoding: chunked".to_string() } else { format!("content-length: {}", body.len()) };
    // As Python's urllib writes it: `Connection: close`, the whole body, then the first read.
    let mut request = format!(
        "POST {CHAT} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n{framing}\r\n{key}connection: close\r\n\r\n"
    )
    .into_bytes();
    if chunked {
        for piece in body.chunks(64 << 10) {
            request.extend(format!("{:x}\r\n", piece.len()).as_bytes());
            request.extend(piece);
            request.extend(b"\r\n");
        }
        request.extend(b"0\r\n\r\n");
    } else {
        request.extend(body);
    }
    let how = if chunked { "chunked" } else { "with Content-Length" };
    let write = async {
        if pause.is_zero() {
            return stream.write_all(&request).await;
        }
        for (i, piece) in request.chunks(64 << 10).enumerate() {
            if i > 0 {
                tokio::time::sleep(pause).await;
            }
            stream.write_all(piece).await?;
        }
        Ok(())
    };
    let written = tokio::time::timeout(std::time::Duration::from_secs(30), write).await;
    match written {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(CheckError::Fail {
                expected: format!("the whole body ({} bytes, {how}) written, then the answer", body.len()),
                actual: format!("the connection broke while it was written: {e}"),
            });
        }
        Err(_) => return Err(broken("the body could not be written within 30 s")),
    }
    let mut answer = Vec::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(30), read_answer(&mut stream, &mut answer)).await;
    if let Ok(Err(e)) = &read
        && answer.is_empty()
    {
        return Err(CheckError::Fail {
            expected: format!("an answer after the whole body ({} bytes, {how})", body.len()),
            actual: format!("the connection broke before one came: {e}"),
        });
    }
    Ok(status_and_body(&answer))
}

/// Reads one HTTP/1.1 answer into `answer`: up to its `Content-Length` when it has one (a server that
/// ignores `Connection: close` costs no wait), else to the end of the connection; at most 1 MiB.
async fn read_answer(stream: &mut tokio::net::TcpStream, answer: &mut Vec<u8>) -> std::io::Result<()> {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 16 << 10];
    while answer.len() < 1 << 20 {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        answer.extend_from_slice(&buf[..n]);
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
            let length =
                head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok());
            if length.is_some_and(|length: usize| answer.len() >= end + 4 + length) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Reads an open response to its end (at most 30 s between frames, and 16 MiB kept); the text.
pub async fn read_rest(mut response: hyper::Response<crate::http::Streamed>) -> String {
    let mut seen = String::new();
    while let Ok(Some(Ok(frame))) =
        tokio::time::timeout(std::time::Duration::from_secs(30), response.body_mut().frame()).await
    {
        if seen.len() > 16 << 20 {
            continue;
        }
        if let Some(data) = frame.data_ref() {
            seen.push_str(&String::from_utf8_lossy(data));
        }
    }
    seen
}

fn tail(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(300)..].iter().collect()
}

/// The server's `/v1/status`, polled until `wanted` holds, at most `seconds`.
pub async fn status_until(http: &Http, seconds: u64, wanted: impl Fn(&Value) -> bool) -> CheckResult {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let mut last = Value::Null;
    while tokio::time::Instant::now() < deadline {
        last = http.get("/v1/status").send().await?.json()?;
        if wanted(&last) {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    expect(false, "the status to change in time", format!("last status: {last}"))
}

/// `GET /mcp` once no server is starting (every one ready, stopped or failed), waiting at most
/// `seconds`; a failure when some server is still starting then, or `/mcp` does not answer.
pub async fn settled_mcp_status(http: &Http, seconds: u64) -> Result<Value, CheckError> {
    let settled = tokio::time::timeout(std::time::Duration::from_secs(seconds), async {
        loop {
            let status = http.get("/mcp").send().await?.json()?;
            let servers = status["servers"].as_array().cloned().unwrap_or_default();
            if servers.iter().all(|s| s["status"] != "starting") {
                return Ok::<Value, CheckError>(status);
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    })
    .await;
    match settled {
        Ok(status) => status,
        Err(_) => Err(CheckError::Fail {
            expected: format!("every MCP server ready or failed within {seconds} s"),
            actual: "GET /mcp still showed a server starting, or did not answer".into(),
        }),
    }
}

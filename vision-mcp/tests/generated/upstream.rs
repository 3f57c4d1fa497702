//! Generated upstream failures, held to the README's rules: every failure is one line saying what
//! happened, never the upstream body, the key or the address; it is sent once (no retries, whatever
//! the status or a `Retry-After` says) and counts against the budget. The stand-in for OpenAI is a
//! raw TCP server here, so it can misbehave below HTTP: a body cut short, a body that trickles past the
//! timeout, no answer at all, a connection closed at once, an answer over 1 MiB. Each run draws the
//! failures from a seed (`VISION_GEN_SEED`, else the clock; printed, so a failure replays), after
//! every kind once.

use super::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use support::{Draw, KEY, Setup, png, seed};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vision_mcp::tool::Analyzer;

/// The upstream timeout the analyzer is given here (production: 45 s).
const TIMEOUT: Duration = Duration::from_millis(800);
/// What an upstream body says: it must never reach the client.
const CANARY: &str = "UPSTREAM-CANARY";
/// Failures drawn a run, besides every kind once.
const DRAWN: usize = 10;

/// How the stand-in answers.
#[derive(Debug, Clone, Copy)]
enum Failure {
    /// An error status, with a body and `Retry-After: 0`.
    Status(u16),
    /// 200 with a body that is not JSON.
    NotJson,
    /// 200 with JSON that has no `output`.
    NoOutput,
    /// 200 whose `Content-Length` promises more than comes before the close.
    CutShort,
    /// 200 whose body comes a byte at a time, slower than the timeout allows.
    Trickle,
    /// The request is read and never answered.
    Silent,
    /// The connection is closed as soon as the request is read.
    Closed,
    /// 200 with a JSON answer over 1 MiB, its length said (`sized`) or chunked.
    Huge { sized: bool },
}

const STATUSES: [u16; 13] = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504];

impl Failure {
    /// The words the README gives this failure.
    fn words(self) -> String {
        match self {
            Failure::Status(code) => format!("refused the request (HTTP {code}"),
            Failure::NotJson | Failure::NoOutput | Failure::CutShort | Failure::Huge { .. } => {
                "could not be read".into()
            }
            Failure::Trickle | Failure::Silent => "did not answer in time".into(),
            Failure::Closed => "could not be reached".into(),
        }
    }

    fn every_kind() -> Vec<Failure> {
        let mut all: Vec<Failure> = STATUSES.iter().map(|&code| Failure::Status(code)).collect();
        all.extend([
            Failure::NotJson,
            Failure::NoOutput,
            Failure::CutShort,
            Failure::Trickle,
            Failure::Silent,
            Failure::Closed,
            Failure::Huge { sized: true },
            Failure::Huge { sized: false },
        ]);
        all
    }
}

/// Reads one request (headers and a `Content-Length` body).
async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<()> {
    let mut seen = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let n = stream.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buffer[..n]);
        if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if seen.len() >= end + 4 + length {
                return Some(());
            }
        }
    }
}

/// Answers every connection as `failure` says; counts the requests.
async fn stand_in(failure: Failure) -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let counted = Arc::clone(&counted);
            tokio::spawn(async move {
                if read_request(&mut stream).await.is_none() {
                    return;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                answer(&mut stream, failure).await;
            });
        }
    });
    (base, requests, task)
}

async fn answer(stream: &mut tokio::net::TcpStream, failure: Failure) {
    let json_head = |length: usize| {
        format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n")
    };
    let _ = match failure {
        Failure::Status(code) => {
            let body = format!("{{\"error\":{{\"message\":\"{CANARY} {KEY}\"}}}}");
            let head = format!(
                "HTTP/1.1 {code} Whatever\r\ncontent-type: application/json\r\nretry-after: 0\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            stream.write_all(format!("{head}{body}").as_bytes()).await
        }
        Failure::NotJson => {
            let body = format!("<html>{CANARY}</html>");
            stream.write_all(format!("{}{body}", json_head(body.len())).as_bytes()).await
        }
        Failure::NoOutput => {
            let body = format!("{{\"status\":\"completed\",\"note\":\"{CANARY}\"}}");
            stream.write_all(format!("{}{body}", json_head(body.len())).as_bytes()).await
        }
        Failure::CutShort => {
            let body = format!("{{\"status\":\"completed\",\"output\":[{{\"type\":\"message\",\"content\":\"{CANARY}");
            stream.write_all(format!("{}{body}", json_head(body.len() + 500)).as_bytes()).await
        }
        Failure::Trickle => {
            let body = support::answer("- slow", "completed").to_string();
            let _ = stream.write_all(json_head(body.len()).as_bytes()).await;
            for byte in body.bytes() {
                if stream.write_all(&[byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok(())
        }
        Failure::Silent => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(())
        }
        Failure::Closed => Ok(()),
        Failure::Huge { sized } => {
            let text = "x".repeat((1 << 20) + 10);
            let body = support::answer(&text, "completed").to_string();
            if sized {
                stream.write_all(format!("{}{body}", json_head(body.len())).as_bytes()).await
            } else {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                let chunked = format!("{head}{:x}\r\n{body}\r\n0\r\n\r\n", body.len());
                stream.write_all(chunked.as_bytes()).await
            }
        }
    };
    let _ = stream.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_upstream_failure_is_one_clean_line_sent_once_and_counted() {
    let seed = seed();
    println!("VISION_GEN_SEED={seed:#x}");
    let mut draw = Draw(seed);
    let mut next = |below: usize| draw.next(below);
    let kinds = Failure::every_kind();
    let mut failures = kinds.clone();
    failures.extend((0..DRAWN).map(|_| kinds[next(kinds.len())]));
    let setup = Setup::new(1000, 1000);
    setup.write("a.png", &png(20, 20));
    let mut wrong = Vec::new();
    for failure in failures {
        let (base, requests, task) = stand_in(failure).await;
        let analyzer = Analyzer::with_timeout(&setup.settings, &base, TIMEOUT).expect("analyzer");
        let before = analyzer.budget().used_today().unwrap_or(0);
        let started = std::time::Instant::now();
        let got = analyzer.analyze("a.png", support::PROMPT, None).await;
        let took = started.elapsed();
        // A late retry would still be counted: give it the time one would take.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (sent, counted) = (requests.load(Ordering::SeqCst), analyzer.budget().used_today().unwrap_or(0) - before);
        task.abort();
        let text = match &got {
            Ok(text) => {
                wrong.push(format!("{failure:?}: answered {:?}", text.chars().take(80).collect::<String>()));
                continue;
            }
            Err(error) => error.to_string(),
        };
        let port = base.rsplit(':').next().unwrap_or_default();
        if !text.contains(&failure.words()) || !text.contains("still counts against the budget") {
            wrong.push(format!("{failure:?}: {text:?}, not the README's words ({:?})", failure.words()));
        }
        if text.contains(CANARY) || text.contains(KEY) || text.contains(port) || text.lines().count() != 1 {
            wrong.push(format!(
                "{failure:?}: {text:?} shows the upstream body, the key or the address, or is not one line"
            ));
        }
        if (sent, counted) != (1, 1) {
            wrong.push(format!("{failure:?}: {sent} requests upstream and {counted} calls counted, not one each"));
        }
        if took > TIMEOUT * 2 {
            wrong.push(format!("{failure:?}: the call took {took:?}, past the {TIMEOUT:?} timeout"));
        }
    }
    assert!(wrong.is_empty(), "seed {seed:#x} (VISION_GEN_SEED replays it):\n{}", wrong.join("\n"));
}

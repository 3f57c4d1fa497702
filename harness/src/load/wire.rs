//! The load generator's own HTTP/1.1 connections for picture fetches, as wrk keeps them: each worker
//! owns one kept-alive connection and reads its answers itself — the head parsed in the connection's
//! buffer (httparse), the body handed to the caller as slices of that buffer as it is read (a length,
//! chunks, or up to the close), no task or channel between the socket and the check, no copy. The
//! request's bytes are built once per run but for the target.
//!
//! Every resource is bounded: the buffer (64 KiB, which a head must fit with at most 64 fields), a
//! chunk's size and trailer lines (4 KiB, [`super::chunked`]); a body of any length streams through.
//! A connection idle longer than [`IDLE_REUSE`] is not used again (a server may close it after its
//! header timeout, SPEC 1.11). A kept connection the server closed meanwhile fails before any byte of
//! an answer: the request (a GET, nothing of it answered) is sent once more on a new connection.

use std::time::Instant;

use http::HeaderValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::chunked::Chunked;
use crate::http::{HttpError, IDLE_REUSE};

/// The connection's read buffer; an answer's head must fit in it.
const BUFFER: usize = 64 << 10;
/// The most header fields an answer's head may have.
const MAX_FIELDS: usize = 64;

/// Where requests go and the bytes every request ends with (`Host`, `Authorization`).
#[derive(Debug, Clone)]
pub struct Wire {
    authority: String,
    tail: Vec<u8>,
}

/// A request target (`/tool-media/<name>`), checked once: visible ASCII, starting with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target(Box<str>);

/// One worker's connection (or none yet) and its request buffer.
#[derive(Default)]
pub struct Conn {
    live: Option<Live>,
    request: Vec<u8>,
}

struct Live {
    stream: TcpStream,
    buf: Box<[u8]>,
    /// The unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    idle: Instant,
}

/// How an answer's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(u64),
    Chunked,
    Close,
}

/// What an answer's head says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    status: u16,
    framing: Framing,
    keep_alive: bool,
}

/// A failure before any byte of an answer (the request may be sent again), or any other.
enum Failure {
    NoAnswer(String),
    Http(HttpError),
}

impl From<HttpError> for Failure {
    fn from(error: HttpError) -> Self {
        Failure::Http(error)
    }
}

impl Failure {
    fn error(self) -> HttpError {
        match self {
            Failure::NoAnswer(why) => HttpError::Connect(why),
            Failure::Http(error) => error,
        }
    }
}

impl Wire {
    /// For the server at `base` (`http://host:port`), sending `Authorization: Bearer key` when given.
    pub fn new(base: &str, key: Option<&str>) -> Result<Self, HttpError> {
        let uri: http::Uri = base.parse().map_err(|_| HttpError::Build(format!("{base} is not a URL")))?;
        if uri.scheme_str() != Some("http") {
            return Err(HttpError::Build(format!("{base}: pictures are fetched over http:// only")));
        }
        let authority = uri.authority().ok_or_else(|| HttpError::Build(format!("{base} names no host")))?;
        let port = authority.port_u16().unwrap_or(80);
        let host = HeaderValue::from_str(authority.as_str()).map_err(|e| HttpError::Build(e.to_string()))?;
        let mut tail = [b" HTTP/1.1\r\nHost: ", host.as_bytes(), b"\r\n"].concat();
        if let Some(key) = key {
            let value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|e| HttpError::Build(e.to_string()))?;
            tail.extend_from_slice(b"Authorization: ");
            tail.extend_from_slice(value.as_bytes());
            tail.extend_from_slice(b"\r\n");
        }
        tail.extend_from_slice(b"\r\n");
        Ok(Wire { authority: format!("{}:{port}", authority.host()), tail })
    }

    /// The target of a request (`/tool-media/<name>`), checked once.
    pub fn path(target: &str) -> Result<Target, HttpError> {
        let visible = target.bytes().all(|b| b.is_ascii_graphic());
        (target.starts_with('/') && visible)
            .then(|| Target(target.into()))
            .ok_or_else(|| HttpError::Build(format!("{target} is not a request target")))
    }

    async fn connect(&self) -> Result<Live, HttpError> {
        let stream =
            TcpStream::connect(self.authority.as_str()).await.map_err(|e| HttpError::Connect(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        Ok(Live { stream, buf: vec![0; BUFFER].into_boxed_slice(), start: 0, end: 0, idle: Instant::now() })
    }

    /// `GET target` on `conn` (connecting first when it has no usable connection): every run of the
    /// answer's body goes to `chunk` with the answer's status, as it is read. Returns the status. The
    /// connection is kept for the next request when the answer allows it and its body ended.
    pub async fn fetch(
        &self,
        conn: &mut Conn,
        target: &Target,
        mut chunk: impl FnMut(u16, &[u8]),
    ) -> Result<u16, HttpError> {
        conn.request.clear();
        conn.request.extend_from_slice(b"GET ");
        conn.request.extend_from_slice(target.0.as_bytes());
        conn.request.extend_from_slice(&self.tail);
        let kept = conn.live.take().filter(|live| live.idle.elapsed() < IDLE_REUSE);
        let reused = kept.is_some();
        let mut live = match kept {
            Some(live) => live,
            None => self.connect().await?,
        };
        let head = match live.ask(&conn.request).await {
            Ok(head) => head,
            Err(Failure::NoAnswer(_)) if reused => {
                live = self.connect().await?;
                live.ask(&conn.request).await.map_err(Failure::error)?
            }
            Err(failure) => return Err(failure.error()),
        };
        live.body(head, &mut chunk).await?;
        if head.keep_alive && head.framing != Framing::Close {
            live.idle = Instant::now();
            conn.live = Some(live);
        }
        Ok(head.status)
    }
}

impl Live {
    /// Sends `request` and reads the answer's head (past any 1xx interim answer).
    async fn ask(&mut self, request: &[u8]) -> Result<Head, Failure> {
        self.stream.write_all(request).await.map_err(|e| Failure::NoAnswer(e.to_string()))?;
        let mut answered = false;
        loop {
            if self.end > self.start {
                answered = true;
                let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
                let mut response = httparse::Response::new(&mut fields);
                let parsed = response
                    .parse(&self.buf[self.start..self.end])
                    .map_err(|e| HttpError::Connect(format!("an answer's head that is not HTTP/1.1: {e}")))?;
                if let httparse::Status::Complete(len) = parsed {
                    let head = read_head(&response)?;
                    self.start += len;
                    if (100..200).contains(&head.status) && head.status != 101 {
                        continue;
                    }
                    return Ok(head);
                }
            }
            if self.start == 0 && self.end == self.buf.len() {
                return Err(HttpError::Connect(format!("an answer's head over {} KiB", BUFFER >> 10)).into());
            }
            match self.fill().await {
                Ok(0) if !answered => return Err(Failure::NoAnswer("closed".into())),
                Err(e) if !answered => return Err(Failure::NoAnswer(e.to_string())),
                Ok(0) => return Err(HttpError::Connect("closed in the answer's head".into()).into()),
                Ok(_) => {}
                Err(e) => return Err(HttpError::Connect(e.to_string()).into()),
            }
        }
    }

    /// Reads more bytes after the unread ones (moved to the buffer's start first when they do not sit
    /// there); how many were read (0: the server closed the connection).
    async fn fill(&mut self) -> std::io::Result<usize> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        let read = self.stream.read(&mut self.buf[self.end..]).await?;
        self.end += read;
        Ok(read)
    }

    /// Hands the body on to `chunk`, slice by slice, to its end.
    async fn body(&mut self, head: Head, chunk: &mut impl FnMut(u16, &[u8])) -> Result<(), HttpError> {
        let status = head.status;
        let cut = |e: Option<std::io::Error>| {
            HttpError::Body(e.map_or_else(|| "the connection closed before the body's end".into(), |e| e.to_string()))
        };
        match head.framing {
            Framing::Length(mut left) => loop {
                let take = (self.end - self.start).min(usize::try_from(left).unwrap_or(usize::MAX));
                if take > 0 {
                    chunk(status, &self.buf[self.start..self.start + take]);
                    self.start += take;
                    left -= take as u64;
                }
                if left == 0 {
                    return Ok(());
                }
                match self.fill().await {
                    Ok(0) => return Err(cut(None)),
                    Ok(_) => {}
                    Err(e) => return Err(cut(Some(e))),
                }
            },
            Framing::Chunked => {
                let mut chunked = Chunked::default();
                loop {
                    let used = chunked
                        .decode(&self.buf[self.start..self.end], &mut |data| chunk(status, data))
                        .map_err(|e| HttpError::Body(e.to_string()))?;
                    self.start += used;
                    if chunked.done() {
                        return Ok(());
                    }
                    match self.fill().await {
                        Ok(0) => return Err(cut(None)),
                        Ok(_) => {}
                        Err(e) => return Err(cut(Some(e))),
                    }
                }
            }
            Framing::Close => loop {
                if self.end > self.start {
                    chunk(status, &self.buf[self.start..self.end]);
                    self.start = self.end;
                }
                match self.fill().await {
                    Ok(0) => return Ok(()),
                    Ok(_) => {}
                    Err(e) => return Err(cut(Some(e))),
                }
            },
        }
    }
}

/// The status, framing and persistence an answer's head gives (RFC 9112 §6.3, §9.3): chunked when
/// the last transfer coding is `chunked`, to the close under any other coding, else `Content-Length`
/// (every value the same number), else none for 1xx, 204 and 304, else to the close; kept alive in
/// HTTP/1.1 unless `Connection: close`, in HTTP/1.0 only with `Connection: keep-alive`.
fn read_head(response: &httparse::Response<'_, '_>) -> Result<Head, HttpError> {
    let status = response.code.unwrap_or(0);
    let mut length: Option<u64> = None;
    let mut coding: Option<bool> = None;
    let (mut close, mut keep) = (false, false);
    for field in response.headers.iter() {
        let value = std::str::from_utf8(field.value).unwrap_or("");
        let tokens = || value.split(',').map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty());
        if field.name.eq_ignore_ascii_case("transfer-encoding") {
            coding = tokens().next_back().map(|last| last == "chunked").or(coding);
        } else if field.name.eq_ignore_ascii_case("content-length") {
            let bad = || HttpError::Connect(format!("a Content-Length of {value:?}"));
            if tokens().next().is_none() {
                return Err(bad());
            }
            for token in tokens() {
                let n = (token.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| token.parse::<u64>().ok())
                    .flatten()
                    .filter(|n| length.is_none_or(|l| l == *n))
                    .ok_or_else(bad)?;
                length = Some(n);
            }
        } else if field.name.eq_ignore_ascii_case("connection") {
            close |= tokens().any(|t| t == "close");
            keep |= tokens().any(|t| t == "keep-alive");
        }
    }
    let framing = match (coding, length) {
        (Some(true), _) => Framing::Chunked,
        (Some(false), _) => Framing::Close,
        (None, Some(n)) => Framing::Length(n),
        (None, None) if (100..200).contains(&status) || status == 204 || status == 304 => Framing::Length(0),
        (None, None) => Framing::Close,
    };
    let keep_alive = match response.version {
        Some(1) => !close,
        _ => keep && !close,
    };
    Ok(Head { status, framing, keep_alive })
}

#[cfg(test)]
mod tests;

//! The recording proxy's other framing of an event stream (SPEC 13.16): the same events, framed as
//! the SSE standard also allows and as proxies and other servers do frame them — CR LF line ends, no
//! space after `data:` on every other line, an `id:` before each data line, a comment and an
//! `event:` line between events, a `retry:` first — and delivered in pieces: a character of two to
//! four bytes cut after its first byte, and a CR cut from its LF, each piece its own network write a
//! little after the one before (so the browser reads them apart). After the server's first event it
//! adds three a page must skip: a `call` and a `result` for a call never started, and an event of a
//! kind no server sends yet. A page must show what it shows for the server's own framing. And
//! [`break_after`]: a stream that is lost half-way (SPEC 13.6).

use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};

/// How long a piece waits after the one before it when a write is cut: long enough for the browser
/// to read the first piece on its own.
const PIECE_GAP: Duration = Duration::from_millis(15);

/// What the stream starts with, before the server's first line.
const PREAMBLE: &str = "retry: 3000\r\n: framed again by mediacheck\r\n";

/// The events added after the server's first (each a `data:` line and its blank line): a call and a
/// result for an id no `start` announced, and an event kind of a newer server.
const UNEXPECTED: [&str; 3] = [
    r#"{"choices":[{"index":0,"delta":{},"finish_reason":null}],"strata_mcp":{"event":"call","id":"mediacheck-never-started","name":"fake__echo","server":"fake","tool":"echo","arguments":{},"round":1}}"#,
    r#"{"choices":[{"index":0,"delta":{},"finish_reason":null}],"strata_mcp":{"event":"result","id":"mediacheck-never-started","ok":true,"text":"UNEXPECTED-RESULT","chars":17,"truncated":false,"ms":1}}"#,
    r#"{"choices":[{"index":0,"delta":{},"finish_reason":null}],"strata_mcp":{"event":"progress","id":"mediacheck-never-started","max_rounds":7}}"#,
];

/// The upstream body `upstream`, framed again; ends where it ends (an upstream error ends it early).
pub fn recut<S, E>(upstream: S) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Send + 'static,
{
    let (mut sender, receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        let mut framer = Framer::default();
        let mut upstream = std::pin::pin!(upstream);
        if sender.send(Ok(Bytes::from_static(PREAMBLE.as_bytes()))).await.is_err() {
            return;
        }
        while let Some(Ok(bytes)) = upstream.next().await {
            for line in framer.push(&bytes) {
                for (i, piece) in pieces(&line).into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(PIECE_GAP).await;
                    }
                    if sender.send(Ok(Bytes::from(piece))).await.is_err() {
                        return;
                    }
                }
            }
        }
        let rest = framer.finish();
        if !rest.is_empty() {
            let _ = sender.send(Ok(Bytes::from(rest))).await;
        }
    });
    receiver
}

/// The upstream body as it comes until a piece holding `marker` has passed, then `after` more of it
/// (keep-alives and all), then an error, so the connection ends without the stream's end.
pub fn break_after<S, E>(
    upstream: S,
    marker: &'static str,
    after: Duration,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Send + 'static,
{
    let (mut sender, receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        let mut upstream = std::pin::pin!(upstream);
        let mut seen = Vec::new();
        let mut deadline = None;
        loop {
            let next = match deadline {
                Some(at) => match tokio::time::timeout_at(at, upstream.next()).await {
                    Ok(next) => next,
                    Err(_) => break,
                },
                None => upstream.next().await,
            };
            let Some(Ok(bytes)) = next else { break };
            if deadline.is_none() {
                seen.extend_from_slice(&bytes);
                if seen.windows(marker.len()).any(|w| w == marker.as_bytes()) {
                    deadline = Some(tokio::time::Instant::now() + after);
                }
            }
            if sender.send(Ok(bytes)).await.is_err() {
                return;
            }
        }
        let _ = sender.send(Err(std::io::Error::other("the stream is broken here on purpose"))).await;
    });
    receiver
}

/// Cuts whole lines out of the upstream bytes and frames each again.
#[derive(Default)]
struct Framer {
    pending: Vec<u8>,
    data_lines: usize,
    added_unexpected: bool,
}

impl Framer {
    /// The framed lines completed by `bytes` (each with its CR LF, and what goes before it).
    fn push(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.pending.drain(..=end).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            out.push(self.frame(&line));
        }
        out
    }

    /// One line of the server's stream (without its line end) as this framing writes it.
    fn frame(&mut self, line: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        if line.is_empty() {
            // The end of an event (after the first, the unexpected ones), then a comment and an event
            // type for the next one.
            out.extend_from_slice(b"\r\n");
            if self.data_lines == 1 && !self.added_unexpected {
                self.added_unexpected = true;
                for event in UNEXPECTED {
                    out.extend_from_slice(format!("data: {event}\r\n\r\n").as_bytes());
                }
            }
            out.extend_from_slice(b": re-framed\r\nevent: message\r\n");
            return out;
        }
        if let Some(data) = line.strip_prefix(b"data:") {
            self.data_lines += 1;
            // An id whose text after its fifth character is a number: a page that takes any field
            // for data reads a chunk that is not one.
            out.extend_from_slice(format!("id: 9{}\r\n", self.data_lines).as_bytes());
            let value = data.strip_prefix(b" ").unwrap_or(data);
            out.extend_from_slice(if self.data_lines.is_multiple_of(2) { b"data:" } else { b"data: " });
            out.extend_from_slice(value);
        } else {
            out.extend_from_slice(line);
        }
        out.extend_from_slice(b"\r\n");
        out
    }

    /// What is left when the upstream ends (a last line without its line end), as it came.
    fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

/// `line` cut after the first byte of every character of two to four bytes and between its final CR
/// and LF.
fn pieces(line: &[u8]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = line.iter().enumerate().filter(|(_, b)| **b >= 0xC0).map(|(i, _)| i + 1).collect();
    if line.ends_with(b"\r\n") {
        cuts.push(line.len() - 1);
    }
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts {
        out.push(line[start..cut].to_vec());
        start = cut;
    }
    out.push(line[start..].to_vec());
    out
}

#[cfg(test)]
mod tests {
    use super::{Framer, pieces};

    #[test]
    fn every_line_is_framed_again_and_data_keeps_its_value() {
        let mut framer = Framer::default();
        let mut lines = framer.push(b"data: {\"a\":1}\n\ndata: [DO");
        lines.extend(framer.push(b"NE]\r\n: keep-alive\n"));
        let text: Vec<String> = lines.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect();
        assert_eq!(
            text,
            [
                "id: 91\r\ndata: {\"a\":1}\r\n",
                &format!(
                    "\r\n{}: re-framed\r\nevent: message\r\n",
                    super::UNEXPECTED.iter().map(|e| format!("data: {e}\r\n\r\n")).collect::<String>()
                ),
                "id: 92\r\ndata:[DONE]\r\n",
                ": keep-alive\r\n"
            ]
        );
        assert!(framer.finish().is_empty());
    }

    #[test]
    fn characters_are_cut_after_their_first_byte_and_cr_from_lf() {
        let line = "aé日😀\r\n".as_bytes();
        let cut = pieces(line);
        assert_eq!(cut.concat(), line, "the pieces add up to the line");
        assert_eq!(
            cut.iter().map(Vec::len).collect::<Vec<_>>(),
            [2, 2, 3, 4, 1],
            "a and é's first byte; é's second and 日's first; 日's other two and 😀's first; 😀's other three and CR; LF"
        );
        assert_eq!(pieces(b"ascii"), vec![b"ascii".to_vec()]);
    }
}

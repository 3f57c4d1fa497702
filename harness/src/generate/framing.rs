//! Protocol options (4.10c, 4.10f, 4.10i–k): the same chat request written every way HTTP/1.x lets a
//! client write it — `Content-Length` or chunked (one chunk, or 7-byte chunks, the first 16 with an extension),
//! `Expect: 100-continue` in two cases or none, HTTP/1.1 or HTTP/1.0, header names lower, Title or UPPER
//! case, the key as `Authorization: Bearer` or `x-api-key`, a `GET /health` pipelined after it or not —
//! at three sizes around `max_body_mib` 1 (small, exactly 1 MiB, one byte over). Every pair of those
//! axes' values is met on every run ([`super::covering::pairwise`]); draws follow. The model, from SPEC
//! alone: up to the bound the answer is 200 with the default script's content, past it 413; no
//! `100 Continue` before a 413 a declared length earned under `Expect` (4.10i); a pipelined request is
//! answered after, unless the first answer said `Connection: close` (4.10k).

use proptest::prelude::*;

/// `max_body_mib` of the server the requests go to.
pub const MAX_BODY_MIB: usize = 1;
/// The content of the default script's answer (4.9e, less its reasoning and the whitespace after it).
pub const CONTENT: &str = "Hello from the mock engine.";

/// How many values each axis takes, in [`Framing`]'s order.
pub const LEVELS: [usize; 7] = [2, 3, 3, 3, 3, 2, 2];

/// One request: an index into each axis's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// HTTP/1.1, HTTP/1.0 (whose body is always length-framed: 1.0 has no chunked coding).
    pub version: usize,
    /// `Content-Length`, chunked in one chunk, chunked in 7-byte chunks (the first 16 with `;x=1`).
    pub framing: usize,
    /// No `Expect`, `Expect: 100-continue`, `Expect: 100-Continue`.
    pub expect: usize,
    /// The body: small, exactly `max_body_mib` MiB, one byte over.
    pub size: usize,
    /// Header names: lower case, Title-Case, UPPER CASE.
    pub names: usize,
    /// The key: `Authorization: Bearer`, `x-api-key`.
    pub key: usize,
    /// A `GET /health` written right after the body on the same connection, or nothing.
    pub pipelined: usize,
}

impl Framing {
    /// The request a covering row (or a draw) of [`LEVELS`] names.
    pub fn from_row(row: &[usize]) -> Self {
        let at = |i: usize| row.get(i).copied().unwrap_or(0) % LEVELS[i];
        Framing {
            version: at(0),
            framing: at(1),
            expect: at(2),
            size: at(3),
            names: at(4),
            key: at(5),
            pipelined: at(6),
        }
    }

    /// Whether the body is chunked (never over HTTP/1.0).
    pub fn chunked(&self) -> bool {
        self.version == 0 && self.framing != 0
    }

    /// Whether a pipelined request is written (HTTP/1.1 only: 1.0 closes after its answer).
    pub fn pipelines(&self) -> bool {
        self.version == 0 && self.pipelined == 1
    }

    /// The body's length in bytes.
    pub fn body_len(&self) -> usize {
        match self.size {
            0 => body(0).len(),
            1 => MAX_BODY_MIB << 20,
            _ => (MAX_BODY_MIB << 20) + 1,
        }
    }

    /// Whether the body is past `max_body_mib` (4.10c).
    pub fn over(&self) -> bool {
        self.body_len() > MAX_BODY_MIB << 20
    }

    /// A header name as this request writes it.
    pub fn name(&self, lower: &str) -> String {
        match self.names {
            1 => lower
                .split('-')
                .map(|part| {
                    let mut chars = part.chars();
                    chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join("-"),
            2 => lower.to_ascii_uppercase(),
            _ => lower.to_string(),
        }
    }

    /// The `Expect` value, if any.
    pub fn expect_value(&self) -> Option<&'static str> {
        [None, Some("100-continue"), Some("100-Continue")][self.expect]
    }
}

/// A chat request's body padded with an unknown field (4.10h) to `len` bytes (0: no padding).
pub fn body(len: usize) -> Vec<u8> {
    body_of(len, None, false)
}

/// [`body`] naming `model` and asking for a stream or not.
pub fn body_of(len: usize, model: Option<&str>, stream: bool) -> Vec<u8> {
    let model = model.map(|m| format!("\"model\":\"{m}\",")).unwrap_or_default();
    let messages = format!("{{{model}\"messages\":[{{\"role\":\"user\",\"content\":\"hi\"}}],\"stream\":{stream}");
    if len == 0 {
        return format!("{messages}}}").into_bytes();
    }
    let mut text = format!("{messages},\"pad\":\"").into_bytes();
    text.resize(len.saturating_sub(2).max(text.len()), b'x');
    text.extend_from_slice(b"\"}");
    text
}

/// One answer as the client read it off the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// Its header names (lower case) and values.
    pub headers: Vec<(String, String)>,
    /// Its body.
    pub body: Vec<u8>,
}

impl Answer {
    /// Whether it said `Connection: close`.
    pub fn closes(&self) -> bool {
        self.headers.iter().any(|(n, v)| n == "connection" && v.to_ascii_lowercase().contains("close"))
    }
}

/// What the model says of the answers read, in order (interim ones included).
pub fn judge(request: &Framing, answers: &[Answer]) -> Result<(), String> {
    let finals: Vec<&Answer> = answers.iter().filter(|a| a.status >= 200).collect();
    let Some(first) = finals.first() else {
        return Err(format!("no final answer (read: {:?})", answers.iter().map(|a| a.status).collect::<Vec<_>>()));
    };
    let statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
    if request.over() {
        if first.status != 413 {
            return Err(format!(
                "{} for a body of {} bytes, past max_body_mib 1 (4.10c, 4.10j: 413)",
                first.status,
                request.body_len()
            ));
        }
        let continued = answers.iter().take_while(|a| a.status < 200).any(|a| a.status == 100);
        if request.expect_value().is_some() && !request.chunked() && continued {
            return Err(format!(
                "answers {statuses:?}: a 100 Continue before the 413 a declared length earned (4.10i)"
            ));
        }
    } else {
        if first.status != 200 {
            let body = String::from_utf8_lossy(&first.body);
            return Err(format!(
                "{} ({body:.200}) for a body of {} bytes, within max_body_mib 1 (4.10j: 200)",
                first.status,
                request.body_len()
            ));
        }
        let answer: serde_json::Value =
            serde_json::from_slice(&first.body).map_err(|e| format!("the answer is not JSON: {e}"))?;
        let content = &answer["choices"][0]["message"]["content"];
        if content != CONTENT {
            return Err(format!("content {content} (4.10j: the body read alike: {CONTENT:?})"));
        }
    }
    // 4.10k holds for a request whose answer leaves the connection to the next one: a 200 that did not
    // say `Connection: close`. After a refusal (a 413 with the body unread, under `Expect` or not) the
    // connection's next bytes are the server's to read or drop, and SPEC fixes nothing there.
    if request.pipelines() && first.status == 200 && !first.closes() {
        match finals.get(1) {
            Some(second) if second.status == 200 && second.body.starts_with(b"{\"status\":\"ok\"") => {}
            Some(second) => {
                return Err(format!(
                    "the pipelined GET /health answered {} (4.10k: 200, /health's body)",
                    second.status
                ));
            }
            None => {
                return Err(format!(
                    "answers {statuses:?}: the pipelined GET /health got no answer, though the first did not say Connection: close (4.10k)"
                ));
            }
        }
    }
    Ok(())
}

/// Every request, drawn: each axis's value uniformly.
pub fn requests() -> impl Strategy<Value = Framing> {
    proptest::collection::vec(0..3usize, LEVELS.len()).prop_map(|row| Framing::from_row(&row))
}

/// The covering requests: every pair of two axes' values in at least one, then each request whose
/// condition joins three axes (4.10i: `Expect`, in either case, on a length-framed HTTP/1.1 body past
/// the bound), which pairs alone do not promise.
pub fn covering() -> Vec<Framing> {
    let mut rows: Vec<Framing> = super::covering::pairwise(&LEVELS).iter().map(|row| Framing::from_row(row)).collect();
    for expect in 1..=2 {
        rows.push(Framing { version: 0, framing: 0, expect, size: 2, names: expect, key: expect - 1, pipelined: 0 });
    }
    rows
}

/// The request in a line.
pub fn describe(request: &Framing) -> String {
    format!(
        "HTTP/1.{}, {}, Expect {:?}, body {} bytes, header names {}, key as {}{}",
        if request.version == 0 { 1 } else { 0 },
        ["Content-Length", "chunked (one chunk)", "chunked (7-byte chunks, the first 16 with ;x=1)"]
            [if request.chunked() { request.framing } else { 0 }],
        request.expect_value(),
        request.body_len(),
        ["lower case", "Title-Case", "UPPER CASE"][request.names],
        ["Authorization: Bearer", "x-api-key"][request.key],
        if request.pipelines() { ", GET /health pipelined after it" } else { "" },
    )
}

/// The variants the case is named against.
pub const VARIANTS: &[&str] = &[
    "expect-continue-before-413",
    "http10-refused",
    "chunked-bodies-refused",
    "chunked-bodies-unbounded",
    "body-limit-off-by-one",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bodies_have_their_sizes_and_are_json() {
        for size in 0..3 {
            let request = Framing { size, ..Framing::from_row(&[0; 7]) };
            let bytes = if size == 0 { body(0) } else { body(request.body_len()) };
            assert_eq!(bytes.len(), request.body_len());
            assert!(serde_json::from_slice::<serde_json::Value>(&bytes).is_ok());
        }
        assert!(!Framing { size: 1, ..Framing::from_row(&[0; 7]) }.over());
    }

    #[test]
    fn every_named_variant_is_met_by_the_covering_requests() {
        let requests = covering();
        assert!(super::super::covering::pairs_missing(&LEVELS, &super::super::covering::pairwise(&LEVELS)).is_empty());
        type Need = (&'static str, fn(&Framing) -> bool);
        let needs: [Need; 5] = [
            ("expect-continue-before-413", |r| r.over() && r.expect != 0 && r.version == 0 && r.framing == 0),
            ("http10-refused", |r| r.version == 1),
            ("chunked-bodies-refused", |r| r.chunked() && !r.over()),
            ("chunked-bodies-unbounded", |r| r.chunked() && r.over()),
            ("body-limit-off-by-one", |r| r.size == 1),
        ];
        for (variant, need) in needs {
            assert!(requests.iter().any(need), "no covering request meets {variant}");
        }
    }

    #[test]
    fn the_judge_wants_the_413_alone_under_expect() {
        let request = Framing { size: 2, expect: 1, ..Framing::from_row(&[0; 7]) };
        let answer = |status| Answer { status, headers: vec![], body: vec![] };
        assert!(judge(&request, &[answer(413)]).is_ok());
        assert!(judge(&request, &[answer(100), answer(413)]).expect_err("a 100 first").contains("4.10i"));
        assert_eq!(Framing { names: 1, ..request }.name("content-length"), "Content-Length");
    }
}

//! Generated refusals from several clients, against the running binary over HTTP, held to the README:
//! a foreign Host or Origin is 403 and a missing or wrong token 401 (`WWW-Authenticate: Bearer`), each
//! with its one fixed sentence naming what to change and nothing of the request; and the log has one
//! line per client address, reason and value — the first time only, a Host or Origin quoted, a token
//! never. Clients connect from four loopback addresses (127.0.0.2–5), so a log that forgets the client,
//! or keys its memory on the value alone, is seen. Each run draws the refusals from a seed
//! (`VISION_GEN_SEED`, else the clock; printed, so a failure replays).

use super::support;

use std::collections::{HashMap, HashSet};

use support::{Draw, Setup, TOKEN, http_log, seed, spawn_http};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Refusals drawn a run.
const DRAWN: usize = 36;
const CLIENTS: [[u8; 4]; 4] = [[127, 0, 0, 2], [127, 0, 0, 3], [127, 0, 0, 4], [127, 0, 0, 5]];
const HOSTS: [&str; 4] = ["evil.example:8000", "nas:8102", "localhost.evil.example", "192.168.1.99:8102"];
const ORIGINS: [&str; 3] = ["http://evil.example", "https://a.test:3000", "null"];

/// One refused request.
#[derive(Debug, Clone)]
enum Refused {
    Host(&'static str),
    Origin(&'static str),
    /// No `Authorization`, or a wrong token (`Some`, never to be logged).
    Token(Option<String>),
}

impl Refused {
    /// The status, and the body's sentence (README, "When something is refused").
    fn wanted(&self) -> (u16, &'static str) {
        match self {
            Refused::Host(_) => (403, vision_mcp::guard::HOST_REFUSED),
            Refused::Origin(_) => (403, vision_mcp::guard::ORIGIN_REFUSED),
            Refused::Token(_) => (401, vision_mcp::guard::TOKEN_REFUSED),
        }
    }

    /// What the log remembers it by: the reason and the value (a token's is none).
    fn key(&self) -> (&'static str, &'static str) {
        match self {
            Refused::Host(host) => ("Host", host),
            Refused::Origin(origin) => ("Origin", origin),
            Refused::Token(_) => ("token", ""),
        }
    }
}

/// Sends one request from `client` to the server at `port`; the status, the headers and the body.
async fn send(client: [u8; 4], port: u16, refused: &Refused) -> (u16, String, String) {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.bind((std::net::Ipv4Addr::from(client), 0).into()).expect("a loopback source address");
    let mut stream = socket.connect(([127, 0, 0, 1], port).into()).await.expect("connect");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let host = match refused {
        Refused::Host(host) => (*host).to_string(),
        _ => format!("127.0.0.1:{port}"),
    };
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    match refused {
        Refused::Origin(origin) => head += &format!("origin: {origin}\r\nauthorization: Bearer {TOKEN}\r\n"),
        Refused::Token(Some(token)) => head += &format!("authorization: Bearer {token}\r\n"),
        Refused::Token(None) => {}
        Refused::Host(_) => head += &format!("authorization: Bearer {TOKEN}\r\n"),
    }
    stream.write_all(format!("{head}\r\n{body}").as_bytes()).await.expect("sent");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer).await;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// The log without its colours.
fn plain(log: &str) -> String {
    let mut out = String::new();
    let mut chars = log.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[tokio::test]
async fn refusals_from_several_clients_are_answered_and_logged_once_each() {
    let seed = seed();
    println!("VISION_GEN_SEED={seed:#x}");
    let mut draw = Draw(seed);
    let mut next = |below: usize| draw.next(below);
    let setup = Setup::new(20, 3);
    let (_child, ready) = spawn_http(&setup).await;
    let port: u16 = ready.rsplit(':').next().and_then(|p| p.trim_end_matches("/mcp").parse().ok()).expect("a port");
    // Every client meets every reason at least once; then drawn ones repeat some.
    let mut sent: Vec<([u8; 4], Refused)> = Vec::new();
    for (at, client) in CLIENTS.iter().enumerate() {
        sent.push((*client, Refused::Host(HOSTS[at % HOSTS.len()])));
        sent.push((*client, Refused::Origin(ORIGINS[at % ORIGINS.len()])));
        sent.push((*client, Refused::Token(None)));
    }
    for _ in 0..DRAWN {
        let client = CLIENTS[next(CLIENTS.len())];
        let refused = match next(4) {
            0 => Refused::Host(HOSTS[next(HOSTS.len())]),
            1 => Refused::Origin(ORIGINS[next(ORIGINS.len())]),
            2 => Refused::Token(None),
            _ => Refused::Token(Some(format!("WRONG-TOKEN-{}", next(1000)))),
        };
        sent.push((client, refused));
    }
    let mut wrong = Vec::new();
    let mut wanted_lines: HashSet<(String, &str, &str)> = HashSet::new();
    for (client, refused) in &sent {
        let (status, head, body) = send(*client, port, refused).await;
        let (want_status, sentence) = refused.wanted();
        let body_ok = serde_json::from_str::<serde_json::Value>(&body).is_ok_and(|v| v["error"] == sentence);
        if status != want_status || !body_ok {
            wrong.push(format!("{refused:?} from {client:?}: {status} {body:?}, not {want_status} {sentence:?}"));
        }
        if want_status == 401 && !head.contains("www-authenticate: bearer") {
            wrong.push(format!("{refused:?}: a 401 without WWW-Authenticate: Bearer"));
        }
        let (reason, value) = refused.key();
        wanted_lines.insert((std::net::Ipv4Addr::from(*client).to_string(), reason, value));
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let log = plain(&std::fs::read_to_string(http_log(&setup)).unwrap_or_default());
    let refusals: Vec<&str> = log.lines().filter(|line| line.contains("refused a request")).collect();
    // Each line, read back: its client and what it refused.
    let mut seen: HashMap<(String, &str, &str), usize> = HashMap::new();
    for line in &refusals {
        let client = line.split_whitespace().find_map(|word| word.strip_prefix("client=")).unwrap_or("?").to_string();
        let what = if line.contains("without a valid token") {
            Some(("token", ""))
        } else {
            HOSTS
                .iter()
                .map(|h| ("Host", *h))
                .chain(ORIGINS.iter().map(|o| ("Origin", *o)))
                .find(|(reason, value)| line.contains(&format!("{reason} {value:?} is not allowed")))
        };
        match what {
            Some((reason, value)) => *seen.entry((client, reason, value)).or_default() += 1,
            None => wrong.push(format!("a refusal line naming nothing sent: {line}")),
        }
    }
    for key in &wanted_lines {
        match seen.get(key).copied().unwrap_or(0) {
            1 => {}
            n => wrong.push(format!("{key:?} logged {n} times, not once")),
        }
    }
    for key in seen.keys() {
        if !wanted_lines.contains(key) {
            wrong.push(format!("{key:?} logged, and no such refusal was sent"));
        }
    }
    if log.contains("WRONG-TOKEN") || log.contains(TOKEN) {
        wrong.push("a token reached the log".into());
    }
    assert!(wrong.is_empty(), "seed {seed:#x} (VISION_GEN_SEED replays it):\n{}\n\nthe log:\n{log}", wrong.join("\n"));
}

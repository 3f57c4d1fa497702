//! Tests of the load generator's own HTTP/1.1 client: heads and framings read by hand-written
//! answers from a real socket, cut into small writes; what is kept alive, what is sent again, what is
//! refused.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

#[test]
fn the_host_and_key_bytes_are_built_once_from_the_base() {
    let wire = Wire::new("http://127.0.0.1:8080", Some("k")).expect("wire");
    assert_eq!(wire.authority, "127.0.0.1:8080");
    assert_eq!(wire.tail, b" HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer k\r\n\r\n");
    let plain = Wire::new("http://localhost", None).expect("wire");
    assert_eq!(
        (plain.authority.as_str(), plain.tail.as_slice()),
        ("localhost:80", &b" HTTP/1.1\r\nHost: localhost\r\n\r\n"[..])
    );
    assert_eq!(Wire::new("http://[::1]:9/", None).expect("wire").authority, "[::1]:9");
    assert!(Wire::new("not a url", None).is_err());
    assert!(Wire::new("https://127.0.0.1:8443", None).is_err(), "no TLS: refused, not sent in plain text to port 80");
    assert!(Wire::new("http://127.0.0.1:1", Some("bad\nkey")).is_err());
}

#[test]
fn targets_are_visible_ascii_from_a_slash() {
    assert!(Wire::path("/tool-media/ab.png").is_ok());
    for bad in ["tool-media/a", "/a b", "/a\r\nX: y", "/é", ""] {
        assert!(Wire::path(bad).is_err(), "{bad:?}");
    }
}

/// The head `text` reads as.
fn head(text: &str) -> Result<Head, HttpError> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut response = httparse::Response::new(&mut fields);
    assert!(response.parse(text.as_bytes()).expect("parses").is_complete(), "{text:?}");
    read_head(&response)
}

#[test]
fn heads_give_framing_and_persistence() {
    let h = |status, framing, keep_alive| Ok(Head { status, framing, keep_alive });
    assert_eq!(head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), h(200, Framing::Length(5), true));
    assert_eq!(
        head("HTTP/1.1 200 OK\r\ncontent-length: 5, 5\r\nContent-Length: 5\r\n\r\n"),
        h(200, Framing::Length(5), true)
    );
    assert_eq!(
        head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\nContent-Length: 5\r\n\r\n"),
        h(200, Framing::Chunked, true)
    );
    assert_eq!(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"), h(200, Framing::Close, true));
    assert_eq!(head("HTTP/1.1 200 OK\r\n\r\n"), h(200, Framing::Close, true));
    for status in [100, 204, 304] {
        assert_eq!(head(&format!("HTTP/1.1 {status} X\r\n\r\n")), h(status, Framing::Length(0), true));
    }
    assert_eq!(
        head("HTTP/1.1 200 OK\r\nConnection: Keep-Alive, close\r\nContent-Length: 0\r\n\r\n"),
        h(200, Framing::Length(0), false)
    );
    assert_eq!(head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), h(200, Framing::Length(0), false));
    assert_eq!(
        head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"),
        h(200, Framing::Length(0), true)
    );
    for bad in ["5, 6", "-1", "+5", "5x", "", "99999999999999999999"] {
        assert!(head(&format!("HTTP/1.1 200 OK\r\nContent-Length: {bad}\r\n\r\n")).is_err(), "{bad:?}");
    }
    assert!(head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n").is_err());
}

/// What the test server does on a request: answer and keep the connection, answer and close it, or
/// close it unanswered.
enum Reply {
    Keep(Vec<u8>),
    Close(Vec<u8>),
    Drop,
}

/// A server on loopback that, for each connection it accepts, reads one request at a time and does the
/// next of `replies` (each answer cut into writes of `piece` bytes). Its address and the count of
/// connections it accepted.
async fn serve(replies: Vec<Reply>, piece: usize) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = format!("http://{}", listener.local_addr().expect("address"));
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    tokio::spawn(async move {
        let mut replies = replies.into_iter();
        while let Ok((mut stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            'requests: loop {
                let mut request = Vec::new();
                while !request.ends_with(b"\r\n\r\n") {
                    let mut byte = [0u8; 1];
                    if stream.read(&mut byte).await.unwrap_or(0) == 0 {
                        break 'requests;
                    }
                    request.push(byte[0]);
                }
                let (bytes, close) = match replies.next() {
                    Some(Reply::Keep(bytes)) => (bytes, false),
                    Some(Reply::Close(bytes)) => (bytes, true),
                    Some(Reply::Drop) | None => break,
                };
                for part in bytes.chunks(piece.max(1)) {
                    let _ = stream.write_all(part).await;
                    let _ = stream.flush().await;
                    tokio::task::yield_now().await;
                }
                if close {
                    break;
                }
            }
        }
    });
    (address, accepted)
}

/// Fetches `/x` on `conn`: the status and the body's bytes.
async fn get(wire: &Wire, conn: &mut Conn) -> Result<(u16, Vec<u8>), HttpError> {
    let mut body = Vec::new();
    let status = wire.fetch(conn, &Wire::path("/x").expect("target"), |_, data| body.extend_from_slice(data)).await?;
    Ok((status, body))
}

fn answer(text: &str) -> Reply {
    Reply::Keep(text.as_bytes().to_vec())
}

#[tokio::test]
async fn every_framing_is_read_in_pieces_of_any_size_on_one_connection() {
    let big = vec![b'z'; 200_000];
    let length =
        [format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", big.len()).into_bytes(), big.clone()].concat();
    for piece in [1, 7, 4096, 1 << 20] {
        let answers = vec![
            answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
            answer(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n",
            ),
            answer("HTTP/1.1 204 No Content\r\n\r\n"),
            Reply::Keep(length.clone()),
            answer("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
        ];
        let (base, accepted) = serve(answers, piece).await;
        let wire = Wire::new(&base, None).expect("wire");
        let mut conn = Conn::default();
        assert_eq!(get(&wire, &mut conn).await.expect("length"), (200, b"hello".to_vec()), "piece {piece}");
        assert_eq!(get(&wire, &mut conn).await.expect("chunked"), (201, b"abcde".to_vec()), "piece {piece}");
        assert_eq!(get(&wire, &mut conn).await.expect("no body"), (204, Vec::new()), "piece {piece}");
        if piece == 1 {
            continue;
        }
        assert_eq!(get(&wire, &mut conn).await.expect("big"), (200, big.clone()), "piece {piece}");
        assert_eq!(get(&wire, &mut conn).await.expect("status"), (404, Vec::new()), "piece {piece}");
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "one kept-alive connection, piece {piece}");
    }
}

#[tokio::test]
async fn a_body_to_the_close_is_read_and_the_connection_is_not_kept() {
    let answers = vec![
        Reply::Close(b"HTTP/1.1 200 OK\r\n\r\nto the end".to_vec()),
        answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!"),
    ];
    let (base, accepted) = serve(answers, 3).await;
    let wire = Wire::new(&base, None).expect("wire");
    let mut conn = Conn::default();
    assert_eq!(get(&wire, &mut conn).await.expect("to the close"), (200, b"to the end".to_vec()));
    assert!(conn.live.is_none());
    assert_eq!(get(&wire, &mut conn).await.expect("next"), (200, b"!".to_vec()));
    assert_eq!(accepted.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_kept_connection_closed_by_the_server_is_replaced_once() {
    // The first connection answers once and closes without saying so; the request is sent again on a
    // second connection. `Connection: close` is honoured without a failed try.
    let answers = vec![
        answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"),
        Reply::Drop,
        answer("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nb"),
        answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nc"),
    ];
    let (base, accepted) = serve(answers, 4096).await;
    let wire = Wire::new(&base, None).expect("wire");
    let mut conn = Conn::default();
    assert_eq!(get(&wire, &mut conn).await.expect("first").1, b"a");
    assert_eq!(get(&wire, &mut conn).await.expect("sent again").1, b"b");
    assert!(conn.live.is_none(), "Connection: close is not kept");
    assert_eq!(get(&wire, &mut conn).await.expect("third").1, b"c");
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_new_connection_that_closes_unanswered_is_an_error() {
    let (base, _) = serve(vec![Reply::Drop], 1).await;
    let wire = Wire::new(&base, None).expect("wire");
    assert!(matches!(get(&wire, &mut Conn::default()).await, Err(HttpError::Connect(_))));
}

#[tokio::test]
async fn broken_answers_are_errors_of_their_kind() {
    type Kind = fn(&HttpError) -> bool;
    let cases: Vec<(&str, Kind)> = vec![
        ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", |e| matches!(e, HttpError::Body(_))),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", |e| matches!(e, HttpError::Body(_))),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", |e| matches!(e, HttpError::Body(_))),
        ("HTTP/1.1 200 OK\r\nContent-Le", |e| matches!(e, HttpError::Connect(_))),
        ("NOT HTTP\r\n\r\n", |e| matches!(e, HttpError::Connect(_))),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n", |e| matches!(e, HttpError::Connect(_))),
    ];
    for (text, kind) in cases {
        let (base, _) = serve(vec![Reply::Close(text.as_bytes().to_vec())], 4096).await;
        let wire = Wire::new(&base, None).expect("wire");
        let error = get(&wire, &mut Conn::default()).await.expect_err(text);
        assert!(kind(&error), "{text:?}: {error:?}");
    }
}

#[tokio::test]
async fn a_head_must_fit_the_buffer_and_its_fields_are_bounded() {
    let fits = format!("HTTP/1.1 200 OK\r\nX: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(BUFFER - 100));
    let over = format!("HTTP/1.1 200 OK\r\nX: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(BUFFER));
    let fields = |n: usize| format!("HTTP/1.1 200 OK\r\n{}\r\n", "F: 1\r\n".repeat(n));
    let (base, _) = serve(vec![answer(&fits)], 4096).await;
    assert_eq!(get(&Wire::new(&base, None).expect("wire"), &mut Conn::default()).await.expect("fits").0, 200);
    for text in [over, fields(MAX_FIELDS + 1)] {
        let (base, _) = serve(vec![answer(&text)], 4096).await;
        let error = get(&Wire::new(&base, None).expect("wire"), &mut Conn::default()).await;
        assert!(matches!(error, Err(HttpError::Connect(_))), "{error:?}");
    }
    let most = format!("HTTP/1.1 200 OK\r\n{}Content-Length: 0\r\n\r\n", "F: 1\r\n".repeat(MAX_FIELDS - 1));
    let (base, _) = serve(vec![answer(&most)], 4096).await;
    let _ = get(&Wire::new(&base, None).expect("wire"), &mut Conn::default()).await.expect("64 fields");
}

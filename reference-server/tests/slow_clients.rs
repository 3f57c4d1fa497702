//! SPEC 1.11's connection bounds, against a real server on loopback: a client that never finishes its
//! headers is dropped after `header_timeout_s`, a body that trickles is 408 after `body_timeout_s`, and
//! past `max_connections` a new connection is closed at once — while an honest client keeps being served.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{client, start};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the server closes the connection (or `limit` passes); returns what came and how long.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let started = Instant::now();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit.saturating_sub(started.elapsed()), stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => seen.extend_from_slice(&buffer[..n]),
            Err(_) => panic!("the server kept the connection open for {limit:?}"),
        }
    }
    (String::from_utf8_lossy(&seen).into_owned(), started.elapsed())
}

#[tokio::test]
async fn spec_1_11_a_client_that_never_finishes_its_headers_is_dropped() {
    let server = start(json!({"header_timeout_s": 1})).await;
    let mut slow = TcpStream::connect(server.server.addr).await.expect("connect");
    slow.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ").await.expect("partial headers");
    // An honest client is served meanwhile.
    let health = client().get(server.url("/health")).send().await.expect("health");
    assert_eq!(health.status(), 200);
    let (_, held) = until_closed(&mut slow, Duration::from_secs(10)).await;
    assert!(held >= Duration::from_millis(900) && held < Duration::from_secs(5), "held {held:?}");
}

#[tokio::test]
async fn spec_1_11_a_body_that_trickles_is_408_in_the_json_error_shape() {
    let server = start(json!({"body_timeout_s": 1, "api_key": "k"})).await;
    let mut slow = TcpStream::connect(server.server.addr).await.expect("connect");
    let head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n\
                Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"messages\":";
    slow.write_all(head.as_bytes()).await.expect("headers and a little body");
    let (answer, held) = until_closed(&mut slow, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#""message":"the request body did not arrive within 1 s""#), "{answer}");
    assert!(held < Duration::from_secs(5), "held {held:?}");
}

#[tokio::test]
async fn spec_1_11_past_max_connections_a_new_connection_is_closed_at_once() {
    let server = start(json!({"max_connections": 3, "header_timeout_s": 30})).await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        let mut held = TcpStream::connect(server.server.addr).await.expect("connect");
        held.write_all(b"GET /health HTTP/1.1\r\n").await.expect("partial");
        idle.push(held);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = TcpStream::connect(server.server.addr).await.expect("the kernel accepts");
    let _ = over.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
    let (answer, held) = until_closed(&mut over, Duration::from_secs(5)).await;
    assert_eq!(answer, "", "a connection over the cap gets no answer");
    assert!(held < Duration::from_secs(2), "closed at once, not after the header timeout: {held:?}");
    // One slot freed: served again.
    drop(idle.pop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let health = client().get(server.url("/health")).send().await.expect("health");
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn spec_1_11_bodies_in_flight_share_max_body_mib_and_one_without_room_is_503_at_once() {
    // 1 MiB of room; the first 64 KiB of every body are free.
    let server = start(json!({"max_body_mib": 1, "api_key": "k"})).await;
    let post = |length: usize| {
        format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    // A body of 1,000,000 bytes, 900,000 of them sent and then held: it holds ~879 KiB of room.
    let mut holder = TcpStream::connect(server.server.addr).await.expect("connect");
    holder.write_all(post(1_000_000).as_bytes()).await.expect("head");
    let mut body = br#"{"messages":[{"role":"user","content":"hi"}],"junk":""#.to_vec();
    body.resize(1_000_000 - 2, b'x');
    body.extend_from_slice(b"\"}");
    holder.write_all(&body[..900_000]).await.expect("most of the body");
    // A second body of 200,000 bytes does not fit beside it: 503 at once, in the JSON error shape. Until
    // the server has read the holder's bytes (later on a busy machine) the second one still fits, so it
    // is tried again, on a fresh connection each time, until the holder's room is taken.
    let close = |head: String| head.replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n");
    let mut tries = 0;
    let (answer, held) = loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut second = TcpStream::connect(server.server.addr).await.expect("connect");
        second.write_all(close(post(200_000)).as_bytes()).await.expect("head");
        let _ = second.write_all(&body[..200_000]).await;
        let (answer, held) = until_closed(&mut second, Duration::from_secs(10)).await;
        tries += 1;
        if answer.starts_with("HTTP/1.1 503") || tries == 25 {
            break (answer, held);
        }
    };
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.contains(r#""message":"the server is reading other large requests: try again in a moment""#),
        "{answer}"
    );
    assert!(held < Duration::from_secs(5), "held {held:?}");
    // A small request needs no room: served at once.
    let small = client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth("k")
        .json(&json!({"messages": [{"role": "user", "content": "hi"}]}))
        .send()
        .await
        .expect("small");
    assert_eq!(small.status(), 200);
    // The holder finishes: its body is served, and its room is given back for the next large one.
    holder.write_all(&body[900_000..]).await.expect("the rest");
    let answer = first_answer(&mut holder).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let again = client()
        .post(server.url("/v1/chat/completions"))
        .bearer_auth("k")
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .expect("again");
    assert_eq!(again.status(), 200);
}

/// Reads the start of an answer on a kept-alive connection.
async fn first_answer(stream: &mut TcpStream) -> String {
    let mut buffer = [0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer))
        .await
        .expect("an answer in time")
        .expect("readable");
    String::from_utf8_lossy(&buffer[..n]).into_owned()
}

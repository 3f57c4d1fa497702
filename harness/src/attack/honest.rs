//! The honest client: `GET /health` every 10 ms and a chat turn every 250 ms, on a thread and runtime
//! of its own (so the attacker's tasks cannot delay its clock), timing every `/health`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The pause between two `/health` requests. Every 10 ms gives a 2 s attack about 150 samples, so its
/// p99 is not simply its slowest one (at 20 ms, CI's short form had about 100, and one slow sample of a
/// debug build on two shared cores decided the verdict).
const HEALTH_EVERY_MS: u64 = 10;

use hdrhistogram::Histogram;

/// What the honest client saw.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HonestFigures {
    /// `/health` answered 200.
    pub health_ok: u64,
    /// `/health` failed (an error, a timeout or another status).
    pub health_failed: u64,
    /// `/health` latency percentiles, in ms.
    pub health_p50_ms: f64,
    /// 99th percentile.
    pub health_p99_ms: f64,
    /// The slowest.
    pub health_max_ms: f64,
    /// Chat turns answered 200 with the scripted text.
    pub turns_ok: u64,
    /// Chat turns that failed.
    pub turns_failed: u64,
    /// The first failure, for the report.
    pub first_error: String,
}

/// A running honest client.
pub struct Honest {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<HonestFigures>,
}

/// Starts the honest client against `base` with `key`.
pub fn start(base: String, key: String) -> Honest {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        match runtime {
            Ok(runtime) => runtime.block_on(use_server(&base, &key, &flag)),
            Err(error) => HonestFigures { first_error: format!("no runtime: {error}"), ..HonestFigures::default() },
        }
    });
    Honest { stop, thread }
}

impl Honest {
    /// Stops the client and returns what it saw.
    pub async fn finish(self) -> HonestFigures {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread;
        tokio::task::spawn_blocking(move || thread.join().unwrap_or_default()).await.unwrap_or_default()
    }
}

async fn use_server(base: &str, key: &str, stop: &AtomicBool) -> HonestFigures {
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap_or_default();
    let mut latencies = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("valid bounds");
    let mut figures = HonestFigures::default();
    let fail = |figures: &mut HonestFigures, what: String| {
        if figures.first_error.is_empty() {
            figures.first_error = what;
        }
    };
    let mut next_turn = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let answered = match client.get(format!("{base}/health")).send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                response.bytes().await.map(|_| status)
            }
            Err(error) => Err(error),
        };
        match answered {
            Ok(200) => {
                latencies.saturating_record(started.elapsed().as_micros() as u64);
                figures.health_ok += 1;
            }
            Ok(status) => {
                figures.health_failed += 1;
                fail(&mut figures, format!("/health answered {status}"));
            }
            Err(error) => {
                figures.health_failed += 1;
                fail(&mut figures, format!("/health: {error}"));
            }
        }
        if Instant::now() >= next_turn {
            match turn(&client, base, key).await {
                Ok(()) => figures.turns_ok += 1,
                Err(error) => {
                    figures.turns_failed += 1;
                    fail(&mut figures, error.to_string());
                }
            }
            next_turn = Instant::now() + Duration::from_millis(250);
        }
        tokio::time::sleep(Duration::from_millis(HEALTH_EVERY_MS)).await;
    }
    let ms = |us: u64| us as f64 / 1000.0;
    figures.health_p50_ms = ms(latencies.value_at_quantile(0.5));
    figures.health_p99_ms = ms(latencies.value_at_quantile(0.99));
    figures.health_max_ms = ms(latencies.max());
    figures
}

/// How an honest chat turn went wrong.
#[derive(Debug, thiserror::Error)]
enum TurnError {
    /// No answer.
    #[error("chat: {0}")]
    Sent(reqwest::Error),
    /// An answer that is not JSON.
    #[error("chat answered {status}: {source}")]
    NotJson {
        /// Its status.
        status: u16,
        /// Why it did not parse.
        source: reqwest::Error,
    },
    /// Another answer than the scripted "ok".
    #[error("chat answered {status}: {answer}")]
    Wrong {
        /// Its status.
        status: u16,
        /// What it said.
        answer: serde_json::Value,
    },
}

/// One chat turn; the scripted answer is "ok".
async fn turn(client: &reqwest::Client, base: &str, key: &str) -> Result<(), TurnError> {
    let body = serde_json::json!({"messages": [{"role": "user", "content": "hello"}], "stream": false});
    let response = client
        .post(format!("{base}/v1/chat/completions"))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .map_err(TurnError::Sent)?;
    let status = response.status().as_u16();
    let answer: serde_json::Value = response.json().await.map_err(|source| TurnError::NotJson { status, source })?;
    match answer["choices"][0]["message"]["content"].as_str() {
        Some("ok") if status == 200 => Ok(()),
        _ => Err(TurnError::Wrong { status, answer }),
    }
}

//! The loops: closed (N workers, each starting its next request when the last ended) or open (requests
//! started on a fixed schedule, latency counted from the intended start), and the progress bar.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::LoadError;
use super::options::{LoadOptions, MAX_IN_FLIGHT, Op, Pace};
use super::recorder::Recorder;
use super::report::{LoadReport, Memory};
use super::setup::LoadTarget;
use super::workloads::{chat_turn, media_get};
use crate::http::Http;

/// What every request needs.
#[derive(Clone)]
struct Traffic {
    http: Http,
    media: Arc<Vec<String>>,
    ops: &'static [Op],
    recorder: Arc<Recorder>,
}

impl Traffic {
    /// Request number `index`: its kind comes round-robin from the scenario.
    fn request(&self, index: u64, intended: Instant) -> impl Future<Output = ()> + Send + 'static {
        let op = self.ops[(index % self.ops.len() as u64) as usize];
        let (http, recorder) = (self.http.fresh(), Arc::clone(&self.recorder));
        let name: Arc<str> = match self.media.is_empty() {
            true => Arc::from(""),
            false => Arc::from(self.media[(index / self.ops.len() as u64) as usize % self.media.len()].as_str()),
        };
        async move {
            match op {
                Op::MediaGet => media_get(http, name, recorder, intended).await,
                chat => chat_turn(http, chat, recorder, intended).await,
            }
        }
    }
}

/// Runs the load and returns what was measured.
pub async fn run(options: &LoadOptions, target: &LoadTarget) -> Result<LoadReport, LoadError> {
    let ops = options.scenario.ops();
    if ops.iter().any(|op| *op != Op::MediaGet) {
        target.chat.clone()?;
    }
    if ops.contains(&Op::MediaGet) && target.media.is_empty() {
        return Err(LoadError::NoMedia);
    }
    let traffic = Traffic {
        http: target.http.clone(),
        media: Arc::new(target.media.clone()),
        ops,
        recorder: Arc::new(Recorder::default()),
    };
    let sent = Arc::new(AtomicU64::new(0));
    let bar = progress_bar(options);
    let ticker = {
        let (bar, recorder, started, duration) =
            (bar.clone(), Arc::clone(&traffic.recorder), Instant::now(), options.duration);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let (ok, errors) = recorder.counts();
                bar.set_position(started.elapsed().min(duration).as_millis() as u64);
                bar.set_message(format!("{ok} done, {errors} errors"));
            }
        })
    };
    let started = Instant::now();
    match options.pace {
        Pace::Closed { concurrency } => closed(options, &traffic, &sent, concurrency.max(1)).await,
        Pace::Open { rate } => open(options, &traffic, &sent, rate).await,
    }
    let elapsed = started.elapsed();
    ticker.abort();
    let _ = ticker.await;
    bar.finish_and_clear();
    let memory = target.in_process.then(Memory::of_this_process);
    let recorder = Arc::try_unwrap(traffic.recorder).map_err(|_| LoadError::StillRunning)?;
    Ok(LoadReport::new(options, recorder.finish(), elapsed, sent.load(Ordering::Relaxed), memory))
}

async fn closed(options: &LoadOptions, traffic: &Traffic, sent: &Arc<AtomicU64>, concurrency: usize) {
    let deadline = Instant::now() + options.duration;
    let workers = (0..concurrency).map(|_| {
        let (traffic, sent, max) = (traffic.clone(), Arc::clone(sent), options.max_requests);
        tokio::spawn(async move {
            while Instant::now() < deadline {
                let index = sent.fetch_add(1, Ordering::Relaxed);
                if max > 0 && index >= max {
                    sent.fetch_sub(1, Ordering::Relaxed);
                    break;
                }
                traffic.request(index, Instant::now()).await;
            }
        })
    });
    futures::future::join_all(workers).await;
}

async fn open(options: &LoadOptions, traffic: &Traffic, sent: &Arc<AtomicU64>, rate: f64) {
    let started = Instant::now();
    let deadline = started + options.duration;
    let in_flight = Arc::new(AtomicUsize::new(0));
    let interval = Duration::from_secs_f64(1.0 / rate.max(0.001));
    let mut tasks = Vec::new();
    let mut index: u64 = 0;
    loop {
        let intended = started + interval.mul_f64(index as f64);
        if intended >= deadline || (options.max_requests > 0 && index >= options.max_requests) {
            break;
        }
        tokio::time::sleep_until(intended.into()).await;
        sent.fetch_add(1, Ordering::Relaxed);
        if in_flight.load(Ordering::Relaxed) >= MAX_IN_FLIGHT {
            traffic.recorder.error("overload: too many requests in flight");
        } else {
            in_flight.fetch_add(1, Ordering::Relaxed);
            let (request, in_flight) = (traffic.request(index, intended), Arc::clone(&in_flight));
            tasks.push(tokio::spawn(async move {
                request.await;
                in_flight.fetch_sub(1, Ordering::Relaxed);
            }));
        }
        index += 1;
    }
    futures::future::join_all(tasks).await;
}

fn progress_bar(options: &LoadOptions) -> ProgressBar {
    let bar = ProgressBar::new(options.duration.as_millis() as u64);
    if !options.progress {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {msg}") {
        bar.set_style(style);
    }
    bar
}

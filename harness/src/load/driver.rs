//! The loops: closed (N workers, each starting its next request when the last ended) or open (requests
//! started on a fixed schedule, latency counted from the intended start), and the progress bar.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::LoadError;
use super::cost::{Cost, Cpu};
use super::integrity::Proven;
use super::options::{LoadOptions, Op, Pace};
use super::recorder::Recorder;
use super::report::{LoadReport, Memory, Timing};
use super::setup::LoadTarget;
use super::wire::{Conn, Wire};
use super::workloads::{MediaTarget, chat_turn, media_get};
use crate::http::Http;

/// What every request needs.
#[derive(Clone)]
struct Traffic {
    http: Http,
    wire: Arc<Wire>,
    media: Arc<[MediaTarget]>,
    proven: Arc<Proven>,
    ops: &'static [Op],
    recorder: Arc<Recorder>,
}

impl Traffic {
    /// Request number `index`, on `conn` when it is a picture fetch: its kind comes round-robin from
    /// the scenario, its picture round-robin from the list.
    async fn request(&self, index: u64, intended: Instant, conn: &mut Conn) {
        let op = self.ops[(index % self.ops.len() as u64) as usize];
        match op {
            Op::MediaGet => {
                let target = &self.media[(index / self.ops.len() as u64) as usize % self.media.len()];
                media_get(&self.wire, conn, target, &self.proven, &self.recorder, intended).await
            }
            chat => chat_turn(self.http.fresh(), chat, &self.proven, &self.recorder, intended).await,
        }
    }
}

/// First and last send, in nanoseconds after the start (`u64::MAX`/0 while none).
struct Sends {
    first: AtomicU64,
    last: AtomicU64,
    started: Instant,
}

impl Sends {
    fn new(started: Instant) -> Self {
        Self { first: AtomicU64::new(u64::MAX), last: AtomicU64::new(0), started }
    }

    fn now(&self) {
        let at = self.started.elapsed().as_nanos() as u64;
        self.first.fetch_min(at, Ordering::Relaxed);
        self.last.fetch_max(at, Ordering::Relaxed);
    }

    fn wall(&self, started: SystemTime) -> Option<(SystemTime, SystemTime)> {
        let first = self.first.load(Ordering::Relaxed);
        (first != u64::MAX).then(|| {
            let last = self.last.load(Ordering::Relaxed);
            (started + Duration::from_nanos(first), started + Duration::from_nanos(last))
        })
    }
}

/// Runs the load (this process's segment of it) and returns what was measured.
pub async fn run(options: &LoadOptions, target: &LoadTarget) -> Result<LoadReport, LoadError> {
    let ops = options.scenario.ops();
    if ops.iter().any(|op| *op != Op::MediaGet) {
        target.chat.clone()?;
    }
    if ops.contains(&Op::MediaGet) && target.media.is_empty() {
        return Err(LoadError::NoMedia);
    }
    options.check(SystemTime::now())?;
    let media = target.media.iter().map(|name| MediaTarget::new(name)).collect::<Result<Arc<[_]>, _>>();
    let media = media.map_err(|e| LoadError::NotAUrl(e.to_string()))?;
    let wire =
        Arc::new(Wire::new(target.http.base(), target.http.key()).map_err(|e| LoadError::NotAUrl(e.to_string()))?);
    let proven = Arc::new(Proven::new(target.media.iter().map(String::as_str), options.proven_cap));
    let late = wait_for(options.start_at).await;
    let (started_wall, started) = (SystemTime::now(), Instant::now());
    let recorder = match options.intervals {
        // Intervals count from the common start, so a late worker's line up with the others'.
        true => Recorder::with_intervals(started.checked_sub(late).unwrap_or(started)),
        false => Recorder::default(),
    };
    let traffic = Traffic { http: target.http.clone(), wire, media, proven, ops, recorder: Arc::new(recorder) };
    let cpu = Cpu::now();
    let sent = Arc::new(AtomicU64::new(0));
    let sends = Arc::new(Sends::new(started));
    let bar = progress_bar(options);
    let ticker = {
        let (bar, recorder, duration) = (bar.clone(), Arc::clone(&traffic.recorder), options.duration);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let (ok, errors) = recorder.counts();
                bar.set_position(started.elapsed().min(duration).as_millis() as u64);
                bar.set_message(format!("{ok} done, {errors} errors"));
            }
        })
    };
    match options.pace {
        Pace::Closed { .. } => closed(options, &traffic, &sent, &sends).await,
        Pace::Open { rate, .. } => open(options, &traffic, &sent, &sends, rate, started).await,
    }
    let elapsed = started.elapsed();
    let cpu = Cpu::now().since(cpu);
    ticker.abort();
    let _ = ticker.await;
    bar.finish_and_clear();
    let memory = target.in_process.then(Memory::of_this_process);
    let (held, copies) = traffic.proven.held();
    traffic.recorder.proven(copies as u64, held);
    let recorder = Arc::try_unwrap(traffic.recorder).map_err(|_| LoadError::StillRunning)?;
    let timing = Timing { started: started_wall, ended: started_wall + elapsed, late, sends: sends.wall(started_wall) };
    let sent = sent.load(Ordering::Relaxed);
    let cost = Cost::new(cpu, sent, target.in_process);
    Ok(LoadReport::new(options, recorder.finish(), elapsed, sent, memory, timing, Some(cost)))
}

/// Waits until `at` (if given) and says how late this process was for it.
async fn wait_for(at: Option<SystemTime>) -> Duration {
    let Some(at) = at else { return Duration::ZERO };
    match at.duration_since(SystemTime::now()) {
        Ok(ahead) => {
            tokio::time::sleep(ahead).await;
            Duration::ZERO
        }
        Err(late) => late.duration(),
    }
}

/// N workers (this segment's share of `--concurrency`), each sending its next request when its last
/// one ended; at most this segment's share of `--max-requests`.
async fn closed(options: &LoadOptions, traffic: &Traffic, sent: &Arc<AtomicU64>, sends: &Arc<Sends>) {
    let deadline = Instant::now() + options.duration;
    let max = match options.max_requests {
        0 => 0,
        total => options.segment.share(total),
    };
    let segment = options.segment;
    let workers = (0..options.workers().max(1)).map(|_| {
        let (traffic, sent, sends) = (traffic.clone(), Arc::clone(sent), Arc::clone(sends));
        tokio::spawn(async move {
            let mut conn = Conn::default();
            while Instant::now() < deadline {
                let local = sent.fetch_add(1, Ordering::Relaxed);
                if max > 0 && local >= max {
                    sent.fetch_sub(1, Ordering::Relaxed);
                    break;
                }
                sends.now();
                traffic.request(segment.global(local), Instant::now(), &mut conn).await;
            }
        })
    });
    futures::future::join_all(workers).await;
}

/// The tokio timer's resolution: a sleep ends up to this late, so a worker wakes this much before a
/// request's time and, if still early, sends it at once.
const TIMER_SLACK: Duration = Duration::from_millis(1);

/// Requests on the run's fixed schedule (request `k` at `k / rate` after the start), this segment's
/// `k` only, over this segment's share of the connections: each worker takes the next request of the
/// schedule when its last one ended. Latency counts from the intended send time, or from the actual
/// one when that was earlier (a wake-up within [`TIMER_SLACK`] of it): a request that waited for a
/// connection or for the timer is counted late, never early.
async fn open(
    options: &LoadOptions,
    traffic: &Traffic,
    sent: &Arc<AtomicU64>,
    sends: &Arc<Sends>,
    rate: f64,
    started: Instant,
) {
    let deadline = started + options.duration;
    let interval = Duration::from_secs_f64(1.0 / rate.max(0.001));
    let next = Arc::new(AtomicU64::new(0));
    let (segment, max_requests) = (options.segment, options.max_requests);
    let workers = (0..options.workers()).map(|_| {
        let (traffic, sent, sends, next) = (traffic.clone(), Arc::clone(sent), Arc::clone(sends), Arc::clone(&next));
        tokio::spawn(async move {
            let mut conn = Conn::default();
            loop {
                let index = segment.global(next.fetch_add(1, Ordering::Relaxed));
                let intended = started + interval.mul_f64(index as f64);
                if intended >= deadline || (max_requests > 0 && index >= max_requests) {
                    break;
                }
                if let Some(wake) = intended.checked_sub(TIMER_SLACK)
                    && wake > Instant::now()
                {
                    tokio::time::sleep_until(wake.into()).await;
                }
                sent.fetch_add(1, Ordering::Relaxed);
                sends.now();
                traffic.request(index, intended.min(Instant::now()), &mut conn).await;
            }
        })
    });
    futures::future::join_all(workers.collect::<Vec<_>>()).await;
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

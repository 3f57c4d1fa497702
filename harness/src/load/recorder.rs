//! What a load run measured: HDR histograms of latency per request kind (and, for chat turns, the time
//! to the `call` event, to the `result` event and to `[DONE]`), errors by kind, and the integrity count.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::integrity::How;
use super::intervals::{IntervalLogs, IntervalRecorder, new_histogram};
use super::options::{Op, Phase};

/// Names of lost pictures a run keeps (the count goes on past it).
pub const MAX_LOST_NAMES: usize = 1_000;
/// Names of new pictures (`cache-write`) a run keeps, so a merge can show no two workers wrote the
/// same one; past it the names are counted, not kept.
pub const MAX_NEW_NAMES: usize = 10_000;

/// Everything recorded.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Latency in microseconds per (kind, phase).
    pub histograms: BTreeMap<(Op, Phase), Histogram<u64>>,
    /// Requests that completed without error, per kind.
    pub ok: BTreeMap<Op, u64>,
    /// Errors by kind ("status 500", "connect", "timeout", "body", …).
    pub errors: BTreeMap<String, u64>,
    /// Pictures whose bytes were checked against their names (every one, all its bytes).
    pub checked: u64,
    /// Of those, the ones compared byte for byte with a copy SHA-256 proved (the rest were hashed).
    pub compared: u64,
    /// Proven copies held at the end, and their bytes (see [`super::integrity`]).
    pub proven: (u64, u64),
    /// Pictures announced or served that did not come back whole.
    pub lost: u64,
    /// Bytes of picture bodies received.
    pub bytes: u64,
    /// The first [`MAX_LOST_NAMES`] lost pictures' names.
    pub lost_names: Vec<String>,
    /// The first [`MAX_NEW_NAMES`] names of pictures `cache-write` turns announced.
    pub new_names: Vec<String>,
    /// Names past those limits, counted.
    pub names_not_kept: u64,
    /// The interval logs (empty unless the recorder was made with [`Recorder::with_intervals`]).
    pub intervals: IntervalLogs,
}

/// A thread-safe recorder.
#[derive(Debug)]
pub struct Recorder {
    inner: Mutex<(Recorded, Option<IntervalRecorder>)>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self { inner: Mutex::new((Recorded::default(), None)) }
    }
}

impl Recorder {
    /// A recorder that also keeps one histogram per second from `origin` (for interval logs).
    pub fn with_intervals(origin: Instant) -> Self {
        let recorder = Self::default();
        recorder.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner).1 =
            Some(IntervalRecorder::new(origin));
        recorder
    }

    fn with<T>(&self, f: impl FnOnce(&mut Recorded) -> T) -> T {
        let mut guard = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard.0)
    }

    /// Records a latency.
    pub fn latency(&self, op: Op, phase: Phase, took: Duration) {
        let mut guard = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (recorded, intervals) = &mut *guard;
        record_latency(recorded, intervals, op, phase, took);
    }

    /// Records a request that completed and its whole latency (one lock, not two: the hot path).
    pub fn completed(&self, op: Op, took: Duration) {
        let mut guard = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (recorded, intervals) = &mut *guard;
        record_latency(recorded, intervals, op, Phase::Total, took);
        *recorded.ok.entry(op).or_default() += 1;
    }

    /// Records a request that completed.
    pub fn ok(&self, op: Op) {
        self.with(|r| *r.ok.entry(op).or_default() += 1);
    }

    /// Records an error of this kind.
    pub fn error(&self, kind: impl Into<String>) {
        self.with(|r| *r.errors.entry(kind.into()).or_default() += 1);
    }

    /// Records a picture checked (`how`): `whole` when its bytes matched its name; `new` when a
    /// `cache-write` turn announced it.
    pub fn picture(&self, name: &str, whole: bool, bytes: usize, new: bool, how: How) {
        self.with(|r| {
            r.checked += 1;
            r.compared += u64::from(how == How::Compared);
            r.bytes += bytes as u64;
            let (keep, limit) = match (whole, new) {
                (false, _) => (&mut r.lost_names, MAX_LOST_NAMES),
                (true, true) => (&mut r.new_names, MAX_NEW_NAMES),
                (true, false) => return,
            };
            if keep.len() < limit {
                keep.push(name.to_string());
            } else {
                r.names_not_kept += 1;
            }
            if !whole {
                r.lost += 1;
            }
        });
    }

    /// Requests completed and errors so far (for the progress bar).
    pub fn counts(&self) -> (u64, u64) {
        self.with(|r| (r.ok.values().sum(), r.errors.values().sum()))
    }

    /// Notes the proven copies held at the end: how many, and their bytes.
    pub fn proven(&self, copies: u64, bytes: u64) {
        self.with(|r| r.proven = (copies, bytes));
    }

    /// Takes what was recorded.
    pub fn finish(self) -> Recorded {
        let (mut recorded, intervals) = self.inner.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(intervals) = intervals {
            recorded.intervals = intervals.finish();
        }
        recorded
    }
}

fn record_latency(
    recorded: &mut Recorded,
    intervals: &mut Option<IntervalRecorder>,
    op: Op,
    phase: Phase,
    took: Duration,
) {
    let micros = (took.as_micros() as u64).clamp(1, super::intervals::HIGHEST_US);
    let _ = recorded.histograms.entry((op, phase)).or_insert_with(new_histogram).record(micros);
    if let Some(intervals) = intervals {
        intervals.record((op, phase), micros, Instant::now());
    }
}

//! What a load run measured: HDR histograms of latency per request kind (and, for chat turns, the time
//! to the `call` event, to the `result` event and to `[DONE]`), errors by kind, and the integrity count.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::options::Op;

/// One measured phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The whole request (for a chat turn: to `[DONE]`).
    Total,
    /// Time to the first `call` event.
    ToCall,
    /// Time to the first `result` event.
    ToResult,
}

impl Phase {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Total => "total",
            Phase::ToCall => "to call",
            Phase::ToResult => "to result",
        }
    }
}

/// Everything recorded.
#[derive(Debug)]
pub struct Recorded {
    /// Latency in microseconds per (kind, phase).
    pub histograms: BTreeMap<(Op, Phase), Histogram<u64>>,
    /// Requests that completed without error, per kind.
    pub ok: BTreeMap<Op, u64>,
    /// Errors by kind ("status 500", "connect", "timeout", "body", …).
    pub errors: BTreeMap<String, u64>,
    /// Pictures whose bytes were checked against their names.
    pub checked: u64,
    /// Pictures announced or served that did not come back whole.
    pub lost: u64,
    /// Bytes of picture bodies received.
    pub bytes: u64,
}

/// A thread-safe recorder.
#[derive(Debug)]
pub struct Recorder {
    inner: Mutex<Recorded>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Recorded {
                histograms: BTreeMap::new(),
                ok: BTreeMap::new(),
                errors: BTreeMap::new(),
                checked: 0,
                lost: 0,
                bytes: 0,
            }),
        }
    }
}

impl Recorder {
    fn with<T>(&self, f: impl FnOnce(&mut Recorded) -> T) -> T {
        let mut guard = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }

    /// Records a latency.
    pub fn latency(&self, op: Op, phase: Phase, took: Duration) {
        let micros = (took.as_micros() as u64).max(1);
        self.with(|r| {
            let histogram = r
                .histograms
                .entry((op, phase))
                .or_insert_with(|| Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds"));
            let _ = histogram.record(micros.min(3_600_000_000));
        });
    }

    /// Records a request that completed.
    pub fn ok(&self, op: Op) {
        self.with(|r| *r.ok.entry(op).or_default() += 1);
    }

    /// Records an error of this kind.
    pub fn error(&self, kind: impl Into<String>) {
        self.with(|r| *r.errors.entry(kind.into()).or_default() += 1);
    }

    /// Records a picture checked: `whole` when its bytes matched its name.
    pub fn picture(&self, whole: bool, bytes: usize) {
        self.with(|r| {
            r.checked += 1;
            r.bytes += bytes as u64;
            if !whole {
                r.lost += 1;
            }
        });
    }

    /// Requests completed and errors so far (for the progress bar).
    pub fn counts(&self) -> (u64, u64) {
        self.with(|r| (r.ok.values().sum(), r.errors.values().sum()))
    }

    /// Takes what was recorded.
    pub fn finish(self) -> Recorded {
        self.inner.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

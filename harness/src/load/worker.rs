//! What one segment of a run writes into `--out DIR`, for `mediacheck load merge`:
//!
//! - `segment-I-of-N.<op>.<phase>.hlog`: an HdrHistogram interval log per request kind and phase;
//! - `segment-I-of-N.json`: the ledger — run id, the run's identity (scenario and options), this
//!   segment's share, timing and lateness, requests, errors, pictures checked and lost (with names),
//!   each log's file and latency count — and the segment's own report.
//!
//! The logs are written first and the ledger last, by rename: a segment with a ledger is complete, and
//! a worker killed half-way leaves none (the merge then counts its segment as missing).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::intervals::{file_name, write_log};
use super::options::LoadOptions;
use super::report::LoadReport;
use super::segment::{Start, unix_ms, unix_us};

/// The ledger's format; a merge refuses any other.
pub const FORMAT: &str = "mediacheck-load-segment/1";

/// What the run's segments share and the merge compares: the scenario and every option but the
/// segment's own number. `target` says what was loaded (`embedded`, or the URL and its pictures).
pub fn identity(options: &LoadOptions, start: &Start, target: Value) -> Value {
    json!({
        "scenario": options.scenario,
        "pace": options.pace,
        "duration_ms": options.duration.as_millis() as u64,
        "max_requests": options.max_requests,
        "segments": options.segment.count,
        "start": start.identity(),
        "target": target,
    })
}

/// The run id the segments of one command line share: `run-` and 16 hex digits of the SHA-256 of
/// the identity.
pub fn derive_run_id(identity: &Value) -> String {
    let digest = fixtures::images::sha256_hex(identity.to_string().as_bytes());
    format!("run-{}", &digest[..16])
}

/// A run id given with `--run-id`: 1–64 characters of `A-Z a-z 0-9 . _ -` (it names files and
/// Kubernetes objects, and goes into log comments).
pub fn valid_run_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Writes the segment's logs and ledger into `out`; returns the ledger's path.
pub fn write(
    out: &Path,
    run_id: &str,
    identity: &Value,
    options: &LoadOptions,
    report: &LoadReport,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(out)?;
    let stem = options.segment.stem();
    let start = options.start_at.unwrap_or(report.timing.started);
    let comment = format!("mediacheck load {run_id} {stem} {}", options.scenario.name());
    let mut logs = Vec::new();
    for (series, lines) in &report.recorded.intervals.lines {
        let file = file_name(&stem, *series);
        write_log(&out.join(&file), start, &comment, lines)?;
        logs.push(json!({
            "op": series.0.name(), "phase": series.1.slug(), "file": file,
            "count": report.recorded.intervals.counts.get(series).copied().unwrap_or(0),
        }));
    }
    let recorded = &report.recorded;
    let timing = &report.timing;
    let ledger = json!({
        "format": FORMAT,
        "mediacheck": env!("CARGO_PKG_VERSION"),
        "run_id": run_id,
        "segment": options.segment,
        "identity": identity,
        "share": {
            "workers": options.workers(),
            "max_requests": (options.max_requests > 0).then(|| options.segment.share(options.max_requests)),
        },
        "timing": {
            "start_at_unix_ms": unix_ms(start),
            "started_unix_us": unix_us(timing.started),
            "ended_unix_us": unix_us(timing.ended),
            "late_us": timing.late.as_micros() as u64,
            "first_send_unix_us": timing.sends.map(|(first, _)| unix_us(first)),
            "last_send_unix_us": timing.sends.map(|(_, last)| unix_us(last)),
        },
        "sent": report.sent,
        "completed": recorded.ok.iter().map(|(op, n)| (op.name().to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "errors": recorded.errors,
        "pictures": {
            "checked": recorded.checked,
            "compared": recorded.compared,
            "proven_copies": recorded.proven.0,
            "proven_bytes": recorded.proven.1,
            "lost": recorded.lost,
            "bytes": recorded.bytes,
            "lost_names": recorded.lost_names,
            "new_names": recorded.new_names,
            "names_not_kept": recorded.names_not_kept,
        },
        "logs": logs,
        "log_failures": recorded.intervals.failures,
        "report": report.json(),
    });
    let path = out.join(format!("{stem}.json"));
    let partial = out.join(format!(".{stem}.json.partial"));
    std::fs::write(&partial, serde_json::to_vec_pretty(&ledger).map_err(std::io::Error::other)?)?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// Time since the Unix epoch in microseconds, back to a wall-clock instant.
pub fn from_unix_us(us: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_micros(us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids() {
        for good in ["a", "run-1", "2026.12.01_load", &"x".repeat(64)] {
            assert!(valid_run_id(good), "{good}");
        }
        for bad in ["", "a b", "a/b", "é", "a,b", &"x".repeat(65), "a\n"] {
            assert!(!valid_run_id(bad), "{bad:?}");
        }
        let a = derive_run_id(&json!({"scenario": "mixed", "segments": 4}));
        assert_eq!(a, derive_run_id(&json!({"scenario": "mixed", "segments": 4})));
        assert_ne!(a, derive_run_id(&json!({"scenario": "mixed", "segments": 5})));
        assert!(valid_run_id(&a) && a.len() == 20);
    }
}

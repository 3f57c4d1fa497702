//! The load report: requests, throughput, latency percentiles per request kind and phase, errors by
//! kind, how every picture's bytes were checked, memory, the tester's CPU per 1,000 requests, and —
//! last — `lost: N`.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::cost::Cost;
use super::options::{LoadOptions, LoadScenario, Op, Pace, Phase};
use super::recorder::Recorded;

/// Memory of the process the server runs in.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Memory {
    /// Resident set size at the end, bytes.
    pub rss_end: u64,
    /// Peak resident set size, bytes.
    pub rss_peak: u64,
}

impl Memory {
    /// This process's (Linux `/proc/self/status`: `VmRSS`, `VmHWM`).
    pub fn of_this_process() -> Memory {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .map_or(0, |kb| kb * 1024)
        };
        Memory { rss_end: field("VmRSS:"), rss_peak: field("VmHWM:") }
    }
}

/// What the run took of the machine: the memory of the server's process (when it is this one) and
/// the tester's CPU.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    /// The server's process's memory, when it runs in this process.
    pub memory: Option<Memory>,
    /// The CPU this process spent.
    pub cost: Option<Cost>,
}

/// When requests went out, on the wall clock: what a merge needs to line segments up.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// When the first request could go (after waiting for `--start-at`).
    pub started: SystemTime,
    /// When the last request ended.
    pub ended: SystemTime,
    /// How long after `--start-at` this process started (zero when on time or without one).
    pub late: Duration,
    /// The first and last request's actual send times.
    pub sends: Option<(SystemTime, SystemTime)>,
}

/// What a load run found.
#[derive(Debug)]
pub struct LoadReport {
    json: Value,
    text: String,
    /// Pictures that did not come back whole.
    pub lost: u64,
    /// Errors of every kind.
    pub errors: u64,
    /// Requests that completed.
    pub ok: u64,
    /// Requests sent.
    pub sent: u64,
    /// When it ran, on the wall clock.
    pub timing: Timing,
    /// What was recorded: the ledger and interval logs a segment writes.
    pub recorded: Recorded,
}

fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

impl LoadReport {
    /// Builds the report.
    pub fn new(
        options: &LoadOptions,
        recorded: Recorded,
        elapsed: Duration,
        sent: u64,
        memory: Option<Memory>,
        timing: Timing,
        cost: Option<Cost>,
    ) -> Self {
        let mut notes = Vec::new();
        if options.segment.count > 1 {
            let workers = match options.pace {
                Pace::Closed { .. } => format!(", {} of the workers", options.workers()),
                Pace::Open { .. } => format!(", {} of the connections", options.workers()),
            };
            notes.push(format!("segment {}: one request in every {}{workers}", options.segment, options.segment.count));
        }
        if !timing.late.is_zero() {
            notes.push(format!("started {:.3} s after --start-at", timing.late.as_secs_f64()));
        }
        let (text, json) =
            render(options.scenario, options.pace, &recorded, elapsed, sent, Spent { memory, cost }, &notes);
        let (ok, errors, lost) = (recorded.ok.values().sum(), recorded.errors.values().sum(), recorded.lost);
        LoadReport { json, text, lost, errors, ok, sent, timing, recorded }
    }

    /// A report made elsewhere (a merge).
    pub fn from_parts(text: String, json: Value, recorded: Recorded, sent: u64, timing: Timing) -> Self {
        let (ok, errors, lost) = (recorded.ok.values().sum(), recorded.errors.values().sum(), recorded.lost);
        LoadReport { json, text, lost, errors, ok, sent, timing, recorded }
    }

    /// The terminal report.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The JSON report.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Completed requests of `op` per second.
    pub fn throughput(&self, op: Op) -> f64 {
        self.json["per_op"]
            .as_array()
            .and_then(|ops| ops.iter().find(|o| o["op"] == op.name()))
            .and_then(|o| o["per_second"].as_f64())
            .unwrap_or(0.0)
    }
}

/// The terminal and JSON report of what was recorded over `elapsed`; `notes` go just before the last
/// line, `lost: N`.
pub fn render(
    scenario: LoadScenario,
    pace: Pace,
    recorded: &Recorded,
    elapsed: Duration,
    sent: u64,
    Spent { memory, cost }: Spent,
    notes: &[String],
) -> (String, Value) {
    let seconds = elapsed.as_secs_f64().max(1e-9);
    let ok: u64 = recorded.ok.values().sum();
    let errors: u64 = recorded.errors.values().sum();
    let pace_text = match pace {
        Pace::Closed { concurrency } => format!("closed loop, {concurrency} concurrent"),
        Pace::Open { rate, connections } => {
            format!("open loop, {rate} requests/s over {connections} connections (latency from the intended send time)")
        }
    };
    let mut text = String::new();
    let _ = writeln!(text, "mediacheck load — {} · {pace_text} · {:.1} s", scenario.name(), seconds);
    let _ = writeln!(
        text,
        "requests: {sent} sent, {ok} completed, {errors} errors · {:.1} completed/s",
        ok as f64 / seconds
    );
    let _ = writeln!(
        text,
        "{:<26} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "latency (ms)", "count", "p50", "p90", "p99", "p99.9", "max"
    );
    let mut latencies = Vec::new();
    for ((op, phase), histogram) in &recorded.histograms {
        let label =
            if *phase == Phase::Total { op.name().to_string() } else { format!("  {} {}", op.name(), phase.name()) };
        let q = |p: f64| histogram.value_at_quantile(p);
        let _ = writeln!(
            text,
            "{label:<26} {:>9} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
            histogram.len(),
            ms(q(0.5)),
            ms(q(0.9)),
            ms(q(0.99)),
            ms(q(0.999)),
            ms(histogram.max())
        );
        latencies.push(json!({
            "op": op.name(), "phase": phase.name(), "series": format!("{}.{}", op.name(), phase.slug()),
            "count": histogram.len(),
            "p50_ms": ms(q(0.5)), "p90_ms": ms(q(0.9)), "p99_ms": ms(q(0.99)), "p999_ms": ms(q(0.999)),
            "max_ms": ms(histogram.max()),
            "us": {"p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999), "max": histogram.max(),
                   "min": histogram.min(), "count": histogram.len()},
        }));
    }
    let per_op: Vec<Value> = recorded
        .ok
        .iter()
        .map(|(op, n)| json!({"op": op.name(), "completed": n, "per_second": *n as f64 / seconds}))
        .collect();
    if recorded.errors.is_empty() {
        let _ = writeln!(text, "errors: none");
    } else {
        for (kind, n) in &recorded.errors {
            let _ = writeln!(text, "errors: {n} × {kind}");
        }
    }
    let _ = writeln!(text, "{}", checked_line(recorded));
    if let Some(memory) = memory {
        let _ = writeln!(
            text,
            "memory (server and load generator share this process): RSS {:.0} MiB at the end, peak {:.0} MiB",
            memory.rss_end as f64 / (1 << 20) as f64,
            memory.rss_peak as f64 / (1 << 20) as f64
        );
    }
    if let Some(cost) = cost {
        let _ = writeln!(text, "{}", cost.line());
    }
    for note in notes {
        let _ = writeln!(text, "{note}");
    }
    let _ = writeln!(text, "lost: {}", recorded.lost);
    let json = json!({
        "scenario": scenario,
        "pace": pace,
        "seconds": seconds,
        "sent": sent,
        "completed": ok,
        "per_op": per_op,
        "latency": latencies,
        "errors": recorded.errors,
        "pictures_checked": recorded.checked,
        "pictures_checked_by": {
            "sha256": recorded.checked - recorded.compared.min(recorded.checked),
            "compared_with_proven_copy": recorded.compared,
            "proven_copies": recorded.proven.0,
            "proven_bytes": recorded.proven.1,
        },
        "picture_bytes": recorded.bytes,
        "cpu": cost.map(|c| c.json()),
        "memory": memory,
        "notes": notes,
        "lost": recorded.lost,
    });
    (text, json)
}

/// How the pictures' bytes were checked: every byte of every body, each way counted.
fn checked_line(recorded: &Recorded) -> String {
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    let size = |bytes: u64| match bytes {
        0..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", mib(bytes)),
    };
    let compared = recorded.compared.min(recorded.checked);
    let mut line = format!(
        "pictures checked: {} ({:.1} MiB, every byte): {} by SHA-256 against the name",
        recorded.checked,
        mib(recorded.bytes),
        recorded.checked - compared
    );
    if compared > 0 || recorded.proven.0 > 0 {
        let (copies, held) = recorded.proven;
        let _ = write!(
            line,
            ", {compared} compared byte for byte with a copy SHA-256 proved ({copies} proven {}, {})",
            if copies == 1 { "copy" } else { "copies" },
            size(held)
        );
    }
    line
}

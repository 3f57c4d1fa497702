//! The load report: requests, throughput, latency percentiles per request kind and phase, errors by
//! kind, memory, and — last — `lost: N`.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};

use super::options::{LoadOptions, Op, Pace};
use super::recorder::{Phase, Recorded};

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
    ) -> Self {
        let seconds = elapsed.as_secs_f64().max(1e-9);
        let ok: u64 = recorded.ok.values().sum();
        let errors: u64 = recorded.errors.values().sum();
        let pace = match options.pace {
            Pace::Closed { concurrency } => format!("closed loop, {concurrency} concurrent"),
            Pace::Open { rate } => format!("open loop, {rate} requests/s (latency from the intended send time)"),
        };
        let mut text = String::new();
        let _ = writeln!(text, "mediacheck load — {} · {pace} · {:.1} s", options.scenario.name(), seconds);
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
            let label = if *phase == Phase::Total {
                op.name().to_string()
            } else {
                format!("  {} {}", op.name(), phase.name())
            };
            let q = |p: f64| ms(histogram.value_at_quantile(p));
            let _ = writeln!(
                text,
                "{label:<26} {:>9} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
                histogram.len(),
                q(0.5),
                q(0.9),
                q(0.99),
                q(0.999),
                ms(histogram.max())
            );
            latencies.push(json!({
                "op": op.name(), "phase": phase.name(), "count": histogram.len(),
                "p50_ms": q(0.5), "p90_ms": q(0.9), "p99_ms": q(0.99), "p999_ms": q(0.999), "max_ms": ms(histogram.max()),
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
        let mb = recorded.bytes as f64 / (1 << 20) as f64;
        let _ = writeln!(text, "pictures checked: {} ({mb:.1} MiB, each SHA-256 against its name)", recorded.checked);
        if let Some(memory) = memory {
            let _ = writeln!(
                text,
                "memory (server and load generator share this process): RSS {:.0} MiB at the end, peak {:.0} MiB",
                memory.rss_end as f64 / (1 << 20) as f64,
                memory.rss_peak as f64 / (1 << 20) as f64
            );
        }
        let _ = writeln!(text, "lost: {}", recorded.lost);
        let json = json!({
            "scenario": options.scenario,
            "pace": options.pace,
            "seconds": seconds,
            "sent": sent,
            "completed": ok,
            "per_op": per_op,
            "latency": latencies,
            "errors": recorded.errors,
            "pictures_checked": recorded.checked,
            "picture_bytes": recorded.bytes,
            "memory": memory,
            "lost": recorded.lost,
        });
        LoadReport { json, text, lost: recorded.lost, errors, ok }
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

//! The attack run's report: one line per attack (peak RSS, the honest client's `/health` p99 and
//! turns, what the attack got back, survived), the bounds it was judged by, and the JSON.

use std::fmt::Write as _;

use super::AttackResult;
use super::bounds::{HEALTH_P99_MS, PEAK_RSS_MIB, VISION_GROWTH_MIB};
use super::vision::VisionResult;

/// The header of the server table.
pub fn header() -> String {
    format!(
        "{:<24} {:>9} {:>12} {:>12} {:>9}  {:<8} answers",
        "attack", "peak RSS", "/health p99", "/health max", "turns", "survived"
    )
}

/// One attack's line (and its failures below it).
pub fn line(result: &AttackResult) -> String {
    let peak = result.peak_rss_mib.map_or("?".into(), |p| format!("{p} MiB"));
    let mut answers: Vec<String> = result.answers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    if let (Some(bound), Some(ready), Some(peak)) = (result.growth_bound_mib, result.ready_rss_mib, result.peak_rss_mib)
    {
        answers.insert(0, format!("grew {} MiB from {ready} (bound {bound})", peak.saturating_sub(ready)));
    }
    let honest = &result.honest;
    let mut line = format!(
        "{:<24} {:>9} {:>9.1} ms {:>9.1} ms {:>5}/{:<3}  {:<8} {}",
        result.id,
        peak,
        honest.health_p99_ms,
        honest.health_max_ms,
        honest.turns_ok,
        honest.turns_ok + honest.turns_failed,
        if result.survived { "yes" } else { "NO" },
        answers.join(", ")
    );
    for failure in &result.failures {
        let _ = write!(line, "\n{:<24} ! {failure}", "");
    }
    line
}

/// The vision-mcp table.
pub fn vision(results: &[VisionResult]) -> String {
    let mut text =
        format!("{:<32} {:>9} {:>8}  {:<8} answer\n", "vision-mcp picture", "peak RSS", "growth", "survived");
    for r in results {
        let answer: String = r.answer.chars().take(90).collect();
        let _ = writeln!(
            text,
            "{:<32} {:>5} MiB {:>4} MiB  {:<8} {answer}",
            r.picture,
            r.peak_rss_mib,
            r.growth_mib,
            if r.survived { "yes" } else { "NO" }
        );
    }
    text
}

/// The closing lines: the bounds, and how many survived.
pub fn summary(results: &[AttackResult], vision: &[VisionResult]) -> String {
    let survived = results.iter().filter(|r| r.survived).count();
    let mut text = format!(
        "bounds: server peak RSS <= {PEAK_RSS_MIB} MiB, honest /health p99 <= {HEALTH_P99_MS} ms, every honest \
         turn completes, nothing outlives the server"
    );
    for result in results {
        if let Some(bound) = result.growth_bound_mib {
            let _ = write!(text, "; {}: RSS growth over ready <= {bound} MiB", result.id);
        }
        if let Some(answer) = &result.every_answer {
            let _ = write!(text, ", every answer {answer}");
        }
    }
    if !vision.is_empty() {
        let _ = write!(text, "; vision-mcp refuses every picture growing <= {VISION_GROWTH_MIB} MiB");
    }
    let _ = write!(text, "\nsurvived: {survived} of {} attacks", results.len());
    if !vision.is_empty() {
        let refused = vision.iter().filter(|r| r.survived).count();
        let _ = write!(text, "; vision-mcp {refused} of {} pictures", vision.len());
    }
    text
}

/// The JSON report.
pub fn json(results: &[AttackResult], vision: &[VisionResult]) -> serde_json::Value {
    serde_json::json!({
        "bounds": {"peak_rss_mib": PEAK_RSS_MIB, "health_p99_ms": HEALTH_P99_MS, "vision_growth_mib": VISION_GROWTH_MIB},
        "attacks": results,
        "vision_mcp": vision,
    })
}

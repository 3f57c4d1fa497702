//! `mediacheck attack`: hostile traffic against a server while an honest client keeps using it, with
//! figures per attack (SPEC 1.11–1.12, 4.10, 4.13, 5.3, 5.7, 12.4). Each attack gets a fresh server
//! process (so its peak RSS is the attack's), runs for the chosen time, and is judged by what an
//! operator cares about: the process is alive and answers, its peak RSS stayed within the bound, the
//! honest client's `/health` p99 stayed within the bound and its chat turns completed, and nothing it
//! started outlived it.
//!
//! - [`catalogue`]: the attacks, one entry each (what is sent, the server configuration it needs).
//! - [`requests`]: hostile request bodies (huge, deep, many values, pictures claiming huge canvases,
//!   decompression bombs), sent by a few workers in a loop.
//! - [`connections`]: slowloris headers, trickled bodies, idle connections, by the hundred.
//! - [`pictures`]: thousands of distinct pictures planted in the cache folder and fetched (SPEC 9.8).
//! - [`honest`]: the honest client — `/health` every 10 ms and a chat turn every 250 ms — on its own
//!   thread and runtime, so the attacker's work does not delay its clock.
//! - [`server`]: the server process under attack — start, peak RSS from /proc, stop.
//! - [`vision`]: vision-mcp's tool fed bombs, animations and a hard link, its peak RSS per picture.
//! - [`report`]: the table and the JSON.

pub mod catalogue;
pub mod connections;
pub mod env;
pub mod honest;
pub mod pictures;
pub mod report;
pub mod requests;
pub mod server;
pub mod vision;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use catalogue::{Attack, AttackKind};

/// The bounds every attack is judged by (ISSUE/DESIGN targets, with default server settings).
pub mod bounds {
    /// The server's peak resident memory during any attack.
    pub const PEAK_RSS_MIB: u64 = 512;
    /// The honest client's `/health` p99 during any attack.
    pub const HEALTH_P99_MS: f64 = 100.0;
    /// What vision-mcp may grow by refusing one hostile picture.
    pub const VISION_GROWTH_MIB: u64 = 64;
}

/// What to run.
#[derive(Debug, Clone)]
pub struct AttackOptions {
    /// The command template of the server under attack (`{config}`, `{port}`, `{scripts}`).
    pub template: String,
    /// This program (it also plays the hostile MCP servers: `mediacheck hostile-mcp KIND`).
    pub launcher: PathBuf,
    /// How long each attack lasts.
    pub duration: Duration,
    /// Only attacks whose id matches this glob.
    pub only: Option<String>,
    /// The vision-mcp binary, to attack its tool too.
    pub vision_mcp: Option<PathBuf>,
}

/// What one attack did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AttackResult {
    /// The attack's id.
    pub id: String,
    /// The SPEC clauses that bound it.
    pub clauses: String,
    /// The server's peak RSS in MiB (VmHWM), when it could be read.
    pub peak_rss_mib: Option<u64>,
    /// Its RSS in MiB when it was ready, before the attack (VmRSS).
    pub ready_rss_mib: Option<u64>,
    /// How much the peak may grow over `ready_rss_mib`, where the attack's clause bounds it.
    pub growth_bound_mib: Option<u64>,
    /// The one answer every attacking request must get, where the clause says what is served.
    pub every_answer: Option<String>,
    /// The honest client.
    pub honest: honest::HonestFigures,
    /// What the attack's requests got, by answer ("413", "400", "closed", …), with counts.
    pub answers: BTreeMap<String, u64>,
    /// Processes the server started that were still alive after it stopped.
    pub orphans: usize,
    /// Whether the server survived within every bound.
    pub survived: bool,
    /// Why not, when it did not.
    pub failures: Vec<String>,
}

/// The answers every attacking task counted, added up by kind.
async fn answers_of(tasks: Vec<tokio::task::JoinHandle<BTreeMap<String, u64>>>) -> BTreeMap<String, u64> {
    let mut total = BTreeMap::new();
    for task in tasks {
        for (name, count) in task.await.unwrap_or_default() {
            *total.entry(name).or_insert(0) += count;
        }
    }
    total
}

/// Runs the attacks `options` selects against fresh servers, one after another.
pub async fn run(options: &AttackOptions, mut progress: impl FnMut(&AttackResult)) -> Vec<AttackResult> {
    let mut results = Vec::new();
    for attack in catalogue::all() {
        if options.only.as_deref().is_some_and(|glob| !crate::glob(glob, attack.id)) {
            continue;
        }
        let result = run_one(options, &attack).await;
        progress(&result);
        results.push(result);
    }
    results
}

async fn run_one(options: &AttackOptions, attack: &Attack) -> AttackResult {
    let marker = format!("mediacheck-attack-{}-{}", std::process::id(), attack.id);
    let config = catalogue::config(attack, &options.launcher, &marker);
    let mut result = AttackResult {
        id: attack.id.into(),
        clauses: attack.clauses.into(),
        peak_rss_mib: None,
        ready_rss_mib: None,
        growth_bound_mib: attack.growth_bound_mib,
        every_answer: attack.every_answer.map(Into::into),
        honest: honest::HonestFigures::default(),
        answers: BTreeMap::new(),
        orphans: 0,
        survived: false,
        failures: Vec::new(),
    };
    let mut server = match server::UnderAttack::start(&options.template, &config).await {
        Ok(server) => server,
        Err(error) => {
            result.failures.push(format!("the server did not start: {error}"));
            return result;
        }
    };
    result.ready_rss_mib = server.rss_mib();
    let honest = honest::start(server.base.clone(), catalogue::KEY.into());
    let env = catalogue::AttackEnv {
        base: server.base.clone(),
        duration: options.duration,
        media_folder: server.media_folder(),
    };
    result.answers = catalogue::drive(attack, &env).await;
    let figures = honest.finish().await;
    result.honest = figures;
    result.peak_rss_mib = server.peak_rss_mib();
    let alive = server.alive();
    let answers_after = server.health().await;
    server.stop().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    result.orphans = fixtures::hostile_mcp::count_alive(&marker);
    result.failures = judge(&result, alive, answers_after);
    result.survived = result.failures.is_empty();
    result
}

fn judge(result: &AttackResult, alive: bool, answers_after: bool) -> Vec<String> {
    let mut failures = Vec::new();
    if !alive {
        failures.push("the server process died".into());
    } else if !answers_after {
        failures.push("the server no longer answers /health".into());
    }
    match result.peak_rss_mib {
        Some(peak) if peak > bounds::PEAK_RSS_MIB => {
            failures.push(format!("peak RSS {peak} MiB is over {} MiB", bounds::PEAK_RSS_MIB));
        }
        Some(_) => {}
        None => failures.push("the server's peak RSS could not be read".into()),
    }
    if let Some(bound) = result.growth_bound_mib {
        match (result.ready_rss_mib, result.peak_rss_mib) {
            (Some(ready), Some(peak)) if peak.saturating_sub(ready) > bound => failures.push(format!(
                "peak RSS grew by {} MiB over the {ready} MiB it held when ready: over {bound} MiB",
                peak - ready
            )),
            (None, Some(_)) => failures.push("the server's RSS when ready could not be read".into()),
            _ => {}
        }
    }
    if let Some(wanted) = &result.every_answer {
        for (answer, count) in result.answers.iter().filter(|(answer, _)| *answer != wanted) {
            failures.push(format!("{count} requests got {answer}, not {wanted}"));
        }
        if !result.answers.contains_key(wanted) {
            failures.push(format!("no request got {wanted}"));
        }
    }
    let honest = &result.honest;
    if honest.health_p99_ms > bounds::HEALTH_P99_MS {
        failures.push(format!("/health p99 {:.1} ms is over {} ms", honest.health_p99_ms, bounds::HEALTH_P99_MS));
    }
    if honest.health_failed > 0 {
        failures.push(format!("{} /health requests failed ({})", honest.health_failed, honest.first_error));
    }
    if honest.turns_failed > 0 || honest.turns_ok == 0 {
        failures.push(format!(
            "honest chat turns: {} completed, {} failed ({})",
            honest.turns_ok, honest.turns_failed, honest.first_error
        ));
    }
    if result.orphans > 0 {
        failures.push(format!("{} processes the server started outlived it", result.orphans));
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within_bounds() -> AttackResult {
        AttackResult {
            id: "x".into(),
            clauses: "1.11".into(),
            peak_rss_mib: Some(bounds::PEAK_RSS_MIB),
            ready_rss_mib: Some(bounds::PEAK_RSS_MIB - 100),
            growth_bound_mib: Some(100),
            every_answer: Some("200".into()),
            honest: honest::HonestFigures {
                health_ok: 10,
                health_p99_ms: bounds::HEALTH_P99_MS,
                turns_ok: 1,
                ..honest::HonestFigures::default()
            },
            answers: BTreeMap::from([("200".to_string(), 3)]),
            orphans: 0,
            survived: false,
            failures: Vec::new(),
        }
    }

    #[test]
    fn every_bound_holds_at_its_value_and_fails_just_past_it() {
        assert_eq!(judge(&within_bounds(), true, true), Vec::<String>::new());
        type Breaker = fn(&mut AttackResult);
        let over: [(&str, Breaker); 11] = [
            ("grew by 101 MiB over the 411 MiB it held when ready: over 100 MiB", |r| {
                r.ready_rss_mib = Some(bounds::PEAK_RSS_MIB - 101)
            }),
            ("RSS when ready could not be read", |r| r.ready_rss_mib = None),
            ("2 requests got 404, not 200", |r| {
                r.answers.insert("404".into(), 2);
            }),
            ("no request got 200", |r| r.answers.clear()),
            ("peak RSS 513 MiB is over 512 MiB", |r| {
                r.peak_rss_mib = Some(bounds::PEAK_RSS_MIB + 1);
                r.ready_rss_mib = Some(bounds::PEAK_RSS_MIB - 99);
            }),
            ("peak RSS could not be read", |r| r.peak_rss_mib = None),
            ("/health p99 100.1 ms is over 100 ms", |r| r.honest.health_p99_ms = 100.1),
            ("1 /health requests failed", |r| r.honest.health_failed = 1),
            ("1 completed, 1 failed", |r| r.honest.turns_failed = 1),
            ("0 completed, 0 failed", |r| r.honest.turns_ok = 0),
            ("1 processes the server started outlived it", |r| r.orphans = 1),
        ];
        for (expected, break_it) in over {
            let mut result = within_bounds();
            break_it(&mut result);
            let failures = judge(&result, true, true);
            assert!(failures.len() == 1 && failures[0].contains(expected), "{expected}: {failures:?}");
        }
        assert_eq!(judge(&within_bounds(), false, false), vec!["the server process died".to_string()]);
        assert_eq!(judge(&within_bounds(), true, false), vec!["the server no longer answers /health".to_string()]);
    }
}

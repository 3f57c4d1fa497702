//! Running cases: one server per scenario (or per case, for scenarios that consume scripts), each case
//! in its own task so a panic or an error is a failing verdict under that case's id, never the end of
//! the run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use tokio::sync::Mutex;

use crate::case::{Case, CheckError, Level};
use crate::context::Ctx;
use crate::http::{Exchange, Http};
use crate::target::{StartError, Target};

/// How long one case may take.
const CASE_TIMEOUT: Duration = Duration::from_secs(120);

/// The outcome of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The server did what the clause says.
    Pass,
    /// A MUST was not met.
    Fail,
    /// A SHOULD was not met.
    Warn,
    /// The case could not run here.
    NotRun,
}

/// A case's verdict, with what a report needs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Verdict {
    /// The case id.
    pub id: &'static str,
    /// The clause.
    pub clause: &'static str,
    /// MUST or SHOULD.
    pub level: Level,
    /// What the case checks.
    pub description: &'static str,
    /// The scenario it ran in.
    pub scenario: &'static str,
    /// The outcome.
    pub outcome: Outcome,
    /// What was expected (on failure).
    pub expected: Option<String>,
    /// What happened (on failure), or why it did not run.
    pub actual: Option<String>,
    /// The HTTP exchanges (on failure).
    pub transcript: Vec<Exchange>,
    /// How long it took.
    pub ms: u64,
}

/// Whether a failing case ends the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every case runs.
    Never,
    /// After the first failing MUST case the others are not run (`run --fail-fast`; mutation testing).
    AtFirstFailure,
}

/// Runs `cases` against `target`, calling `progress` after each verdict. Scenarios run in order of
/// first appearance; within a scenario, cases in their order.
pub async fn run(cases: &[Case], target: &Target, stop: Stop, progress: impl FnMut(&Verdict)) -> Vec<Verdict> {
    run_at_once(cases, target, stop, 1, progress).await
}

/// As [`run`], with up to `jobs` scenarios (each its own server) running at once. Verdicts and
/// `progress` still come in the cases' order. One at a time wherever running together could change a
/// verdict: a `--url` target (one server that every scenario would share) and `--fail-fast` (a
/// failure must stop what comes after it).
pub async fn run_at_once(
    cases: &[Case],
    target: &Target,
    stop: Stop,
    jobs: usize,
    mut progress: impl FnMut(&Verdict),
) -> Vec<Verdict> {
    crate::browser::run_started();
    let mut groups: Vec<Vec<Case>> = Vec::new();
    for case in cases {
        match groups.iter_mut().find(|g| g[0].scenario.name == case.scenario.name && !case.scenario.fresh()) {
            Some(group) => group.push(*case),
            None => groups.push(vec![*case]),
        }
    }
    let mut verdicts: Vec<Verdict> = Vec::new();
    if stop == Stop::AtFirstFailure {
        // One group after another: a failure stops what comes after it.
        for group in groups {
            let group_verdicts = match verdicts.iter().find(|v| v.outcome == Outcome::Fail) {
                Some(failed) => {
                    let why = format!("--fail-fast: the run stopped after {} failed", failed.id);
                    group.iter().map(|c| unstarted(c, Outcome::NotRun, why.clone())).collect()
                }
                None => with_instance(target, &group, stop).await,
            };
            for verdict in group_verdicts {
                progress(&verdict);
                verdicts.push(verdict);
            }
        }
    } else {
        use futures::StreamExt;
        let jobs = if matches!(target, Target::Url { .. }) { 1 } else { jobs.max(1) };
        // The page groups (a browser, every width) are the longest: they start first, so the run does
        // not end on one started last. A group starts as soon as any running one ends; finished groups
        // wait in `done` until every group before them has ended, so verdicts keep the cases' order.
        let mut order: Vec<usize> = (0..groups.len()).collect();
        order.sort_by_key(|i| !groups[*i][0].id.starts_with("page."));
        let started = order.into_iter().map(|i| with_instance(target, &groups[i], stop).map(move |v| (i, v)));
        let mut finished = futures::stream::iter(started).buffer_unordered(jobs);
        let mut done = std::collections::BTreeMap::new();
        let mut next = 0;
        while let Some((i, group_verdicts)) = finished.next().await {
            done.insert(i, group_verdicts);
            while let Some(group_verdicts) = done.remove(&next) {
                next += 1;
                for verdict in group_verdicts {
                    progress(&verdict);
                    verdicts.push(verdict);
                }
            }
        }
    }
    crate::browser::run_ended().await;
    verdicts
}

async fn with_instance(target: &Target, cases: &[Case], stop: Stop) -> Vec<Verdict> {
    let scenario = cases[0].scenario;
    let group = crate::context::Group::of(cases.iter().map(|c| c.id));
    if !scenario.server() {
        let ctx = Ctx {
            http: Http::new("http://127.0.0.1:1", None),
            config_path: None,
            fixture_log: None,
            fixture_stage: None,
            instance: None,
            target: target.clone(),
            group,
        };
        let mut verdicts = Vec::new();
        for case in cases {
            verdicts.push(run_case(case, ctx.clone()).await);
        }
        return verdicts;
    }
    let instance = match target.start(&scenario).await {
        Ok(instance) => instance,
        Err(StartError::Unsupported(why)) => {
            return cases.iter().map(|c| unstarted(c, Outcome::NotRun, why.clone())).collect();
        }
        Err(StartError::Failed(why)) => {
            let why = format!("the server for scenario '{}' did not start: {why}", scenario.name);
            return cases.iter().map(|c| unstarted(c, failing(c.level), why.clone())).collect();
        }
    };
    let restartable = !matches!(target, Target::Url { .. });
    let ctx_base = (
        instance.http.clone(),
        instance.config_path.clone(),
        instance.fixture_log.clone(),
        instance.fixture_stage.clone(),
    );
    let shared = Arc::new(Mutex::new(instance));
    let mut verdicts: Vec<Verdict> = Vec::new();
    for case in cases {
        if let Some(failed) =
            verdicts.iter().find(|v| v.outcome == Outcome::Fail).filter(|_| stop == Stop::AtFirstFailure)
        {
            let why = format!("--fail-fast: the run stopped after {} failed", failed.id);
            verdicts.push(unstarted(case, Outcome::NotRun, why));
            continue;
        }
        let http = shared.lock().await.http.fresh();
        let ctx = Ctx {
            http,
            config_path: ctx_base.1.clone(),
            fixture_log: ctx_base.2.clone(),
            fixture_stage: ctx_base.3.clone(),
            instance: restartable.then(|| Arc::clone(&shared)),
            target: target.clone(),
            group: group.clone(),
        };
        verdicts.push(run_case(case, ctx).await);
    }
    drop(ctx_base);
    if let Ok(instance) = Arc::try_unwrap(shared) {
        instance.into_inner().stop().await;
    }
    verdicts
}

fn failing(level: Level) -> Outcome {
    match level {
        Level::Must => Outcome::Fail,
        Level::Should => Outcome::Warn,
    }
}

impl Verdict {
    /// A verdict on `case`.
    fn of(case: &Case, outcome: Outcome, expected: Option<String>, actual: Option<String>) -> Self {
        Verdict {
            id: case.id,
            clause: case.clause,
            level: case.level,
            description: case.description,
            scenario: case.scenario.name,
            outcome,
            expected,
            actual,
            transcript: Vec::new(),
            ms: 0,
        }
    }
}

fn unstarted(case: &Case, outcome: Outcome, why: String) -> Verdict {
    Verdict::of(case, outcome, None, Some(why))
}

/// Runs one case in its own task; a panic, an error or a timeout is its failure.
async fn run_case(case: &Case, ctx: Ctx) -> Verdict {
    let http = ctx.http.clone();
    let started = Instant::now();
    let task = tokio::spawn((case.check)(ctx));
    let result = match tokio::time::timeout(CASE_TIMEOUT, task).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => {
            let message = join.try_into_panic().ok().and_then(|p| {
                p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            });
            Err(CheckError::Fail {
                expected: "the check to finish".into(),
                actual: format!("the check panicked: {}", message.unwrap_or_else(|| "(no message)".into())),
            })
        }
        Err(_) => Err(CheckError::Fail {
            expected: format!("an answer within {} s", CASE_TIMEOUT.as_secs()),
            actual: "the case timed out".into(),
        }),
    };
    // A check that passed still fails when an exchange it made broke a requirement of every path (the
    // wire monitor's, each a MUST), named in the failure.
    let violations = http.violations();
    let (outcome, expected, actual) = match result {
        Ok(()) if !violations.is_empty() => (
            Outcome::Fail,
            Some(format!("every exchange to keep SPEC {} (the wire monitor)", violations[0].clause)),
            Some(violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")),
        ),
        Ok(()) => (Outcome::Pass, None, None),
        Err(CheckError::Fail { expected, actual }) => (failing(case.level), Some(expected), Some(actual)),
        Err(CheckError::NotRun(why)) => (Outcome::NotRun, None, Some(why)),
    };
    let transcript = if outcome == Outcome::Pass { Vec::new() } else { http.transcript() };
    Verdict { transcript, ms: started.elapsed().as_millis() as u64, ..Verdict::of(case, outcome, expected, actual) }
}

/// Boxes a check's future (what the `case!` macro calls).
pub fn boxed<F>(future: F) -> futures::future::BoxFuture<'static, crate::case::CheckResult>
where
    F: std::future::Future<Output = crate::case::CheckResult> + Send + 'static,
{
    future.boxed()
}

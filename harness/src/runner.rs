//! Running cases: one server per scenario (or per case, where cases consume scripts), each case in its
//! own task so a panic or an error is a failing verdict under that case's id, never the end of the run.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::FutureExt;

use crate::case::{Case, CheckError, Level};
use crate::context::Ctx;
use crate::http::Exchange;
use crate::scenario::ScenarioId;
use crate::target::{Instance, StartError, Target};

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
    pub scenario: ScenarioId,
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

/// Runs `cases` against `target`, calling `progress` after each verdict.
pub async fn run(cases: &[Case], target: &Target, mut progress: impl FnMut(&Verdict)) -> Vec<Verdict> {
    let mut by_scenario: BTreeMap<ScenarioId, Vec<Case>> = BTreeMap::new();
    for case in cases {
        by_scenario.entry(case.scenario).or_default().push(*case);
    }
    let mut verdicts = Vec::new();
    for (scenario, cases) in by_scenario {
        if scenario.fresh_per_case() {
            for case in cases {
                let verdict = with_instance(target, scenario, &[case]).await;
                verdict.iter().for_each(&mut progress);
                verdicts.extend(verdict);
            }
        } else {
            let found = with_instance(target, scenario, &cases).await;
            found.iter().for_each(&mut progress);
            verdicts.extend(found);
        }
    }
    verdicts
}

async fn with_instance(target: &Target, scenario: ScenarioId, cases: &[Case]) -> Vec<Verdict> {
    let instance = match target.start(scenario).await {
        Ok(instance) => instance,
        Err(StartError::Unsupported(why)) => {
            return cases.iter().map(|c| unstarted(c, Outcome::NotRun, why.clone())).collect();
        }
        Err(StartError::Failed(why)) => {
            let why = format!("the server for scenario '{}' did not start: {why}", scenario.name());
            return cases.iter().map(|c| unstarted(c, failing(c.level), why.clone())).collect();
        }
    };
    let mut verdicts = Vec::new();
    for case in cases {
        verdicts.push(run_case(case, &instance).await);
    }
    instance.stop().await;
    verdicts
}

fn failing(level: Level) -> Outcome {
    match level {
        Level::Must => Outcome::Fail,
        Level::Should => Outcome::Warn,
    }
}

fn unstarted(case: &Case, outcome: Outcome, why: String) -> Verdict {
    Verdict {
        id: case.id,
        clause: case.clause,
        level: case.level,
        description: case.description,
        scenario: case.scenario,
        outcome,
        expected: None,
        actual: Some(why),
        transcript: Vec::new(),
        ms: 0,
    }
}

/// Runs one case in its own task; a panic, an error or a timeout is its failure.
pub async fn run_case(case: &Case, instance: &Instance) -> Verdict {
    let ctx = Ctx { http: instance.http.fresh(), config_path: instance.config_path.clone() };
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
    let (outcome, expected, actual) = match result {
        Ok(()) => (Outcome::Pass, None, None),
        Err(CheckError::Fail { expected, actual }) => (failing(case.level), Some(expected), Some(actual)),
        Err(CheckError::NotRun(why)) => (Outcome::NotRun, None, Some(why)),
    };
    let transcript = if outcome == Outcome::Pass { Vec::new() } else { http.transcript() };
    Verdict {
        id: case.id,
        clause: case.clause,
        level: case.level,
        description: case.description,
        scenario: case.scenario,
        outcome,
        expected,
        actual,
        transcript,
        ms: started.elapsed().as_millis() as u64,
    }
}

/// Keeps the compiler honest that checks are boxed futures.
pub fn boxed<F>(future: F) -> futures::future::BoxFuture<'static, crate::case::CheckResult>
where
    F: std::future::Future<Output = crate::case::CheckResult> + Send + 'static,
{
    future.boxed()
}

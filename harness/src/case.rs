//! What a conformance case is: one behaviour, a stable slug id, the SPEC clause it checks, MUST or
//! SHOULD, the scenario (server configuration) it needs, and the check itself. A failing check is a
//! value ([`CheckError`]), never a Rust error that stops the run.

use futures::future::BoxFuture;

use crate::context::Ctx;
use crate::scenario::Scenario;

/// How strong the clause is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// A failure fails conformance.
    Must,
    /// A failure is a warning.
    Should,
}

/// Why a check did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// The server did something else than the clause says.
    Fail {
        /// What the clause wants.
        expected: String,
        /// What the server did.
        actual: String,
    },
    /// The case could not run here (say why).
    NotRun(String),
}

/// The result of a check.
pub type CheckResult = Result<(), CheckError>;

/// The check's code.
pub type CheckFn = fn(Ctx) -> BoxFuture<'static, CheckResult>;

/// One conformance case.
#[derive(Clone, Copy)]
pub struct Case {
    /// Stable slug, `area.behaviour.detail`.
    pub id: &'static str,
    /// The SPEC.md clause, e.g. `9.2`.
    pub clause: &'static str,
    /// MUST or SHOULD.
    pub level: Level,
    /// One line saying what is checked.
    pub description: &'static str,
    /// The server configuration the case runs against.
    pub scenario: Scenario,
    /// The check.
    pub check: CheckFn,
    /// The broken server variants (fixtures/broken faults) this case is proven to fail against.
    pub broken_by: &'static [&'static str],
}

impl Case {
    /// The SPEC section, the part of the clause before the dot (`9.2` → `9`).
    pub fn section(&self) -> &'static str {
        self.clause.split('.').next().unwrap_or(self.clause)
    }
}

/// Fails with expected/actual unless `expected == actual`.
pub fn expect_eq<T: PartialEq + std::fmt::Debug>(what: &str, expected: T, actual: T) -> CheckResult {
    if expected == actual {
        return Ok(());
    }
    Err(CheckError::Fail { expected: format!("{what}: {expected:?}"), actual: format!("{what}: {actual:?}") })
}

/// Fails unless `condition`, describing what was wanted and what was seen.
pub fn expect(condition: bool, expected: impl Into<String>, actual: impl Into<String>) -> CheckResult {
    if condition {
        return Ok(());
    }
    Err(CheckError::Fail { expected: expected.into(), actual: actual.into() })
}

/// A failure from anything that went wrong on the way (a refused connection, a body that is not JSON).
pub fn broken(what: impl std::fmt::Display) -> CheckError {
    CheckError::Fail { expected: "a well-formed exchange".into(), actual: what.to_string() }
}

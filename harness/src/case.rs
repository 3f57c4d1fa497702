//! What a conformance case is: one behaviour, a stable slug id, the SPEC clause it checks, MUST or
//! SHOULD, the scenario (server configuration) it needs, and the check itself. A failing check is a
//! value ([`CheckError`]), never a Rust error that stops the run.

use futures::future::BoxFuture;

pub use crate::check::{CheckError, CheckResult, broken, expect, expect_eq};
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
    /// The broken server variants (`fixtures::broken`) this case is proven to fail against.
    pub broken_by: &'static [&'static str],
}

impl Case {
    /// The SPEC section, the part of the clause before the dot (`9.2` → `9`).
    pub fn section(&self) -> &'static str {
        self.clause.split('.').next().unwrap_or(self.clause)
    }
}

//! The case registry: one file per SPEC.md section, gathered here in section order.

mod auth;
mod chat;
mod health;

use crate::case::Case;

/// Declares a case: `case!("id", "clause", Must|Should, Scenario, "description", check_fn)`.
macro_rules! case {
    ($id:literal, $clause:literal, $level:ident, $scenario:ident, $description:literal, $check:path) => {
        $crate::case::Case {
            id: $id,
            clause: $clause,
            level: $crate::case::Level::$level,
            description: $description,
            scenario: $crate::scenario::ScenarioId::$scenario,
            check: |ctx| $crate::runner::boxed($check(ctx)),
        }
    };
}
pub(crate) use case;

/// Every case, in SPEC section order.
pub fn all() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(auth::cases());
    cases.extend(health::cases());
    cases.extend(chat::cases());
    cases
}

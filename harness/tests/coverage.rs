//! Every case cites a clause SPEC.md has; every MUST clause has a case or a line in
//! `harness/not-checkable.txt` saying why it cannot be checked from outside — or is one of the gaps
//! named below, which this test only lets shrink.

use harness::cases;
use harness::coverage::{Coverage, NOT_CHECKABLE, SPEC};

/// MUST clauses that can be checked from outside and have no case yet (SPEC coverage, issue #12).
/// A clause leaves this list when its case lands; nothing may join it.
const CASES_TO_ADD: &[&str] = &[];

#[test]
fn every_case_cites_a_clause_and_every_must_clause_has_a_case_or_a_reason() {
    let coverage = Coverage::of(&cases::all(), SPEC, NOT_CHECKABLE);
    assert!(coverage.unknown.is_empty(), "cases citing clauses SPEC.md does not have: {:?}", coverage.unknown);
    assert!(
        coverage.stale.is_empty(),
        "not-checkable.txt lines for clauses with a case or not in SPEC.md: {:?}",
        coverage.stale
    );
    let gaps: Vec<&str> = coverage.unexplained_musts().iter().map(|c| c.number.as_str()).collect();
    let new: Vec<&&str> = gaps.iter().filter(|g| !CASES_TO_ADD.contains(g)).collect();
    assert!(new.is_empty(), "MUST clauses with neither a case nor a reason in not-checkable.txt: {new:?}");
    let closed: Vec<&&str> = CASES_TO_ADD.iter().filter(|c| !gaps.contains(c)).collect();
    assert!(closed.is_empty(), "these now have a case (or a reason): take them out of CASES_TO_ADD: {closed:?}");
}

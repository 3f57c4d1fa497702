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

/// MUST requirements with no check a broken variant proves, each on a `gap` line of
/// `harness/requirements/` (issue #45): the count may only fall. A requirement leaves the gaps when a
/// case and a variant prove it; a new requirement comes with its check, or raises this number in the
/// same commit, saying why.
const MUST_GAPS_AT_MOST: usize = 103;

#[test]
fn every_requirement_is_proven_outside_or_a_named_gap() {
    use harness::requirements::{Standing, TABLE};
    let standing = Standing::of(&cases::all(), SPEC, &TABLE);
    assert!(
        standing.problems.is_empty(),
        "harness/requirements/ against SPEC.md and the cases:\n{}",
        standing.problems.join("\n")
    );
    let gaps = standing.musts().filter(|r| standing.gaps.contains_key(&r.id)).count();
    assert!(
        gaps <= MUST_GAPS_AT_MOST,
        "{gaps} MUST requirements are gaps, more than the {MUST_GAPS_AT_MOST} allowed: give the new ones a check"
    );
    assert!(gaps == MUST_GAPS_AT_MOST, "{gaps} MUST requirements are gaps now: lower MUST_GAPS_AT_MOST to {gaps}");
    // Every requirement's clause is a clause of SPEC.md, so the cases' clauses and the table agree.
    let clauses: Vec<String> = harness::coverage::clauses(SPEC).into_iter().map(|c| c.number).collect();
    let orphans: Vec<&str> =
        standing.requirements.iter().filter(|r| !clauses.contains(&r.clause)).map(|r| r.id.as_str()).collect();
    assert!(orphans.is_empty(), "requirements under no clause of SPEC.md: {orphans:?}");
}

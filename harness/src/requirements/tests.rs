//! The requirement reader and the table's rules, on small SPECs and tables of their own and the real
//! cases (one real case and the variant CI proves it against).

use super::*;

const SPEC: &str = "## 1. X\n\n- **1.1** MUST: The file.\n  - **1.1a** MUST: one thing.\n    more of it.\n\
                    \x20 - **1.1b** SHOULD: another.\n    *Differs:* a note.\n- **1.2** MUST: Two.\n\
                    \x20 - **1.2a** MUST: a third.\n  - **1.2** MUST: no letter, not one.\n\
                    \x20 - **x.2a** MUST: not numbered.\n    - **1.2b** MUST: too deep.\n  - **1.2C** MUST: upper case.\n";

/// A real case and a variant it is proven to fail against.
fn real() -> (Case, &'static str) {
    let case = crate::cases::all().into_iter().find(|c| !c.broken_by.is_empty()).expect("a case with variants");
    (case, case.broken_by[0])
}

#[test]
fn requirements_are_the_lettered_lines_two_spaces_in() {
    let found = requirements(SPEC);
    let ids: Vec<&str> = found.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["1.1a", "1.1b", "1.2a"]);
    assert_eq!((found[0].clause.as_str(), found[0].level, found[0].gist.as_str()), ("1.1", Level::Must, "one thing."));
    assert_eq!(found[1].level, Level::Should);
}

#[test]
fn a_table_line_is_a_check_an_outside_reason_or_a_gap() {
    let (lines, problems) = lines(&[(
        "01.txt",
        "# a comment\n\n1.1a  a.case  v-one, v-two\n1.1b outside the engine is inside\n1.2a gap no variant yet\n1.2a\n",
    )]);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with("01.txt:6: not"), "{problems:?}");
    assert_eq!(lines[0].at, "01.txt:3");
    assert_eq!(lines[0].entry, Entry::Check { case: "a.case".into(), variants: vec!["v-one".into(), "v-two".into()] });
    assert_eq!(lines[1].entry, Entry::Outside("the engine is inside".into()));
    assert_eq!(lines[2].entry, Entry::Gap("no variant yet".into()));
}

#[test]
fn a_proven_check_counts_and_every_wrong_line_is_a_problem() {
    let (case, variant) = real();
    let table = format!("1.1a {} {variant}\n1.1b gap not yet\n1.2a outside inside\n", case.id);
    let standing = Standing::of(&[case], SPEC, &[("01.txt", &table)]);
    assert!(standing.problems.is_empty(), "{:?}", standing.problems);
    assert_eq!(standing.proven_musts(), 1);
    assert_eq!(standing.musts().count(), 2);
    let summary = standing.summary();
    assert!(summary.contains("1 of 2 MUST requirements have a check proven by a broken variant"), "{summary}");
    assert!(summary.contains("1.1b    SHOULD another. — gap: not yet"), "{summary}");
    assert!(summary.contains("1.2a    MUST   a third. — outside: inside"), "{summary}");
    assert!(!summary.contains("1.1a "), "{summary}");

    let wrong = format!(
        "1.1a {id} not-its-variant\n1.1a no.such.case {variant}\n1.9z gap gone\n1.1a {id}\n1.1b {id} {variant}\n1.1b gap both\n",
        id = case.id
    );
    let mut files = vec![("01.txt", wrong.as_str()), ("02.txt", "1.2a gap in the wrong file\n")];
    let standing = Standing::of(&[case], SPEC, &files);
    let problems = standing.problems.join("\n");
    for wanted in [
        "01.txt:1: ",
        "01.txt:2: no case no.such.case",
        "01.txt:3: 1.9z is not a requirement",
        "01.txt:4: ",
        "1.1a is on no line",
        "1.1b has a proven check and a gap",
        "02.txt:1: 1.2a belongs in its section's file",
    ] {
        assert!(problems.contains(wanted), "{wanted:?} not in:\n{problems}");
    }
    files.truncate(1);
    assert!(
        Standing::of(&[case], SPEC, &files).problems.iter().any(|p| p == "1.2a is on no line of harness/requirements/")
    );
}

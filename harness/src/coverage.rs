//! Which SPEC.md clauses the cases check. SPEC.md and the checked-in list of clauses that no case
//! can check from outside (`harness/not-checkable.txt`, one `<clause> <why>` a line) are compiled into
//! the binary, so `mediacheck list --coverage` tells any user what a passing run does not claim.

use std::collections::BTreeMap;

use crate::case::{Case, Level};

/// SPEC.md, as built into this binary.
pub const SPEC: &str = include_str!("../../SPEC.md");
/// The clauses no case can check from outside, each with the reason.
pub const NOT_CHECKABLE: &str = include_str!("../not-checkable.txt");

/// One numbered clause of SPEC.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    /// Its number, `4.5`.
    pub number: String,
    /// MUST or SHOULD.
    pub level: Level,
    /// Its first words.
    pub gist: String,
}

/// Every `- **N.M** MUST|SHOULD: …` clause of `spec`, in order.
pub fn clauses(spec: &str) -> Vec<Clause> {
    spec.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("- **")?;
            let (number, rest) = rest.split_once("** ")?;
            let valid = number.split_once('.').is_some_and(|(a, b)| {
                !a.is_empty() && !b.is_empty() && a.chars().chain(b.chars()).all(|c| c.is_ascii_digit())
            });
            if !valid {
                return None;
            }
            let level = if rest.starts_with("MUST") {
                Level::Must
            } else if rest.starts_with("SHOULD") {
                Level::Should
            } else {
                return None;
            };
            let gist = rest.split_once(": ").map_or("", |(_, g)| g).chars().take(70).collect();
            Some(Clause { number: number.to_string(), level, gist })
        })
        .collect()
}

/// The whole text of clause `number` in `spec` (`9.3` → "MUST: Only a regular file …"): its line and
/// the indented lines under it, joined into one paragraph, each nested list item on a line of its own.
/// `None` when `spec` has no such clause.
pub fn clause_text(spec: &str, number: &str) -> Option<String> {
    let opening = format!("- **{number}** ");
    let mut lines = spec.lines().skip_while(|line| !line.starts_with(&opening));
    let mut text = lines.next()?[opening.len()..].trim().to_string();
    for line in lines.take_while(|line| line.starts_with(' ') && !line.trim().is_empty()) {
        let line = line.trim();
        text.push(if line.starts_with("- ") { '\n' } else { ' ' });
        text.push_str(line);
    }
    Some(text)
}

/// The entries of the not-checkable list: clause → reason. Blank lines and `#` comments are skipped.
pub fn not_checkable(list: &str) -> BTreeMap<String, String> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(char::is_whitespace).map(|(n, why)| (n.to_string(), why.trim().to_string())))
        .collect()
}

/// What the cases cover of a SPEC.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Clause → the ids of the cases citing it.
    pub cased: BTreeMap<String, Vec<&'static str>>,
    /// Clauses with no case, each with the list's reason when it has one.
    pub uncased: Vec<(Clause, Option<String>)>,
    /// Cases citing a clause SPEC.md does not have.
    pub unknown: Vec<(&'static str, &'static str)>,
    /// List entries for a clause that has a case, or that SPEC.md does not have.
    pub stale: Vec<String>,
}

impl Coverage {
    /// Measures `cases` against `spec` and the not-checkable `list`.
    pub fn of(cases: &[Case], spec: &str, list: &str) -> Coverage {
        let clauses = clauses(spec);
        let explained = not_checkable(list);
        let mut coverage = Coverage::default();
        for case in cases {
            if clauses.iter().any(|c| c.number == case.clause) {
                coverage.cased.entry(case.clause.to_string()).or_default().push(case.id);
            } else {
                coverage.unknown.push((case.id, case.clause));
            }
        }
        for clause in &clauses {
            if !coverage.cased.contains_key(&clause.number) {
                coverage.uncased.push((clause.clone(), explained.get(&clause.number).cloned()));
            }
        }
        for number in explained.keys() {
            if coverage.cased.contains_key(number) || !clauses.iter().any(|c| &c.number == number) {
                coverage.stale.push(number.clone());
            }
        }
        coverage
    }

    /// MUST clauses with neither a case nor a reason.
    pub fn unexplained_musts(&self) -> Vec<&Clause> {
        self.uncased.iter().filter(|(c, why)| c.level == Level::Must && why.is_none()).map(|(c, _)| c).collect()
    }

    /// The lines `list --coverage` ends with.
    pub fn summary(&self, total: usize) -> String {
        let mut out = format!("\n{} of {total} clauses have a case; without one:\n", self.cased.len());
        for (clause, why) in &self.uncased {
            let level = if clause.level == Level::Must { "MUST" } else { "SHOULD" };
            let why = why.as_deref().unwrap_or("NO CASE YET, and no reason it cannot be checked");
            out.push_str(&format!("{:<6} {:<6} {} — {why}\n", clause.number, level, clause.gist));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clauses_and_the_list_are_read_and_a_gap_is_named() {
        let spec = "# 1. X\n\n- **1.1** MUST: one thing.\n- **1.2** SHOULD: another.\n- **1.3** MUST: a third.\n\
                    - **x.1** MUST: not a clause.\n  - **1.4** MUST: indented, not a clause.\n";
        let found = clauses(spec);
        assert_eq!(found.iter().map(|c| c.number.as_str()).collect::<Vec<_>>(), ["1.1", "1.2", "1.3"]);
        assert_eq!((found[1].level, found[0].gist.as_str()), (Level::Should, "one thing."));
        let list = "# comment\n1.3   the engine is inside\n9.9 gone\n";
        let coverage = Coverage::of(&[], spec, list);
        assert_eq!(coverage.unexplained_musts().iter().map(|c| c.number.as_str()).collect::<Vec<_>>(), ["1.1"]);
        assert_eq!(coverage.stale, ["9.9"]);
        assert!(coverage.summary(3).contains("1.3    MUST   a third. — the engine is inside"));
    }

    #[test]
    fn a_clause_text_is_its_line_and_the_indented_lines_under_it() {
        let spec = "- **2.1** MUST: one\n  two\n  - a list\n    item\n- **2.10** SHOULD: ten\n\n  not it\n";
        assert_eq!(clause_text(spec, "2.1").as_deref(), Some("MUST: one two\n- a list item"));
        assert_eq!(clause_text(spec, "2.10").as_deref(), Some("SHOULD: ten"));
        assert_eq!(clause_text(spec, "2.2"), None);
        let real = clause_text(SPEC, "9.3").expect("SPEC.md has 9.3");
        assert!(real.starts_with("MUST: Only a regular file") && real.ends_with("inside the folder."), "{real}");
    }
}

//! SPEC.md's numbered requirements — `3.1a`, one testable statement of clause 3.1 — and the table
//! that says, for each, which case checks it and which broken variants prove that check
//! (`harness/requirements/NN.txt`, one file a section). Both are compiled into the binary, so
//! `mediacheck list --coverage` tells any user how many requirements a passing run stands for.
//!
//! A table line is one of
//! `<req> <case-id> <variant>[,<variant>…]` (the case checks the requirement, and each variant — a
//! server or page broken in exactly that requirement — is among the variants CI proves the case
//! fails against), `<req> outside <why>` (no client can see it) or `<req> gap <why>` (no check yet).

use std::collections::{BTreeMap, BTreeSet};

use crate::case::{Case, Level};

/// The table, one file a SPEC section, as built into this binary.
pub const TABLE: [(&str, &str); 13] = [
    ("01.txt", include_str!("../requirements/01.txt")),
    ("02.txt", include_str!("../requirements/02.txt")),
    ("03.txt", include_str!("../requirements/03.txt")),
    ("04.txt", include_str!("../requirements/04.txt")),
    ("05.txt", include_str!("../requirements/05.txt")),
    ("06.txt", include_str!("../requirements/06.txt")),
    ("07.txt", include_str!("../requirements/07.txt")),
    ("08.txt", include_str!("../requirements/08.txt")),
    ("09.txt", include_str!("../requirements/09.txt")),
    ("10.txt", include_str!("../requirements/10.txt")),
    ("11.txt", include_str!("../requirements/11.txt")),
    ("12.txt", include_str!("../requirements/12.txt")),
    ("13.txt", include_str!("../requirements/13.txt")),
];

/// One requirement of SPEC.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// Its number, `4.5b`.
    pub id: String,
    /// Its clause's number, `4.5`.
    pub clause: String,
    /// MUST or SHOULD.
    pub level: Level,
    /// Its first words.
    pub gist: String,
}

/// Every `  - **N.Mx** MUST|SHOULD: …` requirement of `spec` (two spaces in, under its clause), in
/// order.
pub fn requirements(spec: &str) -> Vec<Requirement> {
    spec.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("  - **")?;
            let (id, rest) = rest.split_once("** ")?;
            let letters = id.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            let clause = &id[..id.len() - letters.len()];
            let numbered = clause.split_once('.').is_some_and(|(a, b)| {
                !a.is_empty() && !b.is_empty() && !b.contains('.') && a.chars().all(|c| c.is_ascii_digit())
            });
            if !numbered || letters.is_empty() || !letters.chars().all(|c| c.is_ascii_lowercase()) {
                return None;
            }
            let (level, gist) = if let Some(g) = rest.strip_prefix("MUST: ") {
                (Level::Must, g)
            } else {
                (Level::Should, rest.strip_prefix("SHOULD: ")?)
            };
            Some(Requirement {
                id: id.to_string(),
                clause: clause.to_string(),
                level,
                gist: gist.chars().take(70).collect(),
            })
        })
        .collect()
}

/// What one table line says of its requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// `case` checks it, and each of `variants` breaks it.
    Check {
        /// The case's id.
        case: String,
        /// The variants that break the requirement, each among those the case is proven against.
        variants: Vec<String>,
    },
    /// No client can see it, and why.
    Outside(String),
    /// No check yet: what one would need.
    Gap(String),
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `04.txt:12`.
    pub at: String,
    /// The requirement it is about.
    pub requirement: String,
    /// What it says of it.
    pub entry: Entry,
}

/// The table's lines, and a problem for each line that is none of the three forms.
pub fn lines(files: &[(&str, &str)]) -> (Vec<Line>, Vec<String>) {
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    for (file, text) in files {
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = format!("{file}:{}", n + 1);
            let Some((requirement, (kind, rest))) = word(line).and_then(|(r, rest)| Some((r, word(rest)?))) else {
                problems.push(format!(
                    "{at}: not `<req> <case-id> <variants>`, `<req> outside <why>` or `<req> gap <why>`"
                ));
                continue;
            };
            let rest = rest.trim();
            let entry = match kind {
                "outside" => Entry::Outside(rest.to_string()),
                "gap" => Entry::Gap(rest.to_string()),
                case => Entry::Check {
                    case: case.to_string(),
                    variants: rest.split(',').map(str::trim).filter(|v| !v.is_empty()).map(str::to_string).collect(),
                },
            };
            found.push(Line { at, requirement: requirement.to_string(), entry });
        }
    }
    (found, problems)
}

/// The first word of `text` and what follows it, both without the spaces between.
fn word(text: &str) -> Option<(&str, &str)> {
    let (first, rest) = text.trim_start().split_once(char::is_whitespace)?;
    Some((first, rest.trim_start()))
}

/// Where SPEC's requirements stand against the cases.
#[derive(Debug, Default)]
pub struct Standing {
    /// Every requirement, in SPEC's order.
    pub requirements: Vec<Requirement>,
    /// Requirement → the cases whose check of it a broken variant proves, each with those variants.
    pub proven: BTreeMap<String, Vec<(String, Vec<String>)>>,
    /// Requirement → why no client can see it.
    pub outside: BTreeMap<String, String>,
    /// Requirement → what a check would need.
    pub gaps: BTreeMap<String, String>,
    /// Everything wrong with the table: a line of no form, a requirement, case or variant that is not
    /// there, a variant the case is not proven to fail against, a requirement on no line, or proven
    /// and a gap at once.
    pub problems: Vec<String>,
}

impl Standing {
    /// Measures `cases` against the requirements of `spec` and the table `files`.
    pub fn of(cases: &[Case], spec: &str, files: &[(&str, &str)]) -> Standing {
        let requirements = requirements(spec);
        let (lines, mut problems) = lines(files);
        let known: BTreeSet<&str> = requirements.iter().map(|r| r.id.as_str()).collect();
        let mut standing = Standing::default();
        for line in lines {
            let section = line.requirement.split('.').next().and_then(|s| s.parse::<u32>().ok());
            if !known.contains(line.requirement.as_str()) {
                problems.push(format!("{}: {} is not a requirement of SPEC.md", line.at, line.requirement));
                continue;
            }
            if section.map(|s| format!("{s:02}.txt")).is_none_or(|f| !line.at.starts_with(&f)) {
                problems.push(format!("{}: {} belongs in its section's file", line.at, line.requirement));
            }
            match line.entry {
                Entry::Outside(why) => {
                    standing.outside.insert(line.requirement, why);
                }
                Entry::Gap(why) => {
                    standing.gaps.insert(line.requirement, why);
                }
                Entry::Check { case, variants } => {
                    let Some(found) = cases.iter().find(|c| c.id == case) else {
                        problems.push(format!("{}: no case {case}", line.at));
                        continue;
                    };
                    let unproven: Vec<&String> =
                        variants.iter().filter(|v| !found.broken_by.contains(&v.as_str())).collect();
                    if variants.is_empty() || !unproven.is_empty() {
                        problems.push(format!(
                            "{}: {case} is not proven to fail against {unproven:?} (its variants: {:?})",
                            line.at, found.broken_by
                        ));
                        continue;
                    }
                    standing.proven.entry(line.requirement).or_default().push((case, variants));
                }
            }
        }
        for requirement in &requirements {
            let id = &requirement.id;
            let (proven, other) =
                (standing.proven.contains_key(id), standing.outside.contains_key(id) || standing.gaps.contains_key(id));
            if !proven && !other {
                problems.push(format!("{id} is on no line of harness/requirements/"));
            }
            if proven && other {
                problems.push(format!("{id} has a proven check and a gap or outside line"));
            }
        }
        standing.requirements = requirements;
        standing.problems = problems;
        standing
    }

    /// The MUST requirements.
    pub fn musts(&self) -> impl Iterator<Item = &Requirement> {
        self.requirements.iter().filter(|r| r.level == Level::Must)
    }

    /// The MUST requirements with a check a broken variant proves.
    pub fn proven_musts(&self) -> usize {
        self.musts().filter(|r| self.proven.contains_key(&r.id)).count()
    }

    /// The lines `list --coverage` ends with: the count, then every requirement without a proven
    /// check, with why.
    pub fn summary(&self) -> String {
        let musts = self.musts().count();
        let mut out = format!(
            "\n{} of {musts} MUST requirements have a check proven by a broken variant ({} requirements in all); without one:\n",
            self.proven_musts(),
            self.requirements.len()
        );
        for requirement in self.requirements.iter().filter(|r| !self.proven.contains_key(&r.id)) {
            let level = if requirement.level == Level::Must { "MUST" } else { "SHOULD" };
            let why = match (self.outside.get(&requirement.id), self.gaps.get(&requirement.id)) {
                (Some(why), _) => format!("outside: {why}"),
                (None, Some(why)) => format!("gap: {why}"),
                (None, None) => "NOT IN THE TABLE".to_string(),
            };
            out.push_str(&format!("{:<7} {:<6} {} — {why}\n", requirement.id, level, requirement.gist));
        }
        out
    }
}

#[cfg(test)]
mod tests;

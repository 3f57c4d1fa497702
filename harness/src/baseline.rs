//! Expected-failure baselines: a file of case ids a target is known to fail (one per line, `#`
//! comments). A listed case that fails is reported but does not fail the run; a listed case that now
//! passes is stale and fails the run, so baselines only ever shrink.

use std::collections::BTreeSet;
use std::path::Path;

use crate::runner::{Outcome, Verdict};

/// The ids in a baseline file.
pub fn read(path: &Path) -> Result<BTreeSet<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect())
}

/// How a run compares with its baseline.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// Failing MUSTs not in the baseline: these fail the run.
    pub new_failures: Vec<String>,
    /// Failing cases the baseline expected.
    pub expected_failures: Vec<String>,
    /// Baseline entries that passed: stale, they fail the run.
    pub stale: Vec<String>,
    /// Baseline entries that name no case that ran.
    pub unknown: Vec<String>,
}

impl Comparison {
    /// Whether the run passes.
    pub fn passed(&self) -> bool {
        self.new_failures.is_empty() && self.stale.is_empty()
    }
}

/// Compares verdicts with the expected failures.
pub fn compare(verdicts: &[Verdict], expected: &BTreeSet<String>) -> Comparison {
    let mut comparison = Comparison::default();
    for verdict in verdicts {
        let listed = expected.contains(verdict.id);
        match (verdict.outcome, listed) {
            (Outcome::Fail, false) => comparison.new_failures.push(verdict.id.to_string()),
            (Outcome::Fail | Outcome::Warn, true) => comparison.expected_failures.push(verdict.id.to_string()),
            (Outcome::Pass, true) => comparison.stale.push(verdict.id.to_string()),
            _ => {}
        }
    }
    comparison.unknown = expected.iter().filter(|id| !verdicts.iter().any(|v| v.id == id.as_str())).cloned().collect();
    comparison
}

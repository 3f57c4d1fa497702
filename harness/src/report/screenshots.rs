//! The page cases' screenshots for the HTML report, read from the `--screenshots` folder
//! (`<case>/<width>-<step>.png`) and inlined as `data:` URIs, within a budget of bytes: the cases that
//! did not pass first, then the rest in the run's order; what does not fit is counted, never dropped
//! silently.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::runner::{Outcome, Verdict};

/// The most screenshot bytes (before base64) one HTML report holds.
pub const BUDGET: u64 = 8 << 20;

/// The PNG signature: a file without it is not inlined.
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// One screenshot, ready for an `img`.
#[derive(Debug, Clone)]
pub struct Shot {
    /// Its file name (`390-collapsed.png`): the width and the step.
    pub name: String,
    /// `data:image/png;base64,…`.
    pub data_uri: String,
}

/// A case's screenshots: those inlined, and how many were left out for the budget.
#[derive(Debug, Clone, Default)]
pub struct CaseShots {
    /// Inlined, by width then step.
    pub shown: Vec<Shot>,
    /// Left out: the report's budget was spent.
    pub left_out: usize,
}

/// Every page case's screenshots a report shows.
#[derive(Debug, Clone, Default)]
pub struct Album {
    /// The folder they were read from.
    pub dir: PathBuf,
    /// Case id → its screenshots (only cases with at least one file).
    pub by_case: BTreeMap<&'static str, CaseShots>,
    /// Screenshots left out in all.
    pub left_out: usize,
    /// Their bytes.
    pub left_out_bytes: u64,
    /// The budget it was filled to.
    pub budget: u64,
}

impl Album {
    /// Reads the screenshots of `verdicts`' cases from `dir`, inlining at most `budget` bytes of them.
    pub fn collect(dir: &Path, verdicts: &[Verdict], budget: u64) -> Album {
        let mut album = Album { dir: dir.to_path_buf(), budget, ..Album::default() };
        let mut spent = 0u64;
        let (unpassed, passed): (Vec<&Verdict>, Vec<&Verdict>) =
            verdicts.iter().partition(|v| v.outcome != Outcome::Pass);
        for verdict in unpassed.into_iter().chain(passed) {
            let files = pngs(&dir.join(verdict.id));
            if files.is_empty() {
                continue;
            }
            let shots = album.by_case.entry(verdict.id).or_default();
            for (path, size) in files {
                let read = (spent + size <= budget).then(|| std::fs::read(&path).ok()).flatten();
                match read.filter(|bytes| bytes.starts_with(PNG_SIGNATURE)) {
                    Some(bytes) => {
                        spent += bytes.len() as u64;
                        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
                        shots.shown.push(Shot { name, data_uri: format!("data:image/png;base64,{encoded}") });
                    }
                    None => {
                        shots.left_out += 1;
                        album.left_out += 1;
                        album.left_out_bytes += size;
                    }
                }
            }
        }
        album
    }

    /// The screenshots of the case `id` (none when it has none).
    pub fn of(&self, id: &str) -> Option<&CaseShots> {
        self.by_case.get(id)
    }
}

/// The `.png` files directly in `dir` with their sizes, by width (the number before the first `-`)
/// and then by name.
fn pngs(dir: &Path) -> Vec<(PathBuf, u64)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<(PathBuf, u64)> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "png"))
        .filter_map(|e| Some((e.path(), e.metadata().ok().filter(|m| m.is_file())?.len())))
        .collect();
    let width = |path: &Path| {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        name.split('-').next().and_then(|w| w.parse::<u32>().ok()).unwrap_or(u32::MAX)
    };
    files.sort_by(|(a, _), (b, _)| width(a).cmp(&width(b)).then_with(|| a.cmp(b)));
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Level;

    fn verdict(id: &'static str, outcome: Outcome) -> Verdict {
        Verdict {
            id,
            clause: "13.2",
            level: Level::Must,
            description: "d",
            scenario: "s",
            outcome,
            expected: None,
            actual: None,
            transcript: Vec::new(),
            ms: 0,
        }
    }

    fn png(bytes: usize) -> Vec<u8> {
        let mut png = PNG_SIGNATURE.to_vec();
        png.resize(bytes, 0);
        png
    }

    #[test]
    fn the_cases_that_did_not_pass_get_the_budget_first_and_the_rest_is_counted() {
        let dir = tempfile::tempdir().expect("a folder");
        for (case, names) in [("page.a", ["1280-x.png", "390-x.png"]), ("page.b", ["320-x.png", "320-y.png"])] {
            std::fs::create_dir_all(dir.path().join(case)).expect("case folder");
            for name in names {
                std::fs::write(dir.path().join(case).join(name), png(100)).expect("a PNG");
            }
        }
        std::fs::write(dir.path().join("page.b").join("notes.txt"), "not a picture").expect("a file");
        let verdicts =
            [verdict("page.a", Outcome::Pass), verdict("page.b", Outcome::Fail), verdict("x", Outcome::Pass)];
        let album = Album::collect(dir.path(), &verdicts, 300);
        let names = |id| album.of(id).map(|s| s.shown.iter().map(|s| s.name.as_str()).collect::<Vec<_>>());
        assert_eq!(names("page.b"), Some(vec!["320-x.png", "320-y.png"]));
        assert_eq!(names("page.a"), Some(vec!["390-x.png"]), "390 before 1280, and the budget spent after it");
        assert_eq!((album.left_out, album.left_out_bytes, album.of("page.a").map(|s| s.left_out)), (1, 100, Some(1)));
        assert!(album.of("x").is_none());
        assert!(album.of("page.b").expect("shots").shown[0].data_uri.starts_with("data:image/png;base64,iVBORw0KGgo"));
    }

    #[test]
    fn a_file_that_is_not_a_png_is_left_out() {
        let dir = tempfile::tempdir().expect("a folder");
        std::fs::create_dir_all(dir.path().join("page.a")).expect("case folder");
        std::fs::write(dir.path().join("page.a").join("320-x.png"), "<svg onload=alert(1)>").expect("a file");
        let album = Album::collect(dir.path(), &[verdict("page.a", Outcome::Fail)], BUDGET);
        assert_eq!((album.of("page.a").map(|s| s.shown.len()), album.left_out), (Some(0), 1));
    }
}

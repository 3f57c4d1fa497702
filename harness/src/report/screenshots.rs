//! The page cases' screenshots for the HTML report, read from the `--screenshots` folder
//! (`<case>/<width>-<step>.png`) and inlined as `data:` URIs, within a budget of bytes: the cases that
//! did not pass first, then the rest in the run's order; what does not fit is counted, never dropped
//! silently. A folder used again holds an earlier run's pictures too: only those written since this
//! run began are shown (the others are counted as older).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

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
    /// Screenshots of these cases left out as an earlier run's (written before this run began).
    pub older: usize,
}

impl Album {
    /// Reads the screenshots of `verdicts`' cases from `dir`, inlining at most `budget` bytes of them;
    /// with `since`, only those written since then (the others are an earlier run's).
    pub fn collect(dir: &Path, verdicts: &[Verdict], budget: u64, since: Option<SystemTime>) -> Album {
        let mut album = Album { dir: dir.to_path_buf(), budget, ..Album::default() };
        let mut spent = 0u64;
        let (unpassed, passed): (Vec<&Verdict>, Vec<&Verdict>) =
            verdicts.iter().partition(|v| v.outcome != Outcome::Pass);
        for verdict in unpassed.into_iter().chain(passed) {
            let (files, older): (Vec<_>, Vec<_>) = pngs(&dir.join(verdict.id))
                .into_iter()
                .partition(|(_, _, written)| since.is_none_or(|s| *written >= s));
            album.older += older.len();
            if files.is_empty() {
                continue;
            }
            let shots = album.by_case.entry(verdict.id).or_default();
            for (path, size, _) in files {
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

/// The `.png` files directly in `dir` with their sizes and when they were written, by width (the
/// number before the first `-`) and then by name.
fn pngs(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<(PathBuf, u64, SystemTime)> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "png"))
        .filter_map(|e| {
            let metadata = e.metadata().ok().filter(|m| m.is_file())?;
            Some((e.path(), metadata.len(), metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
        })
        .collect();
    let width = |path: &Path| {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        name.split('-').next().and_then(|w| w.parse::<u32>().ok()).unwrap_or(u32::MAX)
    };
    files.sort_by(|(a, _, _), (b, _, _)| width(a).cmp(&width(b)).then_with(|| a.cmp(b)));
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
        let album = Album::collect(dir.path(), &verdicts, 300, None);
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
        let album = Album::collect(dir.path(), &[verdict("page.a", Outcome::Fail)], BUDGET, None);
        assert_eq!((album.of("page.a").map(|s| s.shown.len()), album.left_out), (Some(0), 1));
    }

    #[test]
    fn a_second_run_into_the_same_folder_shows_only_its_own_screenshots() {
        let dir = tempfile::tempdir().expect("a folder");
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        let write = |case: &str, name: &str, written: SystemTime| {
            std::fs::create_dir_all(dir.path().join(case)).expect("case folder");
            let file = std::fs::File::create(dir.path().join(case).join(name)).expect("a file");
            std::io::Write::write_all(&mut &file, &png(100)).expect("a PNG");
            file.set_modified(written).expect("its time set");
        };
        // The first run: page.a at two widths, page.b at one.
        for (case, name) in [("page.a", "320-x.png"), ("page.a", "390-x.png"), ("page.b", "320-x.png")] {
            write(case, name, hour_ago);
        }
        // The second run began a minute ago: page.a again at 320 only; page.b took none this time.
        let started = SystemTime::now() - std::time::Duration::from_secs(60);
        write("page.a", "320-x.png", SystemTime::now());
        let verdicts = [verdict("page.a", Outcome::Fail), verdict("page.b", Outcome::NotRun)];
        let album = Album::collect(dir.path(), &verdicts, BUDGET, Some(started));
        let names: Vec<&str> = album.of("page.a").expect("page.a's").shown.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["320-x.png"]);
        assert!(album.of("page.b").is_none(), "an earlier run's picture of a case not run this time");
        assert_eq!((album.older, album.left_out), (2, 0));
        assert_eq!(Album::collect(dir.path(), &verdicts, BUDGET, None).older, 0);
    }
}

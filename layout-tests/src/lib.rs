//! # layout-tests
//!
//! The chat page's layout and accessibility at 320, 390, 640, 768 and 1280 px: SPEC 13.5 (nothing
//! wider than the viewport, everything inside its bubble) and 13.8–13.12 (axe-core's WCAG A/AA rules,
//! 24 px targets, no cut text, no text under 12 px, pictures at their own aspect ratio with a text
//! alternative), through a tour with pictures, a long tool name, a long result, a failed call, a gone
//! picture and Stop, tool blocks collapsed and opened.
//!
//! There is one browser code path: the checks are `mediacheck`'s page cases (`page.layout.*` and
//! `page.fits-every-width`, in `harness::cases`), run by its runner through its browser module against
//! any target `mediacheck` takes. This crate adds what a person looking at the page needs:
//!
//! - [`run`]: the cases against a target, screenshots kept, then [`sheet`]'s contact sheets and the
//!   reports (`report.json` as `mediacheck`'s, `report.md` for reading) written into one folder.
//! - [`sheet`]: one PNG per step of the tour, the five widths side by side, labelled.
//!
//! Each rule is proven able to fail by a broken page of its own (`fixtures/src/broken/page/layout.rs`,
//! checked by `harness/tests/broken_variants.rs`).

pub mod sheet;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use harness::browser::WIDTHS;
use harness::runner::{self, Outcome, Verdict};
use harness::target::Target;

/// The cases this crate runs (globs over case ids).
pub const CASES: [&str; 2] = ["page.layout.*", "page.fits-every-width"];
/// The viewport height the page cases use.
pub const VIEWPORT_HEIGHT: u32 = 800;
/// The steps of the tour, in order, plus those of 13.5's case (its screenshots' names).
pub const STEPS: [&str; 5] = ["collapsed", "expanded", "picture-gone", "running", "stopped"];

/// What a layout run found and wrote.
#[derive(Debug)]
pub struct LayoutRun {
    /// One verdict a case.
    pub verdicts: Vec<Verdict>,
    /// The contact sheets written, one a step.
    pub sheets: Vec<PathBuf>,
    /// `report.json` and `report.md`.
    pub reports: [PathBuf; 2],
}

impl LayoutRun {
    /// Whether every rule held.
    pub fn passed(&self) -> bool {
        self.verdicts.iter().all(|v| v.outcome == Outcome::Pass)
    }
}

/// Runs the layout cases against `target`, keeping screenshots under `out/screenshots`, and writes the
/// contact sheets and reports into `out`. The screenshot folder is set once per process (the
/// browser module keeps it for the process's life).
pub async fn run(target: &Target, target_name: &str, out: &Path) -> std::io::Result<LayoutRun> {
    let screenshots = out.join("screenshots");
    std::fs::create_dir_all(&screenshots)?;
    harness::browser::driver::keep_screenshots(screenshots.clone());
    let cases: Vec<_> = harness::cases::all()
        .into_iter()
        .filter(|case| CASES.iter().any(|glob| harness::glob(glob, case.id)))
        .collect();
    // Three scenarios at once, as `mediacheck run` does by default.
    let verdicts = runner::run_at_once(&cases, target, runner::Stop::Never, 3, |v| {
        eprintln!("{}", harness::report::progress_line(v))
    })
    .await;
    let mut sheets = Vec::new();
    for step in STEPS {
        let shots: Vec<(u32, Option<PathBuf>)> =
            WIDTHS.iter().map(|width| (*width, first_screenshot(&screenshots, &verdicts, *width, step))).collect();
        if shots.iter().all(|(_, shot)| shot.is_none()) {
            continue;
        }
        let borrowed: Vec<(u32, Option<&Path>)> = shots.iter().map(|(w, s)| (*w, s.as_deref())).collect();
        let sheet = sheet::contact_sheet(step, &borrowed, VIEWPORT_HEIGHT).map_err(std::io::Error::other)?;
        let path = out.join(format!("contact-{step}.png"));
        sheet.save(&path).map_err(std::io::Error::other)?;
        sheets.push(path);
    }
    let json = out.join("report.json");
    std::fs::write(&json, harness::report::json(target_name, &verdicts).to_string())?;
    let markdown = out.join("report.md");
    std::fs::write(&markdown, markdown_report(target_name, &verdicts, &sheets))?;
    Ok(LayoutRun { verdicts, sheets, reports: [json, markdown] })
}

/// The first case's screenshot of `step` at `width` (the cases share the tour, so any one shows it).
fn first_screenshot(dir: &Path, verdicts: &[Verdict], width: u32, step: &str) -> Option<PathBuf> {
    verdicts.iter().map(|v| dir.join(v.id).join(format!("{width}-{step}.png"))).find(|p| p.is_file())
}

/// The report a person reads: each rule, its verdict, what broke it (with the width, the state and
/// the element), and the contact sheets.
pub fn markdown_report(target: &str, verdicts: &[Verdict], sheets: &[PathBuf]) -> String {
    let mut text = format!("# Layout and accessibility of the chat page — {target}\n\n");
    let _ = writeln!(text, "Widths: {} px. Steps: {}.\n", WIDTHS.map(|w| w.to_string()).join(", "), STEPS.join(", "));
    let _ = writeln!(text, "| clause | case | verdict |\n|---|---|---|");
    for v in verdicts {
        let _ = writeln!(text, "| {} | `{}` | {:?} |", v.clause, v.id, v.outcome);
    }
    for v in verdicts.iter().filter(|v| v.outcome != Outcome::Pass) {
        let _ = writeln!(text, "\n## {} ({:?})\n\n{}\n", v.id, v.outcome, v.description);
        if let Some(expected) = &v.expected {
            let _ = writeln!(text, "- expected: {expected}");
        }
        if let Some(actual) = &v.actual {
            let _ = writeln!(text, "- actual: {actual}");
        }
    }
    let _ = writeln!(text, "\n## Contact sheets\n");
    for sheet in sheets {
        let name = sheet.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let _ = writeln!(text, "![{name}]({name})");
    }
    text
}

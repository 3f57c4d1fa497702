//! The reference page passes every layout and accessibility rule at every width, and a run leaves
//! what a person looks at: a contact sheet per step (five widths side by side) and the reports.

use harness::target::Target;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_page_passes_every_rule_at_every_width() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("layout-report");
    let _ = std::fs::remove_dir_all(&out);
    let target = Target::Embedded { launcher: None };
    let run = layout_tests::run(&target, "embedded reference server", &out).await.expect("written");
    let ids: Vec<&str> = run.verdicts.iter().map(|v| v.id).collect();
    for clause in ["13.5", "13.8", "13.9", "13.10", "13.11", "13.12"] {
        assert!(run.verdicts.iter().any(|v| v.clause == clause), "no case for {clause}: {ids:?}");
    }
    let failed: Vec<String> = run
        .verdicts
        .iter()
        .filter(|v| v.outcome != harness::runner::Outcome::Pass)
        .map(|v| format!("{} ({:?}): expected {:?}, actual {:?}", v.id, v.outcome, v.expected, v.actual))
        .collect();
    assert!(failed.is_empty(), "the reference page breaks layout rules:\n{}", failed.join("\n"));
    assert_eq!(run.sheets.len(), layout_tests::STEPS.len(), "{:?}", run.sheets);
    for sheet in &run.sheets {
        let (width, height) = image::image_dimensions(sheet).expect("a PNG");
        let widths: u32 = harness::browser::WIDTHS.iter().map(|w| w / 2 + 12).sum();
        assert_eq!((width, height), (12 + widths, 34 + 26 + 400 + 12), "{}", sheet.display());
    }
    let markdown = std::fs::read_to_string(&run.reports[1]).expect("report.md");
    assert!(markdown.contains("page.layout.accessible") && markdown.contains("contact-collapsed.png"), "{markdown}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&run.reports[0]).expect("report.json")).expect("JSON");
    assert!(json.to_string().contains("page.layout.no-cut-text"), "{json}");
}

//! The conformance suite as a test of this crate, for mutation testing (`ci/mutants.sh`): a prebuilt
//! `mediacheck` named by `MEDIACHECK_BIN` — built without the reference server inside, so a mutant can
//! never reach the verdicts — judges this build's `reference-server` binary, and a mutant that nothing
//! notices survives. In three steps, the cheap ones first, so that a caught mutant costs only what ran
//! up to its first failure:
//! 1. every case but the browser ones and the slow process and restart cases, `--fail-fast`;
//! 2. the process cases (§1.9, 1.12, 5.5: signals, process groups, the log) and the restart cases
//!    (5.4's 10 s retry);
//! 3. the many-pictures attack (SPEC 9.8's memory bound, which no case measures).
//!
//! A SHOULD the reference server meets and a mutant does not (step 1's JSON report shows it as `warn`)
//! catches the mutant too: a warning never fails a run, but it is a change a client can see (today
//! the one SHOULD case is `lift.scan-is-linear`, SPEC 11.6, which a quadratic scan breaks).
//!
//! The generated cases run with a fixed seed, so a verdict can be replayed. Without `MEDIACHECK_BIN`
//! it only says so: CI's main job and its attack run do the same.

use std::process::Command;

/// The slow cases of step 2, left out of step 1.
const SLOW: [&str; 2] = ["process.*", "mcp.stopped-*"];

/// The ids of the cases a `mediacheck run --json` report shows as `warn` (a SHOULD not met).
fn warned(report: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(report).expect("the JSON report was written");
    let report: serde_json::Value = serde_json::from_str(&text).expect("the JSON report parses");
    let verdicts = report["verdicts"].as_array().expect("the report lists its verdicts");
    verdicts.iter().filter(|v| v["outcome"] == "warn").map(|v| v["id"].as_str().unwrap_or("?").to_string()).collect()
}

fn mediacheck(bin: &std::ffi::OsStr, args: &[&str]) {
    let status = Command::new(bin)
        // The browser cases are left out (no chromedriver: not run); page.served-without-a-key stays.
        .env("MEDIACHECK_CHROMEDRIVER", "/nonexistent/chromedriver-left-out-for-mutants")
        // A mutant that hangs a request fails in 20 s, not 60.
        .env("MEDIACHECK_EXCHANGE_TIMEOUT_S", "20")
        .env("MEDIACHECK_GEN_SEED", "1")
        .args(args)
        .status()
        .expect("mediacheck starts");
    assert!(status.success(), "mediacheck {} failed against this build (exit {status})", args.join(" "));
}

#[test]
fn the_conformance_suite_passes_against_this_build() {
    let Some(bin) = std::env::var_os("MEDIACHECK_BIN") else {
        eprintln!("skipped: MEDIACHECK_BIN is not set (ci/mutants.sh sets it)");
        return;
    };
    let template =
        format!("{} --config {{config}} --port {{port}} {{scripts}}", env!("CARGO_BIN_EXE_reference-server"));
    let report = std::env::temp_dir().join(format!("mutants-judge-{}.json", std::process::id()));
    let report_arg = report.to_str().expect("a UTF-8 temp path");
    let mut quick = vec!["run", "--fail-fast", "--json", report_arg];
    for slow in SLOW {
        quick.extend(["--skip", slow]);
    }
    quick.extend(["--spawn", &template]);
    mediacheck(&bin, &quick);
    let warnings = warned(&report);
    let _ = std::fs::remove_file(&report);
    assert!(warnings.is_empty(), "SHOULD cases not met by this build: {}", warnings.join(", "));
    for slow in SLOW {
        mediacheck(&bin, &["run", "--fail-fast", "--only", slow, "--spawn", &template]);
    }
    mediacheck(&bin, &["attack", "--only", "media-many-pictures", "--duration", "1s", "--spawn", &template]);
}

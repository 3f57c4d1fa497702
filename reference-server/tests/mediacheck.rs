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
//! The generated cases run with a fixed seed, so a verdict can be replayed. Without `MEDIACHECK_BIN`
//! it only says so: CI's main job and its attack run do the same.

use std::process::Command;

/// The slow cases of step 2, left out of step 1.
const SLOW: [&str; 2] = ["process.*", "mcp.stopped-*"];

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
    let mut quick = vec!["run", "--fail-fast"];
    for slow in SLOW {
        quick.extend(["--skip", slow]);
    }
    quick.extend(["--spawn", &template]);
    mediacheck(&bin, &quick);
    for slow in SLOW {
        mediacheck(&bin, &["run", "--fail-fast", "--only", slow, "--spawn", &template]);
    }
    mediacheck(&bin, &["attack", "--only", "media-many-pictures", "--duration", "1s", "--spawn", &template]);
}

//! The conformance suite as a test of this crate, for mutation testing (`ci/mutants.sh`): a prebuilt
//! `mediacheck` named by `MEDIACHECK_BIN` — built without the reference server inside, so a mutant can
//! never reach the verdicts — runs every case but the browser ones (and the slow process and restart
//! cases, whose clauses the mutated modules do not implement) against this build's
//! `reference-server` binary, then the many-pictures attack (SPEC 9.8's memory bound, which no case
//! measures), and a mutant that neither notices survives. Without `MEDIACHECK_BIN` it only says so:
//! CI's main job and its attack run do the same.

use std::process::Command;

#[test]
fn the_conformance_suite_passes_against_this_build() {
    let Some(mediacheck) = std::env::var_os("MEDIACHECK_BIN") else {
        eprintln!("skipped: MEDIACHECK_BIN is not set (ci/mutants.sh sets it)");
        return;
    };
    let template =
        format!("{} --config {{config}} --port {{port}} {{scripts}}", env!("CARGO_BIN_EXE_reference-server"));
    let status = Command::new(mediacheck)
        // The browser cases are left out (no chromedriver: not run); page.served-without-a-key stays.
        .env("MEDIACHECK_CHROMEDRIVER", "/nonexistent/chromedriver-left-out-for-mutants")
        // A mutant that hangs a request fails in 20 s, not 60.
        .env("MEDIACHECK_EXCHANGE_TIMEOUT_S", "20")
        // The slow cases of clauses outside the mutated modules (§1's processes, 5.4's 10 s retry).
        .args(["run", "--fail-fast", "--skip", "process.*", "--skip", "mcp.stopped-*", "--spawn", &template])
        .status()
        .expect("mediacheck starts");
    assert!(status.success(), "a case failed against this build (exit {status})");
    // SPEC 9.8's memory bound is measured by an attack, not a case: run after the cases pass, it costs
    // a few seconds only for the mutants no case caught.
    let status = Command::new(mediacheck)
        .args(["attack", "--only", "media-many-pictures", "--duration", "1s", "--spawn", &template])
        .status()
        .expect("mediacheck starts");
    assert!(status.success(), "the many-pictures attack failed against this build (exit {status})");
}

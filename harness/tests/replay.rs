//! The replay command a report prints for a server with an API key, run as a reader runs it: pasted
//! into `sh`, with `mediacheck` on `PATH`, against that server (the reference server with a key). With
//! `MEDIACHECK_API_KEY` set the case runs and passes; unset or empty, the case that needs the key is
//! not run and says why — never run with an empty key and failed.

use std::process::Output;

use harness::case::Level;
use harness::report::replay::{API_KEY_VARIABLE, RunFacts};
use harness::runner::{Outcome, Verdict};
use harness::target::Target;

const KEY: &str = "replay-key-0123456789";
/// A case that sends the key and needs the server to accept it.
const CASE: &str = "auth.accepts-both-header-forms";

fn verdict() -> Verdict {
    Verdict {
        id: CASE,
        clause: "2.2",
        level: Level::Must,
        description: "d",
        scenario: "keyed",
        outcome: Outcome::Fail,
        expected: None,
        actual: None,
        transcript: Vec::new(),
        ms: 0,
    }
}

/// `replay` run by `sh` in `dir`, with the key in the environment or not.
async fn shell(replay: &str, dir: &std::path::Path, key: Option<&str>) -> Output {
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_mediacheck"));
    let path = format!(
        "{}:{}",
        binary.parent().expect("the binary's folder").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = tokio::process::Command::new("sh");
    command.arg("-c").arg(replay).current_dir(dir).env("PATH", path).env_remove(API_KEY_VARIABLE);
    if let Some(key) = key {
        command.env(API_KEY_VARIABLE, key);
    }
    command.output().await.expect("sh ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_replay_runs_with_the_key_variable_set_and_unset() {
    let dir = tempfile::tempdir().expect("a folder");
    let config = dir.path().join("run.json");
    std::fs::write(&config, serde_json::json!({ "api_key": KEY }).to_string()).expect("the configuration");
    let server = harness::embedded::start(&config, Vec::new()).await.expect("the reference server");
    let target = Target::Url { base: server.url(), api_key: Some(KEY.into()) };
    let replay = RunFacts::new(&target, 1, 1, None).replay(&verdict());

    let set = shell(&replay, dir.path(), Some(KEY)).await;
    let stdout = String::from_utf8_lossy(&set.stdout);
    assert_eq!(set.status.code(), Some(0), "{replay}\n{stdout}{}", String::from_utf8_lossy(&set.stderr));
    assert!(stdout.contains(&format!("pass  2.2    {CASE}")), "{stdout}");

    for key in [None, Some("")] {
        let unset = shell(&replay, dir.path(), key).await;
        let stdout = String::from_utf8_lossy(&unset.stdout);
        assert_eq!(
            unset.status.code(),
            Some(0),
            "{key:?}: {replay}\n{stdout}{}",
            String::from_utf8_lossy(&unset.stderr)
        );
        assert!(stdout.contains(&format!("not-run  2.2    {CASE}")), "{key:?}: {stdout}");
        assert!(stdout.contains("needs a server with an API key: pass --api-key"), "{key:?}: {stdout}");
    }
    server.stop().await;
}

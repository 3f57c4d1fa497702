//! `mediacheck load` on many machines, proven here with processes on loopback: four workers started as
//! a Kubernetes Indexed Job starts its pods (`--segments 4`, `JOB_COMPLETION_INDEX` 0–3, one
//! `--start-at`) against one reference server, then `load merge` — checked against the workers' own
//! ledgers and against the independent Python `hdrhistogram` package; and every way a merge must refuse
//! or fail: a corrupted or short log, another run, another version, a missing or killed segment, a
//! worker whose picture checks fail, bad command lines.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use harness::load::segment::{Segment, format_rfc3339};
use harness::load::{LoadOptions, LoadScenario, Pace};
use serde_json::Value;

fn mediacheck() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mediacheck"))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn merge(dirs: &[&Path], json: Option<&Path>) -> Output {
    let mut command = mediacheck();
    command.arg("load").arg("merge").args(dirs);
    if let Some(json) = json {
        command.arg("--json").arg(json);
    }
    command.output().expect("mediacheck runs")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("readable")).expect("JSON")
}

/// `mediacheck load --url … --segments N` as pod `index` of an Indexed Job, starting at `start`.
fn worker(url: &str, media: &[String], extra: &[&str], index: u32, out: &Path) -> Command {
    let mut command = mediacheck();
    command
        .args(["load", "--url", url, "--api-key", harness::load::setup::KEY, "--scenario", "media-get"])
        .args(media.iter().flat_map(|m| ["--media", m.as_str()]))
        .args(extra)
        .arg("--out")
        .arg(out)
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("readable") {
        let path = entry.expect("an entry").path();
        std::fs::copy(&path, to.join(path.file_name().expect("a name"))).expect("copied");
    }
}

fn python() -> PathBuf {
    let python = workspace().join("ci/interop/.venv/bin/python");
    assert!(python.exists(), "{} is missing: run ci/install-interop.sh (ci/test.sh does)", python.display());
    python
}

fn oracle(merged: &Path, dir: &Path) -> Output {
    Command::new(python()).arg(workspace().join("ci/hdr_oracle.py")).arg(merged).arg(dir).output().expect("python runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_segments_merge_exactly_and_every_bad_output_is_refused() {
    let target = harness::load::setup::embedded().await.expect("the reference server, pictures cached");
    let url = target.http.base().to_string();
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().join("run");
    let start = format_rfc3339(SystemTime::now() + Duration::from_secs(3));
    let args = ["--rate", "200", "--duration", "3s", "--segments", "4", "--start-at", start.as_str()];
    let workers: Vec<_> =
        (0..4).map(|index| worker(&url, &target.media, &args, index, &out).spawn().expect("a worker starts")).collect();
    let outputs: Vec<Output> = workers.into_iter().map(|w| w.wait_with_output().expect("a worker ends")).collect();
    for (index, output) in outputs.iter().enumerate() {
        assert!(output.status.success(), "worker {index}:\n{}", text(output));
    }

    let merged_json = dir.path().join("merged.json");
    let merged = merge(&[&out], Some(&merged_json));
    assert!(merged.status.success(), "{}", text(&merged));
    let report = read_json(&merged_json);
    let ledgers: Vec<Value> = (1..=4).map(|i| read_json(&out.join(format!("segment-{i}-of-4.json")))).collect();

    // The whole run's schedule: request k at k/200 s for k/200 < 3, so 600 requests, 150 a segment.
    let sent: Vec<u64> = ledgers.iter().map(|l| l["sent"].as_u64().expect("sent")).collect();
    assert_eq!(sent, vec![150; 4], "each segment's share of the schedule");
    assert_eq!(report["sent"], 600, "the merged count is the sum of the workers'");
    let completed: u64 = ledgers.iter().map(|l| l["completed"]["media-get"].as_u64().unwrap_or(0)).sum();
    assert_eq!(report["completed"], completed);
    let rate = report["segments"]["open_loop_sent_per_second"].as_f64().expect("a measured rate");
    assert!((rate - 200.0).abs() / 200.0 < 0.02, "merged open-loop rate {rate}/s, requested 200/s");
    assert_eq!(report["lost"], 0);
    assert_eq!(report["pictures_checked"], 600);
    let ids: Vec<&Value> = ledgers.iter().map(|l| &l["run_id"]).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "one run id from one command line: {ids:?}");
    let stdout = String::from_utf8_lossy(&merged.stdout);
    assert!(stdout.contains("segments: 4 of 4"), "{stdout}");
    let order: Vec<usize> = (1..=4).filter_map(|i| stdout.find(&format!("  segment {i}/4:"))).collect();
    assert!(order.len() == 4 && order.windows(2).all(|w| w[0] < w[1]), "segments listed by number:\n{stdout}");
    assert!(stdout.ends_with("lost: 0\n"), "{stdout}");
    for ledger in &ledgers {
        assert_eq!(ledger["timing"]["start_at_unix_ms"], ledgers[0]["timing"]["start_at_unix_ms"]);
        let log =
            std::fs::read_to_string(out.join(ledger["logs"][0]["file"].as_str().expect("a log"))).expect("the log");
        let start_ms = ledger["timing"]["start_at_unix_ms"].as_u64().expect("a start");
        let header = format!("#[StartTime: {}.{:03} (seconds since epoch)]", start_ms / 1000, start_ms % 1000);
        assert!(log.contains(&header), "every log starts at the common instant: {header}\n{log}");
    }

    // The independent oracle agrees exactly, and can disagree.
    let agreed = oracle(&merged_json, &out);
    assert!(agreed.status.success(), "{}", text(&agreed));
    assert!(String::from_utf8_lossy(&agreed.stdout).contains("1 passed, 0 failed"), "{}", text(&agreed));
    let mut tampered = report.clone();
    let p90 = tampered["latency"][0]["us"]["p90"].as_u64().expect("p90");
    tampered["latency"][0]["us"]["p90"] = Value::from(p90 + 1);
    let tampered_path = dir.path().join("tampered.json");
    std::fs::write(&tampered_path, tampered.to_string()).expect("written");
    let disagreed = oracle(&tampered_path, &out);
    assert!(!disagreed.status.success(), "the oracle cannot fail:\n{}", text(&disagreed));

    refusals(dir.path(), &out);
    killed_worker(&url, &target.media, dir.path());
    target.stop().await;
}

fn edit_ledger(copy: &Path, index: u32, edit: impl Fn(&mut Value)) {
    let path = copy.join(format!("segment-{index}-of-4.json"));
    let mut ledger = read_json(&path);
    edit(&mut ledger);
    std::fs::write(&path, ledger.to_string()).expect("written");
}

fn edit_log(copy: &Path, edit: impl Fn(Vec<String>) -> Vec<String>) {
    let path = copy.join("segment-2-of-4.media-get.total.hlog");
    let lines: Vec<String> = std::fs::read_to_string(&path).expect("a log").lines().map(String::from).collect();
    std::fs::write(&path, edit(lines).join("\n") + "\n").expect("written");
}

/// Every output a merge must refuse (exit 2, the file or the difference named) or fail (exit 1).
fn refusals(dir: &Path, healthy: &Path) {
    let variant = |name: &str, change: &dyn Fn(&Path)| {
        let copy = dir.join(name);
        copy_dir(healthy, &copy);
        change(&copy);
        let output = merge(&[&copy], None);
        (output.status.code(), text(&output))
    };
    let (code, said) = variant("corrupted", &|copy| {
        edit_log(copy, |mut lines| {
            let last = lines.last_mut().expect("an interval");
            // In the middle of the compressed histogram (near its end a flip can land in the padding
            // bits after deflate's last block, which no decoder reads).
            let payload = last.rfind(',').map_or(0, |comma| comma + 1);
            let middle = payload + (last.len() - payload) / 2;
            let flipped = if &last[middle..=middle] == "A" { "B" } else { "A" };
            last.replace_range(middle..=middle, flipped);
            lines
        })
    });
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("segment-2-of-4.media-get.total.hlog") && said.lines().count() == 1, "{said}");

    let (code, said) = variant("short", &|copy| {
        edit_log(copy, |lines| {
            let first_interval = lines.iter().position(|l| !l.starts_with('#')).expect("an interval");
            lines.into_iter().enumerate().filter(|(i, _)| *i != first_interval).map(|(_, l)| l).collect()
        })
    });
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("segment-2-of-4.media-get.total.hlog") && said.contains("its ledger says"), "{said}");

    let (code, said) = variant("other-run", &|c| edit_ledger(c, 3, |l| l["run_id"] = "run-elsewhere".into()));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("run id") && said.contains("run-elsewhere"), "{said}");

    let (code, said) =
        variant("other-rate", &|c| edit_ledger(c, 4, |l| l["identity"]["pace"]["open"]["rate"] = 100.0.into()));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("pace.open.rate") && said.contains("segment-4-of-4.json"), "{said}");

    let (code, said) =
        variant("other-version", &|c| edit_ledger(c, 1, |l| l["format"] = "mediacheck-load-segment/0".into()));
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("another version") && said.contains("segment-1-of-4.json"), "{said}");

    let (code, said) =
        variant("missing", &|copy| std::fs::remove_file(copy.join("segment-3-of-4.json")).expect("gone"));
    assert_eq!(code, Some(1), "a missing segment fails the merge:\n{said}");
    assert!(said.contains("segments: 3 of 4") && said.contains("MISSING 3"), "{said}");

    let (code, said) = variant("no-count", &|c| {
        edit_ledger(c, 3, |l| {
            l.as_object_mut().map(|o| o.remove("sent"));
        })
    });
    assert_eq!(code, Some(2), "a ledger without its request count is refused, never read as 0:\n{said}");
    assert!(said.contains("/sent") && said.contains("segment-3-of-4.json"), "{said}");

    let (code, said) = variant("lost", &|c| edit_ledger(c, 2, |l| l["pictures"]["lost"] = 1.into()));
    assert_eq!(code, Some(1), "a segment that lost a picture fails the merge:\n{said}");
    assert!(said.ends_with("lost: 1\n"), "{said}");

    let twice = dir.join("twice");
    copy_dir(healthy, &twice);
    let output = merge(&[healthy, &twice], None);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("twice"), "{}", text(&output));

    let output = merge(&[&dir.join("no-such-folder")], None);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(text(&output).contains("no-such-folder"), "{}", text(&output));
}

/// A worker killed half-way leaves no ledger: the merge says which segment is missing and fails.
fn killed_worker(url: &str, media: &[String], dir: &Path) {
    let out = dir.join("killed");
    let args = ["--rate", "100", "--duration", "4s", "--segments", "2"];
    let healthy = worker(url, media, &args, 0, &out).spawn().expect("a worker starts");
    let mut doomed = worker(url, media, &args, 1, &out).spawn().expect("a worker starts");
    std::thread::sleep(Duration::from_millis(1500));
    doomed.kill().expect("killed");
    let _ = doomed.wait();
    let output = healthy.wait_with_output().expect("a worker ends");
    assert!(output.status.success(), "{}", text(&output));
    let merged = merge(&[&out], None);
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged));
    assert!(text(&merged).contains("segments: 1 of 2") && text(&merged).contains("MISSING 2"), "{}", text(&merged));
}

/// A worker whose picture checks fail fails itself and the merge, which names the lost pictures.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_segment_whose_pictures_come_back_wrong_fails_the_merge() {
    let good_body: &'static [u8] = b"the picture";
    let good = format!("{}.png", fixtures::images::sha256_hex(good_body));
    let bad = format!("{}.png", "ab".repeat(32));
    let app = axum::Router::new().route(
        "/tool-media/{name}",
        axum::routing::get(move |axum::extract::Path(name): axum::extract::Path<String>| async move {
            if name.starts_with("ab") { b"not the picture".to_vec() } else { good_body.to_vec() }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().join("run");
    // Request k fetches picture k mod 2: segment 1 gets the good one only, segment 2 the bad one only.
    let media = vec![good.clone(), bad.clone()];
    let args = ["--rate", "40", "--duration", "1s", "--segments", "2"];
    let first = worker(&url, &media, &args, 0, &out).output().expect("a worker");
    let second = worker(&url, &media, &args, 1, &out).output().expect("a worker");
    assert!(first.status.success(), "{}", text(&first));
    assert_eq!(second.status.code(), Some(1), "{}", text(&second));
    let merged_json = dir.path().join("merged.json");
    let merged = merge(&[&out], Some(&merged_json));
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged));
    let report = read_json(&merged_json);
    assert_eq!(report["lost"], 20, "{}", text(&merged));
    assert!(text(&merged).contains("segment 2/2: 20 sent, 0 completed, 20 errors, lost 20"), "{}", text(&merged));
    let ledger = read_json(&out.join("segment-2-of-2.json"));
    assert_eq!(ledger["pictures"]["lost_names"][0], Value::from(bad.as_str()));
}

/// Closed-loop shares: `--concurrency` and `--max-requests` are the run's totals, split with the
/// remainder spread; `cache-write` segments never announce the same new picture.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_loop_shares_add_up_and_new_pictures_never_repeat() {
    let mut sent = Vec::new();
    let mut names: Vec<Vec<String>> = Vec::new();
    for index in 1..=3 {
        let segment = Segment { index, count: 3 };
        let target = harness::load::setup::embedded_for(segment).await.expect("the embedded server");
        let options = LoadOptions {
            segment,
            ..LoadOptions::whole(LoadScenario::CacheWrite, Pace::Closed { concurrency: 5 }, Duration::from_secs(30), 7)
        };
        assert_eq!(options.workers(), [2, 2, 1][index as usize - 1], "5 workers over 3 segments");
        let report = harness::load::run(&options, &target).await.expect("a report");
        target.stop().await;
        assert_eq!(report.lost, 0, "{}", report.text());
        sent.push(report.sent);
        names.push(report.recorded.new_names.clone());
    }
    assert_eq!(sent, vec![3, 2, 2], "7 requests over 3 segments");
    let all: std::collections::BTreeSet<&String> = names.iter().flatten().collect();
    assert_eq!(all.len(), names.iter().map(Vec::len).sum::<usize>(), "a new picture in two segments: {names:?}");
    assert_eq!(all.len(), 7 * 4, "four new pictures a turn");
}

/// Bad command lines: one line naming the value, exit 2, nothing written.
#[test]
fn bad_segments_and_starts_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().expect("a folder");
    let out = dir.path().join("out");
    let past = format_rfc3339(SystemTime::now() - Duration::from_secs(60));
    let next_year = format_rfc3339(SystemTime::now() + Duration::from_secs(366 * 86_400));
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        (vec!["--segment", "0/4"], None, "0/4"),
        (vec!["--segment", "5/4"], None, "5/4"),
        (vec!["--segment", "a/b"], None, "a/b"),
        (vec!["--segments", "4"], None, "JOB_COMPLETION_INDEX"),
        (vec!["--segments", "4"], Some("4"), "'4'"),
        (vec!["--segments", "4"], Some("x"), "'x'"),
        (vec!["--segment", "1/4", "--concurrency", "3"], None, "--concurrency 3"),
        (vec!["--segment", "1/4", "--rate", "10", "--max-requests", "3"], None, "--max-requests 3"),
        (vec!["--start-at", past.as_str(), "--duration", "10s"], None, "--start-at"),
        (vec!["--start-at", "2026-12-01T10:00:00"], None, "2026-12-01T10:00:00"),
        (vec!["--start-at", next_year.as_str()], None, "more than 24 hours ahead"),
        (vec!["--run-id", "a b"], None, "'a b'"),
    ];
    for (args, job_index, named) in cases {
        let mut command = mediacheck();
        command.args(["load", "--scenario", "media-get", "--media", "x.png", "--url", "http://127.0.0.1:9"]);
        command.args(&args).arg("--out").arg(&out).env_remove("JOB_COMPLETION_INDEX");
        if let Some(index) = job_index {
            command.env("JOB_COMPLETION_INDEX", index);
        }
        let output = command.output().expect("mediacheck runs");
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {said}");
        assert_eq!(said.lines().count(), 1, "{args:?}: one line: {said}");
        assert!(said.contains(named), "{args:?}: names {named}: {said}");
        assert!(!out.exists(), "{args:?}: wrote {}", out.display());
    }
    let output = mediacheck().args(["load", "--segment", "1/2", "--scenario", "media-get"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2), "a segment without --out");
}

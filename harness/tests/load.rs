//! `mediacheck load` in small: every scenario runs against the embedded server with nothing lost, and
//! the integrity check does count a picture whose bytes do not match its name.

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::http::Http;
use harness::load::recorder::Recorder;
use harness::load::workloads::fetch_and_check;
use harness::load::{LoadOptions, LoadScenario, Pace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_runs_briefly_with_nothing_lost() {
    let target = harness::load::setup::embedded().await.expect("the embedded server");
    for scenario in [LoadScenario::MediaGet, LoadScenario::ChatImage, LoadScenario::CacheWrite, LoadScenario::Mixed] {
        for pace in [Pace::Closed { concurrency: 4 }, Pace::Open { rate: 20.0 }] {
            let options = LoadOptions::whole(scenario, pace, Duration::from_millis(1500), 200);
            let report = harness::load::run(&options, &target).await.expect("a report");
            assert_eq!(report.lost, 0, "{scenario:?} {pace:?}:\n{}", report.text());
            assert_eq!(report.errors, 0, "{scenario:?} {pace:?}:\n{}", report.text());
            assert!(report.ok > 0, "{scenario:?} {pace:?}:\n{}", report.text());
            assert!(report.text().ends_with("lost: 0\n"), "the report ends with lost: N");
            let json = report.json();
            assert!(json["latency"].as_array().is_some_and(|l| !l.is_empty()));
        }
    }
    target.stop().await;
}

#[tokio::test]
async fn a_picture_that_does_not_match_its_name_is_lost() {
    let app = axum::Router::new().route("/tool-media/{name}", axum::routing::get(|| async { "not the picture" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let recorder = Arc::new(Recorder::default());
    let http = Http::new(&format!("http://{addr}"), None);
    let name = format!("{}.png", "ab".repeat(32));
    let outcome = fetch_and_check(&http, &name, &recorder, false).await;
    assert_eq!(outcome, Err(harness::load::workloads::Failure::Integrity));
    harness::load::workloads::media_get(http, Arc::from(name.as_str()), Arc::clone(&recorder), Instant::now()).await;
    let recorded = Arc::try_unwrap(recorder).expect("one owner").finish();
    assert_eq!(recorded.lost, 2);
    assert_eq!(recorded.checked, 2);
}

#[tokio::test]
async fn load_refuses_a_host_that_is_not_loopback() {
    let refused = harness::load::setup::url("http://192.0.2.1:80", None, vec!["x".into()], false);
    assert!(refused.err().is_some_and(|e| e.to_string().contains("--allow-remote")));
    assert!(harness::load::setup::url("http://127.0.0.1:80", None, vec!["x".into()], false).is_ok());
}

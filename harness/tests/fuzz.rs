//! Fuzzing the picture route and references with hostile names (DESIGN §4, SPEC 9.2, 9.3, 10.2):
//! against a live reference server holding one cached picture, with a canary file outside the cache.
//! Properties: nothing but the cached file's exact name is ever a 200; the canary is never served; a
//! reference is 400 unless it is a well-formed name; the server stays healthy. Each property is also
//! run, from a fixed seed, against a server broken in the one way it exists to catch (`loose-names`,
//! `refs-lenient`), and must find a counterexample there.
//!
//! CI-sized by default (`MEDIACHECK_FUZZ_CASES`, default 96 per property; set it higher for long runs).

use std::sync::OnceLock;

use harness::http::Http;
use proptest::prelude::*;
use proptest::test_runner::{TestCaseResult, TestError, TestRng, TestRunner};
use reference_server::server::Wrap;
use serde_json::{Value, json};

struct Live {
    http: Http,
    name: String,
    runtime: tokio::runtime::Runtime,
    _server: reference_server::RunningServer,
    _fixture: fixtures::http::HttpFixture,
    _dir: tempfile::TempDir,
}

/// The reference server every property runs against.
fn live() -> &'static Live {
    static LIVE: OnceLock<Live> = OnceLock::new();
    LIVE.get_or_init(|| Live::start(|app, _| app))
}

impl Live {
    /// A server holding one cached picture, with a canary and its own configuration file beside the
    /// cache folder, behind `wrap` (a broken variant's layer, or nothing).
    fn start(wrap: Wrap) -> Live {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let (http, name, server, fixture, dir) = runtime.block_on(async {
            let fixture = fixtures::http::serve_http(Default::default(), 0, None).await.expect("fixture");
            let dir = tempfile::tempdir().expect("dir");
            std::fs::write(dir.path().join("canary.txt"), "CANARY-7f3a").expect("canary");
            let config =
                json!({"mcp": {"image_results": true}, "vision": {}, "mcp_servers": {"fake": {"url": fixture.url}}});
            let path = dir.path().join("fuzz.json");
            std::fs::write(&path, config.to_string()).expect("config");
            let overrides = reference_server::config::Overrides {
                port: Some(0),
                scripts: vec![
                    fixtures::scripts::call_script("fake__picture", &[]),
                    fixtures::scripts::answer_script("ok"),
                ],
                ..Default::default()
            };
            let loaded = reference_server::config::RunConfig::load(&path, &overrides).expect("config");
            let server = reference_server::server::start_wrapped(loaded.config, wrap).await.expect("server");
            let http = Http::new(&server.url(), None);
            let body = json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true, "stream": true});
            let reply = http.post_json("/v1/chat/completions", &body).send().await.expect("chat");
            let stream = harness::sse::EventStream::parse(&reply.text());
            let results = stream.results().expect("result events");
            let url = results.first().and_then(|r| r.media.first()).map(|m| m.url.clone()).expect("a cached picture");
            (http, url.trim_start_matches("/tool-media/").to_string(), server, fixture, dir)
        });
        Live { http, name, runtime, _server: server, _fixture: fixture, _dir: dir }
    }
}

fn cases() -> u32 {
    std::env::var("MEDIACHECK_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96)
}

/// Pieces an attacker strings together.
fn hostile_piece(name: &str) -> impl Strategy<Value = String> {
    let name = name.to_string();
    let hash = name[..64].to_string();
    prop_oneof![
        Just(name.clone()),
        Just(hash.clone()),
        Just(hash.to_uppercase()),
        Just(format!("{}{}", &hash[..32], hash[32..].to_uppercase())),
        Just("..".to_string()),
        Just("%2e%2e".to_string()),
        Just("%2E%2E".to_string()),
        Just("%252e%252e".to_string()),
        Just("/".to_string()),
        Just("%2f".to_string()),
        Just("%252f".to_string()),
        Just("\\".to_string()),
        Just("%5c".to_string()),
        Just("%00".to_string()),
        Just(".".to_string()),
        Just("\u{FF0E}".to_string()),
        Just("\u{2215}".to_string()),
        Just(".png".to_string()),
        Just(".PNG".to_string()),
        Just(".jpeg".to_string()),
        Just(".svg".to_string()),
        Just(".png.png".to_string()),
        Just("canary.txt".to_string()),
        Just("fuzz.tool-media".to_string()),
        Just("..%2fcanary.txt".to_string()),
        Just("%2e%2e%2ffuzz.json".to_string()),
        "[0-9a-fA-F]{0,80}",
        "[a-z0-9./%\\\\]{0,12}",
        (1usize..6000).prop_map(|n| "a".repeat(n)),
    ]
}

fn hostile_name(name: &str) -> impl Strategy<Value = String> {
    proptest::collection::vec(hostile_piece(name), 1..5).prop_map(|pieces| pieces.concat())
}

/// Percent-encodes what cannot stand in a request target (non-ASCII, controls, space, `?`, `#`).
fn as_path(name: &str) -> String {
    let mut out = String::new();
    for byte in name.bytes() {
        if byte.is_ascii_graphic() && byte != b'?' && byte != b'#' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `GET /tool-media/<name>`: 200 only for the cached picture's exact name, otherwise the JSON 404; never
/// the canary.
fn only_the_cached_name_is_served(live: &Live, name: &str) -> TestCaseResult {
    let path = format!("/tool-media/{}", as_path(name));
    let reply = live.runtime.block_on(live.http.get(&path).send()).expect("an answer");
    prop_assert!(!reply.text().contains("CANARY"), "the canary was served for {path}");
    if name == live.name {
        prop_assert_eq!(reply.status, 200);
    } else {
        prop_assert_eq!(reply.status, 404, "{}", path);
        prop_assert_eq!(reply.json().ok(), Some(json!({"error": {"type": "not_found", "message": "not found"}})));
    }
    Ok(())
}

/// A `strata-tool-media:<name>` reference is a 400 unless `<name>` is well formed; never the canary.
fn a_reference_is_400_unless_a_name(live: &Live, name: &str) -> TestCaseResult {
    let reference = format!("strata-tool-media:{name}");
    let body = json!({"messages": [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": [{"type": "text", "text": "r"}, {"type": "image_url", "image_url": {"url": reference}}]},
    ]});
    let reply = live.runtime.block_on(live.http.post_json("/v1/chat/completions", &body).send()).expect("an answer");
    let well_formed = name.len() > 64
        && name[..64].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && [".png", ".jpg", ".webp"].contains(&&name[64..]);
    let expected: u16 = if well_formed { 200 } else { 400 };
    prop_assert_eq!(reply.status, expected, "{}", reference);
    prop_assert!(!reply.text().contains("CANARY"));
    let answer: Value = reply.json().unwrap_or_default();
    if expected == 400 {
        prop_assert_eq!(&answer["error"]["type"], &json!("invalid_request_error"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn only_the_cached_name_is_ever_served(name in hostile_name(&live().name)) {
        only_the_cached_name_is_served(live(), &name)?;
    }

    #[test]
    fn a_reference_is_400_unless_it_is_a_name(name in hostile_name(&live().name)) {
        a_reference_is_400_unless_a_name(live(), &name)?;
    }
}

/// Runs `property` from a fixed seed against a server broken by `variant` (its layer in front) and
/// returns the smallest name it failed for; panics when the property held.
fn counterexample(variant: Wrap, property: fn(&Live, &str) -> TestCaseResult) -> String {
    let broken = Live::start(variant);
    let config = ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() };
    let mut runner = TestRunner::new_with_rng(config.clone(), TestRng::deterministic_rng(config.rng_algorithm));
    match runner.run(&hostile_name(&broken.name), |name| property(&broken, &name)) {
        Err(TestError::Fail(_, name)) => name,
        other => panic!("the property held against the broken server: {other:?}"),
    }
}

#[test]
fn the_served_name_property_catches_loose_names() {
    let name = counterexample(fixtures::broken::wire::loose_names, only_the_cached_name_is_served);
    assert!(name.contains("%2f"), "a traversal is the counterexample, not {name}");
}

#[test]
fn the_reference_property_catches_lenient_references() {
    let name = counterexample(fixtures::broken::wire::refs_lenient, a_reference_is_400_unless_a_name);
    assert!(!name.is_empty());
}

#[test]
fn the_server_stays_healthy() {
    let live = live();
    let reply = live.runtime.block_on(live.http.get("/health").send()).expect("health");
    assert_eq!(reply.status, 200);
}

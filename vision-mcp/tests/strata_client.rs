//! Optional: Strata's own MCP client (`serve/mcp.py` of a Strata checkout named by `STRATA_SOURCE`)
//! against vision-mcp over local TCP, with OpenAI mocked: initialize and tools/list through Strata's
//! `python -m serve.mcp CONFIG` (strata-wire C-F9), then one tools/call through `McpHub.call` (C-I).
//! Without `STRATA_SOURCE` it says it is skipped, and why, and checks nothing; run it with
//! `STRATA_SOURCE=/path/to/Strata cargo test --test strata_client -- --nocapture`.

mod support;

use support::{Setup, TOKEN, answer, openai, png, requests};
use tokio_util::sync::CancellationToken;
use vision_mcp::guard::Guard;
use vision_mcp::server::http_app;

const CALL: &str = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
from serve import mcp
config = json.load(open(sys.argv[2]))
hub = mcp.hub_from_config(config)
hub.start(wait=True)
try:
    result = hub.call("vision-mcp__analyze_image", {"image": "a.png", "prompt": "What is shown?", "detail": "low"})
    print(json.dumps(result))
finally:
    hub.close()
"#;

#[tokio::test]
async fn strata_own_mcp_client_initializes_lists_and_calls_the_tool() {
    let Ok(source) = std::env::var("STRATA_SOURCE") else {
        eprintln!(
            "skipped: set STRATA_SOURCE to a Strata checkout (the folder that holds serve/mcp.py) to run \
             Strata's own MCP client against vision-mcp"
        );
        return;
    };
    assert!(std::path::Path::new(&source).join("serve/mcp.py").is_file(), "{source}/serve/mcp.py is missing");
    let setup = Setup::new(20, 3);
    setup.write("a.png", &png(40, 30));
    let upstream = openai(answer("- a small gradient", "completed")).await;
    let stop = CancellationToken::new();
    let app = http_app(setup.analyzer(&upstream.uri()), Guard::new(TOKEN, &setup.settings.allowed_hosts), stop.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let stopped = stop.clone();
    tokio::spawn(async move { axum::serve(listener, app).with_graceful_shutdown(stopped.cancelled_owned()).await });

    let config = setup.dir.path().join("strata.json");
    let entry = serde_json::json!({"url": url, "headers": {"Authorization": format!("Bearer {TOKEN}")}});
    std::fs::write(&config, serde_json::json!({"mcp_servers": {"vision-mcp": entry}}).to_string()).expect("config");

    let status = tokio::process::Command::new("python3")
        .args(["-m", "serve.mcp"])
        .arg(&config)
        .current_dir(&source)
        .output()
        .await
        .expect("python3 runs");
    let printed = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{printed}\n{}", String::from_utf8_lossy(&status.stderr));
    // Strata prints its "[strata] MCP server …" lines first, then the status as indented JSON.
    let json_start = printed.find("\n{").map(|at| at + 1).or_else(|| printed.starts_with('{').then_some(0));
    let hub: serde_json::Value =
        serde_json::from_str(&printed[json_start.expect("a JSON object after the log lines")..]).expect("JSON");
    assert_eq!(hub["servers"][0]["status"], "ready", "{hub}");
    assert_eq!(hub["servers"][0]["tools"][0]["tool"], "analyze_image", "{hub}");

    let call = tokio::process::Command::new("python3")
        .args(["-c", CALL, &source])
        .arg(&config)
        .current_dir(&source)
        .output()
        .await
        .expect("python3 runs");
    let printed = String::from_utf8_lossy(&call.stdout);
    assert!(call.status.success(), "{printed}\n{}", String::from_utf8_lossy(&call.stderr));
    let last = printed.lines().last().unwrap_or_default();
    let result: serde_json::Value = serde_json::from_str(last).expect("the call's result as JSON, last line");
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["text"], "- a small gradient", "{result}");
    assert_eq!(requests(&upstream).await.len(), 1);
    stop.cancel();
}

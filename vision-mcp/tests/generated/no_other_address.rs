//! The real binary sends to `https://api.openai.com` and nowhere else: `OPENAI_BASE_URL` and the proxy
//! variables (`HTTPS_PROXY`, `https_proxy`, `ALL_PROXY`, `HTTP_PROXY`) are ignored (README, "Privacy").
//! So that no test reaches OpenAI, the binary runs in a network namespace of its own (`unshare -rn`)
//! whose only interface is its loopback, where a listener waits on the port every one of those
//! variables names. A call must fail as unreachable (the namespace has no route out) and the listener
//! must see no connection; a binary that honoured any of them would connect to it.

use super::support;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::TokioChildProcess;
use support::{KEY, Setup, png};

/// The port the variables name, inside the namespace.
const PORT: u16 = 18_443;

/// `unshare`'s arguments: a user, network and process namespace of its own, so the listener dies with
/// the binary (the first process of the namespace) and nothing outlives the test.
const UNSHARE: [&str; 4] = ["--fork", "--pid", "--kill-child", "-rn"];

/// Whether this machine can make those namespaces and has what runs inside (`ip`, `python3`); a
/// container may forbid the first.
fn namespaces_work() -> bool {
    let ran = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    ran("unshare", &[&UNSHARE[..], &["ip", "link", "set", "lo", "up"]].concat())
        && ran("python3", &["-c", "import socket"])
}

#[tokio::test]
async fn the_binary_ignores_openai_base_url_and_proxy_variables() {
    if !namespaces_work() {
        // Said loudly: CI runs where namespaces work (ci/vision-lan.sh needs them too).
        eprintln!("SKIPPED: unshare (user, network and process namespaces), ip or python3 is missing here");
        return;
    }
    let setup = Setup::new(20, 3);
    setup.write("a.png", &png(20, 20));
    let touched = setup.dir.path().join("touched");
    // Inside the namespace: loopback up, a listener that writes a file on its first connection (and
    // gives up after 30 s, holding none of the test's pipes; it dies with the binary anyway), then the
    // binary over stdio.
    let listening = setup.dir.path().join("listening");
    let listener = format!(
        "import socket\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1',{PORT}))\ns.listen()\nopen({:?},'w').write('yes')\ns.settimeout(30)\nc,_=s.accept()\nopen({:?},'w').write('connected')\n",
        listening.display().to_string(),
        touched.display().to_string()
    );
    // The binary starts once the listener listens (within 10 s).
    let script = format!(
        "ip link set lo up && (python3 -c \"$LISTENER\" </dev/null >/dev/null 2>&1 &) && for _ in $(seq 200); do [ -e {:?} ] && break; sleep 0.05; done && exec {:?}",
        listening.display().to_string(),
        env!("CARGO_BIN_EXE_vision-mcp")
    );
    let url = format!("http://127.0.0.1:{PORT}");
    let mut command = tokio::process::Command::new("unshare");
    command
        .args(UNSHARE)
        .args(["sh", "-c", &script])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("LISTENER", listener)
        .env("OPENAI_API_KEY", KEY)
        .env("VISION_IMAGE_ROOT", &setup.root)
        .env("VISION_USAGE_DB", setup.dir.path().join("usage.sqlite3"))
        .env("OPENAI_BASE_URL", &url)
        .env("OPENAI_API_BASE", &url);
    for proxy in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"] {
        command.env(proxy, &url);
    }
    let client = ClientConfig::new(ClientCapabilities::default(), Implementation::new("test-client", "1"));
    let service = client.serve(TokioChildProcess::new(command).expect("spawned")).await.expect("initialized");
    let mut arguments = serde_json::Map::new();
    arguments.insert("image".into(), "a.png".into());
    arguments.insert("prompt".into(), "What is in it?".into());
    let result = service
        .peer()
        .call_tool(CallToolRequestParams::new("analyze_image").with_arguments(arguments))
        .await
        .expect("a result");
    let text: String = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let _ = service.cancel().await;
    assert!(listening.exists(), "the listener in the namespace never listened");
    assert!(!touched.exists(), "the binary connected to {url}, named only by OPENAI_BASE_URL or a proxy variable");
    assert_eq!(result.is_error, Some(true), "{text}");
    assert!(text.contains("could not be reached"), "the namespace has no route to api.openai.com: {text}");
}

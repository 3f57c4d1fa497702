//! SPEC §5 against MCP servers nobody on this team wrote: `@modelcontextprotocol/server-everything`
//! (npm, stdio) and a server on the official Python SDK (`mcp` 2.x, `MCPServer`, Streamable HTTP).
//! `ci/install-interop.sh` installs both, pinned, under `ci/interop/`; a missing one fails these tests.

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fixtures::scripts::{answer_script, call_script};
use serde_json::{Value, json};
use support::{TestServer, chat_stream, client, start};

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ci/interop")
}

fn required(path: PathBuf) -> PathBuf {
    assert!(path.exists(), "{} is missing: run ci/install-interop.sh (ci/test.sh does)", path.display());
    path
}

async fn settled(server: &TestServer) -> Value {
    for _ in 0..1500 {
        let status: Value = client().get(server.url("/mcp")).send().await.expect("sent").json().await.expect("json");
        if status["servers"].as_array().expect("list").iter().all(|s| s["status"] != "starting") {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the interop server never settled");
}

fn results(sse: &support::Sse) -> Vec<Value> {
    sse.events().into_iter().filter(|e| e["event"] == "result").collect()
}

#[tokio::test]
async fn spec_5_server_everything_over_stdio() {
    let entry = required(interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"));
    let server = start(json!({
        "mcp_servers": {"everything": {"command": "node", "args": [entry, "stdio"]}},
        "mcp": {"start_timeout_s": 60},
        "engine": {"scripts": [
            call_script("everything__echo", &[("message", "hi there")]),
            call_script("everything__get-sum", &[("a", "2"), ("b", "40")]),
            call_script("everything__get-tiny-image", &[]),
            answer_script("done"),
        ]},
    }))
    .await;
    let status = settled(&server).await;
    let everything = &status["servers"][0];
    assert_eq!(everything["status"], "ready", "{status}");
    assert_eq!(everything["info"]["name"], "mcp-servers/everything");
    let names: Vec<&str> =
        everything["tools"].as_array().expect("tools").iter().map(|t| t["name"].as_str().expect("n")).collect();
    assert!(names.contains(&"everything__echo") && names.contains(&"everything__get-tiny-image"), "{names:?}");
    let sse = chat_stream(&server, json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true})).await;
    let results = results(&sse);
    assert_eq!(results.len(), 3, "{:?}", sse.events());
    assert_eq!(results[0]["text"], "Echo: hi there");
    assert!(results[1]["text"].as_str().expect("text").contains("42"), "{}", results[1]["text"]);
    let image_text = results[2]["text"].as_str().expect("text");
    assert!(
        image_text.contains("[image (image/png, ") && image_text.contains(" bytes): not shown to the model]"),
        "{image_text}"
    );
    server.server.stop().await;
}

struct PythonServer {
    child: Child,
    url: String,
}

impl Drop for PythonServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python_server() -> PythonServer {
    let python = required(interop_dir().join(".venv/bin/python"));
    let script = required(interop_dir().join("python_server.py"));
    let mut child =
        Command::new(python).arg(script).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("python starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("ready line");
    let url = line.trim().strip_prefix("listening on ").expect(&line).to_string();
    PythonServer { child, url }
}

#[tokio::test]
async fn spec_5_a_python_sdk_server_over_streamable_http() {
    let python = python_server();
    let server = start(json!({
        "mcp_servers": {"py": {"url": python.url}},
        "mcp": {"start_timeout_s": 60},
        "engine": {"scripts": [
            call_script("py__shout", &[("text", "quiet")]),
            call_script("py__red_square", &[]),
            answer_script("done"),
        ]},
    }))
    .await;
    let status = settled(&server).await;
    assert_eq!(status["servers"][0]["status"], "ready", "{status}");
    assert_eq!(status["servers"][0]["info"]["name"], "python-interop");
    let sse = chat_stream(&server, json!({"messages": [{"role": "user", "content": "go"}], "strata_mcp": true})).await;
    let results = results(&sse);
    assert_eq!(results[0]["text"], "QUIET");
    let image_text = results[1]["text"].as_str().expect("text");
    assert!(
        image_text.starts_with("[image (image/png, ") && image_text.ends_with(" bytes): not shown to the model]"),
        "{image_text}"
    );
}

/// A CA and a leaf certificate for 127.0.0.1 signed by it (openssl), in `dir`: (ca.pem, leaf.pem, leaf.key).
fn private_ca(dir: &std::path::Path) -> (PathBuf, PathBuf, PathBuf) {
    let run = |args: &[&str]| {
        let status =
            Command::new("openssl").args(args).current_dir(dir).stdin(Stdio::null()).stderr(Stdio::null()).status();
        assert!(status.expect("openssl runs").success(), "openssl {args:?}");
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "1",
        "-subj",
        "/CN=test CA",
    ]);
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n").expect("ext");
    run(&["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1"]);
    run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "leaf.pem",
        "-days",
        "1",
        "-extfile",
        "ext.cnf",
    ]);
    (dir.join("ca.pem"), dir.join("leaf.pem"), dir.join("leaf.key"))
}

/// `ci/interop/tls_proxy.py` in front of `upstream` (host:port): the https base it listens on.
fn tls_proxy(upstream: &str, cert: &std::path::Path, key: &std::path::Path) -> PythonServer {
    let script = required(interop_dir().join("tls_proxy.py"));
    let mut child = Command::new("python3")
        .arg(script)
        .args([upstream.as_ref(), cert.as_os_str(), key.as_os_str()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("ready line");
    let url = line.trim().strip_prefix("listening on ").expect(&line).to_string();
    PythonServer { child, url }
}

async fn hub_status(base: &str) -> Value {
    support::settled_binary(base, "tls-test-key").await
}

#[tokio::test]
async fn spec_5_1_an_https_mcp_server_with_a_private_ca_and_a_clear_error_without_it() {
    let python = python_server();
    let upstream = python.url.strip_prefix("http://").and_then(|rest| rest.split_once('/')).expect("a URL").0;
    let dir = tempfile::tempdir().expect("dir");
    let (ca, leaf, key) = private_ca(dir.path());
    let tls = tls_proxy(upstream, &leaf, &key);
    let path = python.url.split_once("://").and_then(|(_, rest)| rest.split_once('/')).map(|(_, p)| p).unwrap_or("");
    let config = json!({"api_key": "tls-test-key", "mcp_servers": {"remote": {"url": format!("{}/{path}", tls.url)}}});

    // Trusted through SSL_CERT_FILE, as any rustls/OpenSSL program on Linux: the server is ready.
    let trusting = support::spawn_binary(dir.path(), &config, &[], &[("SSL_CERT_FILE", ca.as_os_str())], Stdio::null());
    let status = hub_status(&trusting.base).await;
    drop(trusting);
    assert_eq!(status["servers"][0]["status"], "ready", "{status}");
    assert_eq!(status["servers"][0]["info"]["name"], "python-interop", "{status}");

    // Without the CA: left out, with the certificate problem and the fix in one line.
    let refusing = support::spawn_binary(dir.path(), &config, &[], &[], Stdio::null());
    let status = hub_status(&refusing.base).await;
    drop(refusing);
    assert_eq!(status["servers"][0]["status"], "failed", "{status}");
    let error = status["servers"][0]["error"].as_str().expect("an error");
    assert!(error.starts_with(&format!("could not reach {}", tls.url)), "{error}");
    assert!(error.contains("invalid peer certificate") && error.contains("SSL_CERT_FILE"), "{error}");
    assert!(!error.contains("rmcp::") && !error.contains("WorkerTransport"), "no SDK type names: {error}");
}

/// Regression: on a system without CA certificates (a minimal container), building the HTTP client for
/// an MCP server panicked the hub's thread; now that server is failed with the reason and the rest of
/// the server works.
#[tokio::test]
async fn spec_5_3_no_ca_certificates_fails_the_http_server_without_a_panic() {
    let dir = tempfile::tempdir().expect("dir");
    let config = json!({"api_key": "tls-test-key", "mcp_servers": {"remote": {"url": "http://127.0.0.1:9/mcp"}}});
    let nowhere = dir.path().join("no-certificates");
    let env = [("SSL_CERT_FILE", nowhere.as_os_str()), ("SSL_CERT_DIR", nowhere.as_os_str())];
    let stderr = dir.path().join("stderr");
    let server = support::spawn_binary(
        dir.path(),
        &config,
        &[],
        &env,
        Stdio::from(std::fs::File::create(&stderr).expect("a file")),
    );
    let status = hub_status(&server.base).await;
    let health = reqwest::get(format!("{}/health", server.base)).await.expect("health answers").status();
    drop(server);
    assert_eq!(status["servers"][0]["status"], "failed", "{status}");
    let error = status["servers"][0]["error"].as_str().expect("an error");
    assert!(error.starts_with("could not reach http://127.0.0.1:9/mcp: no HTTP client"), "{error}");
    assert_eq!(health, 200);
    let logged = std::fs::read_to_string(&stderr).expect("stderr");
    assert!(!logged.contains("panicked"), "{logged}");
}

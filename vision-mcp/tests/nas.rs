//! What a NAS owner meets first: refusals that name the setting to change (token, Host, Origin,
//! permissions), `check` failing loudly, and a cancelled call aborting its OpenAI request.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, Implementation};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::TokioChildProcess;
use support::{KEY, Setup, TOKEN, png};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use vision_mcp::guard::Guard;
use vision_mcp::server::{VisionServer, http_app};

fn binary() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_vision-mcp"))
}

fn call(image: &str) -> CallToolRequestParams {
    let mut arguments = serde_json::Map::new();
    arguments.insert("image".into(), image.into());
    arguments.insert("prompt".into(), "What does it say?".into());
    CallToolRequestParams::new("analyze_image").with_arguments(arguments)
}

fn client() -> ClientConfig {
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("test-client", "1"))
}

/// Serves the HTTP app with these allowed hosts; the token is [`TOKEN`]. Stops when dropped.
struct Served {
    url: String,
    stop: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve(setup: &Setup, allowed: &[&str]) -> Served {
    serve_guarded(setup, |allowed| Guard::new(TOKEN, allowed), allowed).await
}

async fn serve_guarded(setup: &Setup, guard: impl Fn(&[String]) -> Guard, allowed: &[&str]) -> Served {
    let stop = CancellationToken::new();
    let allowed: Vec<String> = allowed.iter().map(|h| h.to_string()).collect();
    let app = http_app(setup.analyzer("http://127.0.0.1:9"), guard(&allowed), stop.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let stopped = stop.clone();
    tokio::spawn(async move {
        let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        axum::serve(listener, app).with_graceful_shutdown(async move { stopped.cancelled().await }).await
    });
    Served { url, stop }
}

async fn refusal(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.expect("a JSON body");
    (status, body["error"].as_str().unwrap_or_default().to_string())
}

#[tokio::test]
async fn every_refusal_names_the_setting_that_admits_the_request() {
    let setup = Setup::new(20, 3);
    let server = serve(&setup, &["localhost:*", "127.0.0.1:*"]).await;
    let bearer = format!("Bearer {TOKEN}");
    let (status, message) = refusal(&server.url, &[("host", "192.168.1.20:8102"), ("authorization", &bearer)]).await;
    assert_eq!(status, 403);
    assert!(message.contains("MCP_ALLOWED_HOSTS") && message.contains("SERVER_IP"), "{message}");
    let (status, message) =
        refusal(&server.url, &[("origin", "http://evil.example:8102"), ("authorization", &bearer)]).await;
    assert_eq!(status, 403);
    assert!(message.contains("MCP_ALLOWED_HOSTS") && message.contains("SERVER_IP"), "{message}");
    let (status, message) = refusal(&server.url, &[("authorization", "Bearer wrong")]).await;
    assert_eq!(status, 401);
    assert!(message.contains("VISION_MCP_TOKEN"), "{message}");
    assert!(!message.contains(TOKEN) && !message.contains("wrong"), "{message}");
}

#[tokio::test]
async fn check_says_in_one_line_why_it_was_refused_and_fails_when_the_call_is_refused() {
    let setup = Setup::new(20, 3);
    setup.write("a.png", &png(20, 20));
    let server = serve(&setup, &["localhost:*", "127.0.0.1:*"]).await;
    let wrong = binary().args(["check", &server.url]).env("VISION_MCP_TOKEN", "wrong").output().await.expect("runs");
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line, no SDK dump: {stderr}");
    assert!(stderr.contains("HTTP 401") && stderr.contains("VISION_MCP_TOKEN"), "{stderr}");

    let nas_only = serve(&setup, &["nas:*"]).await;
    let host = binary().args(["check", &nas_only.url]).env("VISION_MCP_TOKEN", TOKEN).output().await.expect("runs");
    let stderr = String::from_utf8_lossy(&host.stderr);
    assert_eq!(host.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("HTTP 403") && stderr.contains("SERVER_IP"), "{stderr}");

    let unreachable =
        binary().args(["check", "http://127.0.0.1:9/mcp"]).env("VISION_MCP_TOKEN", TOKEN).output().await.expect("runs");
    let stderr = String::from_utf8_lossy(&unreachable.stderr);
    assert_eq!(unreachable.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("could not reach") && stderr.contains("MCP_BIND_IP"), "{stderr}");

    // The real call is refused (no such picture): check says so and exits 1.
    let refused = binary()
        .args(["check", &server.url, "--image", "missing.png"])
        .env("VISION_MCP_TOKEN", TOKEN)
        .output()
        .await
        .expect("runs");
    let stdout = String::from_utf8_lossy(&refused.stdout);
    assert_eq!(refused.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("refused:\nthere is no such picture"), "{stdout}");
}

/// A stand-in for OpenAI that reads one request and never answers; it reports when the client hung up.
async fn silent_openai() -> (String, tokio::sync::oneshot::Receiver<Duration>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let (hung_up, seen) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else { return };
        let started = std::time::Instant::now();
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let _ = socket.shutdown().await;
        let _ = hung_up.send(started.elapsed());
    });
    (base, seen)
}

#[tokio::test]
async fn a_cancelled_call_aborts_its_openai_request_and_stays_counted() {
    let setup = Setup::new(20, 3);
    setup.write("a.png", &png(20, 20));
    let (base, hung_up) = silent_openai().await;
    let analyzer = setup.analyzer(&base);
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let handler = VisionServer::new(analyzer.clone());
    tokio::spawn(async move {
        if let Ok(service) = handler.serve(tokio::io::split(server_end)).await {
            let _ = service.waiting().await;
        }
    });
    let service = client().serve(tokio::io::split(client_end)).await.expect("initialized");
    let handle = service
        .peer()
        .send_cancellable_request(
            ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(call("a.png"))),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("sent");
    // Wait until the request reached the stand-in (the budget is reserved before it is sent).
    for _ in 0..200 {
        if analyzer.budget().used_today() == Ok(1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    handle.cancel(Some("Stop".into())).await.expect("cancelled");
    let held = tokio::time::timeout(Duration::from_secs(10), hung_up)
        .await
        .expect("the request to OpenAI is aborted long before its 45 s timeout")
        .expect("the stand-in saw it");
    assert!(held < Duration::from_secs(10), "{held:?}");
    assert_eq!(analyzer.budget().used_today(), Ok(1), "a cancelled call stays counted");
    let _ = service.cancel().await;
}

/// vision-mcp run as UID/GID 10001 (the container's user) through util-linux's setpriv. Needs root,
/// as CI has; anywhere else the test says so and fails rather than pass without looking.
fn as_container_user() -> tokio::process::Command {
    let root = std::fs::read_to_string("/proc/self/status")
        .map(|s| s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0")))
        .unwrap_or(false);
    let setpriv = std::process::Command::new("setpriv").arg("--version").output().is_ok();
    assert!(root && setpriv, "this test runs vision-mcp as UID 10001: it needs root and setpriv (util-linux)");
    let mut command = tokio::process::Command::new("setpriv");
    command.args(["--reuid=10001", "--regid=10001", "--clear-groups", "--", env!("CARGO_BIN_EXE_vision-mcp")]);
    command
}

fn chmod(path: &std::path::Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[tokio::test]
async fn permission_denied_is_reported_as_such_with_the_uid_hint() {
    let setup = Setup::new(20, 3);
    chmod(setup.dir.path(), 0o755);
    chmod(&setup.root, 0o755);
    chmod(&setup.write("open.png", &png(20, 20)), 0o644);
    chmod(&setup.write("private.png", &png(20, 20)), 0o600);
    setup.write("locked/inside.png", &png(20, 20));
    chmod(&setup.root.join("locked"), 0o700);
    let db = tempfile::tempdir().expect("db dir");
    chmod(db.path(), 0o777);
    let mut command = as_container_user();
    command
        .env_clear()
        .env("OPENAI_API_KEY", KEY)
        .env("VISION_IMAGE_ROOT", &setup.root)
        .env("VISION_USAGE_DB", db.path().join("usage.sqlite3"));
    let log = std::fs::File::create(db.path().join("stdio.log")).expect("log file");
    let (transport, _) = TokioChildProcess::builder(command).stderr(log).spawn().expect("spawned");
    let service = client().serve(transport).await.expect("initialized");
    let text = |r: rmcp::model::CallToolResult| -> String {
        r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect()
    };
    for name in ["private.png", "locked/inside.png"] {
        let result = service.peer().call_tool(call(name)).await.expect("a result");
        assert_eq!(result.is_error, Some(true));
        let text = text(result);
        assert!(text.starts_with("permission denied") && text.contains("10001"), "{name}: {text}");
        assert!(text.contains("VISION_IMAGE_GID"), "{text}");
    }
    let missing = text(service.peer().call_tool(call("gone.png")).await.expect("a result"));
    assert_eq!(missing, "there is no such picture in the image folder");
    let _ = service.cancel().await;
    let log = std::fs::read_to_string(db.path().join("stdio.log")).expect("the server's log");
    assert_eq!(log.matches("permission denied reading a picture").count(), 2, "{log}");
    assert!(!log.contains("private.png") && !log.contains("inside.png"), "no names in the log: {log}");

    // A share the user cannot enter: the server still starts, and says why every call will fail.
    chmod(&setup.root, 0o700);
    let mut command = as_container_user();
    command
        .args(["--http", "--port", "0"])
        .env_clear()
        .env("OPENAI_API_KEY", KEY)
        .env("VISION_MCP_TOKEN", TOKEN)
        .env("VISION_IMAGE_ROOT", &setup.root)
        .env("VISION_USAGE_DB", db.path().join("usage.sqlite3"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("spawned");
    let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut stdout, &mut line).await.expect("the ready line");
    assert!(line.starts_with("listening on"), "{line}");
    child.start_kill().expect("killed");
    let output = child.wait_with_output().await.expect("stopped");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("permission denied") && stderr.contains("uid 10001"), "{stderr}");
    assert!(!stderr.contains(&setup.root.display().to_string()), "no path in the log: {stderr}");
}

#[tokio::test]
async fn slow_and_surplus_connections_are_dropped_and_the_server_recovers() {
    let setup = Setup::new(20, 3);
    let (_child, line) = support::spawn_http(&setup).await;
    let url = line.strip_prefix("listening on ").expect(&line).to_string();
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    // 64 clients that never finish their headers fill every slot…
    let mut slow = Vec::new();
    for _ in 0..64 {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.expect("connect");
        stream.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").await.expect("partial");
        slow.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // …so one more is closed at once, without an answer.
    let mut over = tokio::net::TcpStream::connect(&addr).await.expect("the kernel accepts");
    let mut seen = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), over.read_to_end(&mut seen)).await;
    assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "closed at once: {read:?} {seen:?}");
    // After the 10 s header timeout the slow ones are gone and an honest client is served.
    let dropped = tokio::time::timeout(Duration::from_secs(20), slow[0].read_to_end(&mut seen)).await;
    assert!(dropped.is_ok(), "a client that never finished its headers was dropped");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let status = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(TOKEN)
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        .send()
        .await
        .expect("served")
        .status();
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_body_that_trickles_is_408_and_its_connection_freed() {
    let setup = Setup::new(20, 3);
    let guard = |allowed: &[String]| Guard::new(TOKEN, allowed).with_body_timeout(Duration::from_secs(1));
    let server = serve_guarded(&setup, guard, &["127.0.0.1:*"]).await;
    let addr = server.url.trim_start_matches("http://").trim_end_matches("/mcp").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\":"
    );
    slow.write_all(head.as_bytes()).await.expect("headers and a little body");
    let started = std::time::Instant::now();
    let mut seen = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut seen)).await;
    let answer = String::from_utf8_lossy(&seen);
    assert!(read.is_ok(), "the connection was freed");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("the request body did not arrive in time"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[tokio::test]
async fn check_reads_only_the_start_of_a_refusal_that_never_ends() {
    // A 403 whose body streams for ever: check reads its start and says so at once (reading all of
    // it would take until the 15 s timeout, and as much memory as the server sends meanwhile).
    let endless = axum::Router::new().fallback(|| async {
        let chunks = futures::stream::repeat_with(|| Ok::<_, std::io::Error>(vec![b'x'; 65536]));
        (axum::http::StatusCode::FORBIDDEN, axum::body::Body::from_stream(chunks))
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, endless).await });
    let started = std::time::Instant::now();
    let output = binary().args(["check", &url]).env("VISION_MCP_TOKEN", TOKEN).output().await.expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("refused the check (HTTP 403): no explanation given"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(8), "check took {:?}", started.elapsed());
}

/// check reads the first 16 KiB of a refusal and no more: a JSON error of exactly 16,384 bytes is
/// read and its message shown, one of 16,383 too, and one of 16,385 bytes is cut, so it is "no
/// explanation given". The body comes in two chunks, 1,000 bytes and the rest, so the cut must count
/// what the first one brought.
#[tokio::test]
async fn check_reads_a_refusal_up_to_16_kib_and_not_a_byte_more() {
    const CAP: usize = 16 * 1024;
    for (size, shown) in [(CAP - 1, true), (CAP, true), (CAP + 1, false)] {
        let frame = r#"{"error":""}"#.len();
        let message = format!("refused: {}", "é".repeat((size - frame - 9) / 2)) + &"x".repeat((size - frame - 9) % 2);
        let body = serde_json::json!({ "error": message }).to_string();
        assert_eq!(body.len(), size);
        let refusing = axum::Router::new().fallback(move || {
            let (first, rest) = body.as_bytes().split_at(1000);
            let chunks = [Ok::<_, std::io::Error>(first.to_vec()), Ok(rest.to_vec())];
            std::future::ready((
                axum::http::StatusCode::FORBIDDEN,
                axum::body::Body::from_stream(futures::stream::iter(chunks)),
            ))
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, refusing).await });
        let output = binary().args(["check", &url]).env("VISION_MCP_TOKEN", TOKEN).output().await.expect("runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{size}: {stderr}");
        let expected = if shown { message.clone() } else { "no explanation given".into() };
        assert!(stderr.contains(&format!("refused the check (HTTP 403): {expected}")), "{size}: {stderr}");
    }
}

/// Runs `command` over stdio with stdin closed, so it stops after its startup: its exit code and its log.
async fn startup(mut command: tokio::process::Command) -> (Option<i32>, String) {
    let output = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).kill_on_drop(true).output();
    let output = tokio::time::timeout(Duration::from_secs(20), output).await.expect("stops").expect("ran");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The startup warning about the usage database (`VISION_USAGE_DB cannot be used`) is printed when the
/// file cannot be opened — here its folder is a regular file — and only then: a usable database
/// starts quietly. The binary runs over stdio with stdin closed, so it stops after its startup.
#[tokio::test]
async fn the_usage_db_warning_is_printed_when_it_cannot_be_used_and_only_then() {
    const WARNING: &str = "VISION_USAGE_DB cannot be used";
    let setup = Setup::new(20, 3);
    let not_a_folder = setup.dir.path().join("not-a-folder");
    std::fs::write(&not_a_folder, b"a file").expect("file");
    for (db, warned) in [(setup.dir.path().join("usage.sqlite3"), false), (not_a_folder.join("usage.sqlite3"), true)] {
        let mut command = support::stdio_command(&setup);
        command.env("VISION_USAGE_DB", &db);
        let (_, stderr) = startup(command).await;
        assert_eq!(stderr.matches(WARNING).count(), usize::from(warned), "{}: {stderr}", db.display());
    }
}

/// Refusals are logged once per client, reason and value, each naming the setting that would admit
/// it: a wrong token three times is one line naming VISION_MCP_TOKEN (not the host settings), and a
/// refused Host twice is one line naming MCP_ALLOWED_HOSTS.
#[tokio::test]
async fn each_refusal_is_logged_once_naming_the_setting_that_admits_it() {
    let setup = Setup::new(20, 3);
    let (mut child, line) = support::spawn_http(&setup).await;
    let url = line.strip_prefix("listening on ").expect(&line).to_string();
    let client = reqwest::Client::builder().no_proxy().build().expect("client");
    let post = |token: &str, host: Option<&str>| {
        let mut request = client
            .post(&url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        if let Some(host) = host {
            request = request.header("host", host);
        }
        request.send()
    };
    // A 401 says how to authenticate (RFC 9110 11.6.1: WWW-Authenticate: Bearer); a 403 does not.
    for _ in 0..3 {
        let refused = post("wrong-token", None).await.expect("answered");
        assert_eq!(refused.status(), 401);
        assert_eq!(refused.headers().get("www-authenticate").map(|v| v.as_bytes()), Some(&b"Bearer"[..]));
    }
    for _ in 0..2 {
        let refused = post(TOKEN, Some("evil.example:8000")).await.expect("answered");
        assert_eq!(refused.status(), 403);
        assert_eq!(refused.headers().get("www-authenticate"), None);
    }
    child.start_kill().expect("killed");
    let _ = child.wait().await;
    let log = std::fs::read_to_string(support::http_log(&setup)).expect("the log");
    let token_lines: Vec<_> = log.lines().filter(|l| l.contains("without a valid token")).collect();
    assert_eq!(token_lines.len(), 1, "{log}");
    assert!(token_lines[0].contains("VISION_MCP_TOKEN") && !token_lines[0].contains("MCP_ALLOWED_HOSTS"), "{log}");
    let host_lines: Vec<_> = log.lines().filter(|l| l.contains("evil.example")).collect();
    assert_eq!(host_lines.len(), 1, "{log}");
    assert!(host_lines[0].contains("MCP_ALLOWED_HOSTS"), "{log}");
    assert!(!log.contains("wrong-token") && !log.contains(TOKEN), "no token in the log: {log}");
}

/// The image folder is checked at startup: missing, or a file, stops the server (exit 2, one line);
/// a folder it may not enter — here its parent is closed to UID 10001 — is a warning and the server
/// runs on; a usable folder starts without either.
#[tokio::test]
async fn the_image_folder_is_checked_at_startup() {
    let setup = Setup::new(20, 3);
    let a_file = setup.write("a.png", &png(20, 20));
    let run = |mut command: tokio::process::Command, root: std::path::PathBuf| {
        command.env("VISION_IMAGE_ROOT", root);
        startup(command)
    };
    for root in [setup.dir.path().join("missing"), a_file] {
        let (code, stderr) = run(support::stdio_command(&setup), root).await;
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("VISION_IMAGE_ROOT: not a folder"), "{stderr}");
    }
    let (code, stderr) = run(support::stdio_command(&setup), setup.root.clone()).await;
    assert_ne!(code, Some(2), "{stderr}");
    assert!(!stderr.contains("VISION_IMAGE_ROOT"), "a usable folder starts quietly: {stderr}");

    let closed = tempfile::tempdir().expect("dir");
    let inner = closed.path().join("share");
    std::fs::create_dir(&inner).expect("share");
    chmod(&inner, 0o755);
    chmod(closed.path(), 0o700);
    let db = tempfile::tempdir().expect("db dir");
    chmod(db.path(), 0o777);
    let mut command = as_container_user();
    command.env_clear().env("OPENAI_API_KEY", KEY).env("VISION_USAGE_DB", db.path().join("usage.sqlite3"));
    let (code, stderr) = run(command, inner).await;
    assert_ne!(code, Some(2), "{stderr}");
    assert!(stderr.contains("VISION_IMAGE_ROOT: permission denied") && stderr.contains("uid 10001"), "{stderr}");
}

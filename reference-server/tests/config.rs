//! SPEC §1: the binary's startup — the ready line, and one clear line with exit code 2 for every bad
//! configuration.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn binary() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reference-server"))
}

/// Runs the server on `config` and returns (exit code, stderr) of a run that must fail at startup.
fn refused(config: &Value, extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("run.json");
    std::fs::write(&path, config.to_string()).expect("write");
    let output = binary()
        .arg("--config")
        .arg(&path)
        .args(["--port", "0"])
        .args(extra)
        .env_remove("STRATA_API_KEY")
        .output()
        .expect("runs");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn assert_one_line_naming(config: Value, key: &str, value: &str) {
    let (code, stderr) = refused(&config, &[]);
    assert_eq!(code, 2, "exit code for {config}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "exactly one line for {config}: {stderr}");
    assert!(stderr.contains(key), "names {key}: {stderr}");
    assert!(stderr.contains(value), "shows {value}: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "{stderr}");
}

#[test]
fn spec_1_5_image_results_accepts_only_a_json_boolean() {
    assert_one_line_naming(json!({"mcp": {"image_results": "true"}}), "mcp.image_results", "\"true\"");
    assert_one_line_naming(json!({"mcp": {"image_results": 1}}), "mcp.image_results", "=1");
    assert_one_line_naming(json!({"mcp": {"image_results": null}}), "mcp.image_results", "null");
}

#[test]
fn spec_1_5_mcp_numbers_are_checked() {
    assert_one_line_naming(json!({"mcp": {"timeout_s": 0}}), "mcp.timeout_s", "=0");
    assert_one_line_naming(json!({"mcp": {"timeout_s": true}}), "mcp.timeout_s", "true");
    assert_one_line_naming(json!({"mcp": {"start_timeout_s": "5"}}), "mcp.start_timeout_s", "\"5\"");
    assert_one_line_naming(json!({"mcp": {"max_rounds": 1.5}}), "mcp.max_rounds", "1.5");
    assert_one_line_naming(json!({"mcp": {"max_result_chars": false}}), "mcp.max_result_chars", "false");
    assert_one_line_naming(json!({"mcp": []}), "mcp", "[]");
    assert_one_line_naming(json!({"mcp": {"max_pictures_per_result": 0}}), "mcp.max_pictures_per_result", "=0");
    assert_one_line_naming(json!({"mcp": {"max_picture_chars": "24"}}), "mcp.max_picture_chars", "\"24\"");
}

#[test]
fn spec_1_6_bad_mcp_server_entries_name_the_entry() {
    assert_one_line_naming(json!({"mcp_servers": {"x": {}}}), "mcp_servers.x", "{}");
    assert_one_line_naming(json!({"mcpServers": {"x": {"command": "c", "args": "a"}}}), "mcpServers.x.args", "\"a\"");
    assert_one_line_naming(
        json!({"mcp_servers": {"x": {"url": "http://h/sse", "type": "sse"}}}),
        "mcp_servers.x",
        "sse",
    );
}

#[test]
fn spec_1_3_a_refused_headers_or_env_value_names_the_key_never_the_secret() {
    let token = "Bearer SECRET-T0KEN-123";
    for (config, key, shown) in [
        (
            json!({"mcp_servers": {"x": {"url": "http://h/mcp", "headers": {"Authorization": token, "X": 1}}}}),
            "mcp_servers.x.headers",
            r#""X":1"#,
        ),
        (
            json!({"mcp_servers": {"x": {"command": "c", "env": {"API_TOKEN": token, "N": true}}}}),
            "mcp_servers.x.env",
            r#""N":true"#,
        ),
        (
            json!({"mcp_servers": {"x": {"url": "http://h/sse", "type": "sse", "headers": {"Authorization": token}}}}),
            "mcp_servers.x",
            r#""Authorization":"***""#,
        ),
        (json!({"mcpServers": {"x": {"url": "http://h/mcp", "headers": token}}}), "mcpServers.x.headers", r#""***""#),
    ] {
        let (code, stderr) = refused(&config, &[]);
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(key) && stderr.contains(shown), "{stderr}");
        assert!(!stderr.contains("SECRET-T0KEN"), "the token leaked: {stderr}");
    }
}

#[test]
fn spec_1_3_other_top_level_values_are_checked() {
    assert_one_line_naming(json!({"port": 70000}), "port", "70000");
    assert_one_line_naming(json!({"engine": {"scripts": "hi"}}), "engine.scripts", "\"hi\"");
    assert_one_line_naming(json!({"vision": {"backend": "magic"}}), "vision.backend", "magic");
    assert_one_line_naming(json!({"max_body_mib": 0}), "max_body_mib", "0");
}

#[test]
fn spec_1_1_a_file_that_is_not_json_is_one_line() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("bad.json");
    std::fs::write(&path, "{not json").expect("write");
    let output = binary().arg("--config").arg(&path).output().expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--config"), "{stderr}");
    let missing = binary().arg("--config").arg(dir.path().join("nope.json")).output().expect("runs");
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn spec_1_7_an_empty_api_key_refuses_to_start() {
    let (code, stderr) = refused(&json!({}), &["--api-key", "  "]);
    assert_eq!(code, 2);
    assert_eq!(stderr.trim(), "reference-server: an API key was given but it is empty");
    let (code, _) = refused(&json!({"api_key": ""}), &[]);
    assert_eq!(code, 2);
}

/// Starts the binary and reads its first stdout line.
fn ready_line(config_text: &[u8], extra: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("run.json");
    std::fs::write(&path, config_text).expect("write");
    let mut child = binary()
        .arg("--config")
        .arg(&path)
        .args(["--port", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("a line");
    child.kill().expect("kill");
    let output = child.wait_with_output().expect("exits");
    (line, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn spec_1_2_ready_line_names_the_real_port() {
    let (line, _) = ready_line(b"{}", &[]);
    let rest = line.trim_end().strip_prefix("listening on http://127.0.0.1:").expect(&line);
    assert!(rest.parse::<u16>().expect("a port") > 0);
}

#[test]
fn spec_1_1_a_byte_order_mark_is_accepted_and_1_4_unknown_keys_only_warn() {
    let mut text = b"\xEF\xBB\xBF".to_vec();
    text.extend_from_slice(br#"{"colour": "blue", "mcp": {"shiny": 1}}"#);
    let (line, stderr) = ready_line(&text, &[]);
    assert!(line.starts_with("listening on http://"), "{line}");
    assert!(stderr.contains("config colour=\"blue\": unknown key, ignored"), "{stderr}");
    assert!(stderr.contains("config mcp.shiny=1: unknown key, ignored"), "{stderr}");
}

#[test]
fn spec_1_8_a_taken_port_is_one_line_and_exit_1() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("run.json");
    std::fs::write(&path, "{}").expect("write");
    let output = binary().arg("--config").arg(&path).args(["--port", &port]).output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("failed to listen"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn spec_1_9_sigterm_stops_the_server_cleanly() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("run.json");
    std::fs::write(&path, "{}").expect("write");
    let mut child = binary()
        .arg("--config")
        .arg(&path)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("ready");
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(status.success());
    let exit = child.wait().expect("exits");
    assert_eq!(exit.code(), Some(0));
}

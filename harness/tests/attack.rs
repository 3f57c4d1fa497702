//! `mediacheck attack` judges honestly: against the reference server an attack survives; against a
//! server that grows past the memory bound and answers `/health` slowly, the same attack fails with
//! both reasons and exit code 1; the orphan count finds a process by its marker and loses it when it
//! is gone.

use std::process::Command;
use std::time::Duration;

const MEDIACHECK: &str = env!("CARGO_BIN_EXE_mediacheck");

/// A server in Python that passes the start-up check (`/health`) but answers it after 150 ms and
/// takes 600 MB of memory on its first POST: every bound an attack is judged by is broken.
const GREEDY_AND_SLOW: &str = r#"
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
hoard = []
class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args): pass
    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        time.sleep(0.15)
        self.answer({"status": "ok"})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if not hoard:
            hoard.append(b"x" * (600 << 20))
        self.answer({"choices": [{"message": {"content": "ok"}}]})
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Handler).serve_forever()
"#;

fn attack(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(MEDIACHECK).arg("attack").args(args).output().expect("mediacheck runs");
    (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn the_reference_server_survives_and_a_greedy_slow_server_does_not() {
    let (code, report) = attack(&["--only", "json-deep-nesting", "--duration", "1s"]);
    assert_eq!(code, Some(0), "{report}");
    assert!(report.contains("survived: 1 of 1 attacks"), "{report}");
    let line = report.lines().find(|l| l.starts_with("json-deep-nesting")).expect("its line");
    assert!(line.contains(" yes ") && line.contains("400 (the request is malformed"), "{line}");

    let dir = tempfile::tempdir().expect("dir");
    let script = dir.path().join("greedy.py");
    std::fs::write(&script, GREEDY_AND_SLOW).expect("script");
    let template = format!("python3 {} --config {{config}} --port {{port}}", script.display());
    let (code, report) = attack(&["--only", "json-deep-nesting", "--duration", "2s", "--spawn", &template]);
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains("survived: 0 of 1 attacks"), "{report}");
    assert!(report.contains("MiB is over 512 MiB"), "the memory bound: {report}");
    assert!(report.contains("ms is over 100 ms"), "the latency bound: {report}");
}

#[test]
fn orphans_are_found_by_their_marker() {
    let marker = format!("attack-test-marker-{}", std::process::id());
    let mut lingering =
        Command::new(MEDIACHECK).args(["hostile-mcp", "linger", &marker]).spawn().expect("a lingering process");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(fixtures::hostile_mcp::count_alive(&marker), 1);
    lingering.kill().expect("killed");
    lingering.wait().expect("reaped");
    assert_eq!(fixtures::hostile_mcp::count_alive(&marker), 0);
}

#[test]
fn an_unknown_misbehaviour_is_a_usage_error() {
    let output = Command::new(MEDIACHECK).args(["hostile-mcp", "polite"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
}

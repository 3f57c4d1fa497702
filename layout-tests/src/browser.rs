//! Headless Chromium through chromedriver: started on a free loopback port (no fixed ports), killed
//! when dropped; the viewport set exactly with CDP; screenshots saved per width and step.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};

/// Where Debian puts the real Chromium binary (the `/usr/bin` wrapper prints noise).
const CHROMIUM: &str = "/usr/lib/chromium/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A running chromedriver.
pub struct Driver {
    url: String,
    _child: tokio::process::Child,
    /// Each session's fresh profile folder, removed when the driver goes.
    profiles: std::sync::Mutex<Vec<tempfile::TempDir>>,
}

impl Driver {
    /// Starts chromedriver and waits until it answers. Panics with the install command when Chromium
    /// or chromedriver is missing: in CI a missing browser is a failure, never a skip.
    pub async fn start() -> Driver {
        for path in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                std::path::Path::new(path).exists(),
                "{path} is missing: apt-get install -y chromium chromium-driver (ci/test.sh does)"
            );
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let child = tokio::process::Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(tokio::time::Instant::now() < deadline, "chromedriver did not listen within 20 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Driver { url: format!("http://127.0.0.1:{port}"), _child: child, profiles: std::sync::Mutex::default() }
    }

    /// A new headless session.
    pub async fn session(&self) -> Client {
        let profile = tempfile::tempdir().expect("profile");
        let profile_path = profile.path().to_path_buf();
        if let Ok(mut profiles) = self.profiles.lock() {
            profiles.push(profile);
        }
        let args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--window-size=1400,1000",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([format!("--user-data-dir={}", profile_path.display())])
        .collect::<Vec<_>>();
        let mut capabilities = Capabilities::new();
        capabilities.insert("goog:chromeOptions".into(), json!({"binary": CHROMIUM, "args": args}));
        ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .expect("a WebDriver session")
    }
}

/// A Chrome DevTools Protocol command through chromedriver's `goog/cdp/execute`.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/goog/cdp/execute", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(json!({"cmd": self.cmd, "params": self.params}).to_string()))
    }
}

/// Sets the viewport to exactly `width` × `height` CSS pixels.
pub async fn set_viewport(client: &Client, width: u32, height: u32) {
    let params = json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false});
    client.issue_cmd(Cdp { cmd: "Emulation.setDeviceMetricsOverride", params }).await.expect("the viewport is set");
}

/// Empties the browser's HTTP cache (pictures are served `immutable`, so a reload would otherwise not
/// ask the server again).
pub async fn clear_browser_cache(client: &Client) {
    client.issue_cmd(Cdp { cmd: "Network.clearBrowserCache", params: json!({}) }).await.expect("the cache is cleared");
}

/// Saves a screenshot as `target/layout-screenshots/<width>-<step>.png` and returns its path.
pub async fn screenshot(client: &Client, width: u32, step: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/layout-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    let path = dir.join(format!("{width}-{step}.png"));
    let png = client.screenshot().await.expect("a screenshot");
    std::fs::write(&path, png).expect("screenshot written");
    path
}

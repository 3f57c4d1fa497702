//! chromedriver and headless Chromium. Missing either is a reason the page cases are not run (with the
//! install command), never a pass. The viewport is set with CDP `Emulation.setDeviceMetricsOverride`,
//! because a window cannot be narrower than 500 px.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};

use crate::check::CheckError;

/// The widths every page case runs at, in CSS pixels.
pub const WIDTHS: [u32; 5] = [320, 390, 640, 768, 1280];
/// The environment variable that narrows the widths (a comma-separated subset of [`WIDTHS`]), for
/// a quick judge such as the page's mutation run (ci/stryker/judge.sh); unset, every width.
pub const WIDTHS_VARIABLE: &str = "MEDIACHECK_PAGE_WIDTHS";

/// The widths the page cases run at: [`WIDTHS`], or the subset `MEDIACHECK_PAGE_WIDTHS` names. A value
/// that is not a subset of [`WIDTHS`] is an error naming it.
pub fn widths() -> Result<Vec<u32>, String> {
    widths_from(std::env::var_os(WIDTHS_VARIABLE).map(|v| v.to_string_lossy().into_owned()).as_deref())
}

fn widths_from(value: Option<&str>) -> Result<Vec<u32>, String> {
    let Some(value) = value else { return Ok(WIDTHS.to_vec()) };
    let refused = || format!("{WIDTHS_VARIABLE}={value:?}: expected some of {WIDTHS:?}, comma-separated");
    let chosen: Vec<u32> =
        value.split(',').map(|w| w.trim().parse::<u32>()).collect::<Result<_, _>>().map_err(|_| refused())?;
    if chosen.is_empty() || chosen.iter().any(|w| !WIDTHS.contains(w)) {
        return Err(refused());
    }
    Ok(chosen)
}

/// The viewport height.
const HEIGHT: u32 = 800;

fn chromium() -> PathBuf {
    std::env::var_os("MEDIACHECK_CHROMIUM").map_or_else(|| PathBuf::from("/usr/lib/chromium/chromium"), PathBuf::from)
}

fn chromedriver() -> PathBuf {
    std::env::var_os("MEDIACHECK_CHROMEDRIVER").map_or_else(|| PathBuf::from("/usr/bin/chromedriver"), PathBuf::from)
}

/// A running chromedriver.
pub struct Driver {
    url: String,
    child: std::sync::Mutex<Option<tokio::process::Child>>,
}

static DRIVER: tokio::sync::Mutex<Option<Arc<Driver>>> = tokio::sync::Mutex::const_new(None);
/// Runs in progress in this process (tests run several at once); the last one to end stops the driver.
static RUNS: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static SCREENSHOTS: OnceLock<PathBuf> = OnceLock::new();
/// Set by `run --no-browser`: no browser is started, and the page cases are not run.
static OFF: OnceLock<()> = OnceLock::new();

/// Why the page cases are not run under `run --no-browser`.
pub const TURNED_OFF: &str =
    "the browser is turned off (--no-browser; the GitHub Action's browser: false), so the page cases are not run";

/// No browser for this process's runs (`run --no-browser`): every page case is not run, with
/// [`TURNED_OFF`] as the reason.
pub fn turn_off() {
    let _ = OFF.set(());
}

/// Screenshots of the page cases go under `dir` (`<case>/<width>-<step>.png`); without it none are kept.
pub fn keep_screenshots(dir: PathBuf) {
    let _ = SCREENSHOTS.set(dir);
}

/// Copies the screenshots kept for the case `from` to the case `to`'s folder (cases that share one
/// walk through the page each get its pictures); nothing when none are kept. Each copy keeps its
/// picture's time, so an earlier run's picture copied again is still an earlier run's to the HTML
/// report.
pub fn share_screenshots(from: &str, to: &str) {
    let Some(root) = SCREENSHOTS.get() else { return };
    share_files(&root.join(from), &root.join(to));
}

fn share_files(from: &std::path::Path, to: &std::path::Path) {
    let Ok(shots) = std::fs::read_dir(from) else { return };
    if std::fs::create_dir_all(to).is_err() {
        return;
    }
    for shot in shots.flatten() {
        let copy = to.join(shot.file_name());
        if std::fs::copy(shot.path(), &copy).is_err() {
            continue;
        }
        if let Ok(taken) = shot.metadata().and_then(|m| m.modified()) {
            let _ = std::fs::File::options().write(true).open(&copy).and_then(|file| file.set_modified(taken));
        }
    }
}

/// The run's chromedriver, started on first use.
pub async fn driver() -> Result<Arc<Driver>, CheckError> {
    let mut slot = DRIVER.lock().await;
    if let Some(driver) = slot.as_ref() {
        return Ok(Arc::clone(driver));
    }
    let driver = Arc::new(Driver::start().await?);
    *slot = Some(Arc::clone(&driver));
    Ok(driver)
}

/// A run starts: the driver, once started, stays until the last run ends.
pub fn run_started() {
    if let Ok(mut runs) = RUNS.lock() {
        *runs += 1;
    }
}

/// A run ends: the last one stops chromedriver (and every browser it started), if one was started.
pub async fn run_ended() {
    if let Ok(mut runs) = RUNS.lock() {
        *runs = runs.saturating_sub(1);
    }
    let mut slot = DRIVER.lock().await;
    if RUNS.lock().map(|runs| *runs > 0).unwrap_or(false) {
        return;
    }
    let Some(driver) = slot.take() else { return };
    drop(slot);
    let child = driver.child.lock().ok().and_then(|mut c| c.take());
    if let Some(mut child) = child {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
}

impl Driver {
    async fn start() -> Result<Driver, CheckError> {
        if OFF.get().is_some() {
            return Err(CheckError::NotRun(TURNED_OFF.into()));
        }
        for path in [chromium(), chromedriver()] {
            if !path.exists() {
                return Err(CheckError::NotRun(format!(
                    "{} is missing, so the page cases cannot run: apt-get install -y chromium chromium-driver \
                     (or set MEDIACHECK_CHROMIUM and MEDIACHECK_CHROMEDRIVER)",
                    path.display()
                )));
            }
        }
        let port = crate::target::free_port().map_err(|e| CheckError::NotRun(e.to_string()))?;
        let child = tokio::process::Command::new(chromedriver())
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| CheckError::NotRun(format!("chromedriver did not start: {e}")))?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            if tokio::time::Instant::now() > deadline {
                return Err(CheckError::NotRun("chromedriver did not listen within 20 s".into()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Driver { url: format!("http://127.0.0.1:{port}"), child: std::sync::Mutex::new(Some(child)) })
    }

    /// A fresh headless session (its own profile) with the viewport `width` × 800.
    pub async fn session(&self, case: &'static str, width: u32) -> Result<Session, CheckError> {
        let profile = tempfile::tempdir().map_err(|e| CheckError::NotRun(format!("no profile folder: {e}")))?;
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
        .chain([format!("--user-data-dir={}", profile.path().display())])
        .collect::<Vec<_>>();
        let mut capabilities = Capabilities::new();
        capabilities.insert("goog:chromeOptions".into(), json!({"binary": chromium(), "args": args}));
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities)
            .connect(&self.url)
            .await
            .map_err(|e| CheckError::NotRun(format!("no WebDriver session: {e}")))?;
        let session = Session { client, case, width, _profile: profile };
        let params = json!({"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": false});
        session.cdp("Emulation.setDeviceMetricsOverride", params).await?;
        Ok(session)
    }
}

/// One browser at one width, for one case.
pub struct Session {
    /// The WebDriver client.
    pub client: Client,
    case: &'static str,
    /// The viewport width.
    pub width: u32,
    _profile: tempfile::TempDir,
}

impl Session {
    async fn cdp(&self, cmd: &'static str, params: Value) -> Result<(), CheckError> {
        self.client
            .issue_cmd(Cdp { cmd, params })
            .await
            .map(|_| ())
            .map_err(|e| CheckError::Fail { expected: format!("CDP {cmd}"), actual: e.to_string() })
    }

    /// Empties the browser's HTTP cache (pictures are `immutable`, so a reload would not ask again).
    pub async fn clear_http_cache(&self) -> Result<(), CheckError> {
        self.cdp("Network.clearBrowserCache", json!({})).await
    }

    /// Keeps a screenshot of this step, when screenshots are kept.
    pub async fn screenshot(&self, step: &str) {
        let Some(root) = SCREENSHOTS.get() else { return };
        let dir = root.join(self.case);
        if std::fs::create_dir_all(&dir).is_err() {
            return;
        }
        if let Ok(png) = self.client.screenshot().await {
            let _ = std::fs::write(dir.join(format!("{}-{step}.png", self.width)), png);
        }
    }

    /// Ends the session (its browser with it).
    pub async fn close(self) {
        let _ = self.client.close().await;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widths_are_all_five_or_a_subset_named() {
        assert_eq!(widths_from(None), Ok(WIDTHS.to_vec()));
        assert_eq!(widths_from(Some("390")), Ok(vec![390]));
        assert_eq!(widths_from(Some("1280, 320")), Ok(vec![1280, 320]));
        for refused in ["", "391", "390,", "wide", "320;390", "-320"] {
            let error = widths_from(Some(refused)).expect_err(refused);
            assert!(
                error.starts_with("MEDIACHECK_PAGE_WIDTHS=") && error.contains("320, 390, 640, 768, 1280"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_shared_screenshot_keeps_the_time_it_was_taken() {
        let dir = tempfile::tempdir().expect("a folder");
        let (from, to) = (dir.path().join("page.a"), dir.path().join("page.b"));
        std::fs::create_dir_all(&from).expect("a case folder");
        let taken = std::time::SystemTime::now() - Duration::from_secs(3600);
        let file = std::fs::File::create(from.join("768-x.png")).expect("a picture");
        file.set_modified(taken).expect("its time set");
        share_files(&from, &to);
        let copied = std::fs::metadata(to.join("768-x.png")).and_then(|m| m.modified()).expect("the copy");
        assert_eq!(copied, taken);
    }
}

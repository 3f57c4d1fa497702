//! The reference server inside mediacheck, behind the default cargo feature `embedded`: started
//! in-process for the embedded target and the load run, and run as a process by the hidden
//! `serve-reference` command. Built with `--no-default-features`, mediacheck holds no reference-server
//! code at all — its verdicts never depend on it — and needs `--url` or `--spawn`.

use std::path::Path;
use std::process::ExitCode;

/// Whether this build has the reference server inside.
pub const AVAILABLE: bool = cfg!(feature = "embedded");

/// Why a build without the feature cannot start the reference server.
pub const MISSING: &str =
    "this mediacheck was built without the embedded reference server (--no-default-features): pass --url or --spawn";

#[cfg(feature = "embedded")]
mod inside {
    use super::*;

    pub use reference_server::RunningServer;

    /// Starts the reference server in this process on the configuration at `config`, on 127.0.0.1 and a
    /// free port, with `scripts` (when any) in place of the file's.
    pub async fn start(config: &Path, scripts: Vec<String>) -> Result<RunningServer, String> {
        let overrides = reference_server::config::Overrides {
            host: Some("127.0.0.1".into()),
            port: Some(0),
            scripts,
            ..Default::default()
        };
        let loaded = reference_server::config::RunConfig::load(config, &overrides).map_err(|e| e.to_string())?;
        reference_server::start(loaded.config).await.map_err(|e| e.to_string())
    }

    /// Runs the reference server's command line with `args` (without the program name).
    pub fn serve(args: Vec<String>) -> ExitCode {
        reference_server::cli::run(std::iter::once("reference-server".to_string()).chain(args))
    }
}

#[cfg(not(feature = "embedded"))]
mod inside {
    use super::*;

    /// Never made in a build without the reference server.
    pub struct RunningServer {
        never: std::convert::Infallible,
    }

    impl RunningServer {
        /// Its base URL.
        pub fn url(&self) -> String {
            match self.never {}
        }

        /// Stops it.
        pub async fn stop(self) {
            match self.never {}
        }
    }

    /// Always refused: there is no reference server in this build.
    pub async fn start(_config: &Path, _scripts: Vec<String>) -> Result<RunningServer, String> {
        Err(MISSING.into())
    }

    /// Always refused: there is no reference server in this build.
    pub fn serve(_args: Vec<String>) -> ExitCode {
        eprintln!("mediacheck: {MISSING}");
        ExitCode::from(2)
    }
}

pub use inside::{RunningServer, serve, start};

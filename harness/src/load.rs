//! `mediacheck load`: honest latency under load for tool-picture traffic, and "nothing lost" as a
//! number (DESIGN §4).
//!
//! - [`options`]: scenarios (`media-get`, `chat-image`, `cache-write`, `mixed`), closed loop
//!   (`--concurrency`) or open loop (`--rate`, latency from the intended send time).
//! - [`setup`]: the server under load — the embedded reference server wired to the fixture MCP
//!   server, or a URL on loopback.
//! - [`workloads`]: one request of each kind, timed, with its integrity check (every body's SHA-256
//!   against its name; every picture a turn announced fetched back).
//! - [`recorder`]: HDR histograms, errors by kind, integrity counts.
//! - [`driver`]: the loops, the progress bar, the RSS sampler; [`report`]: terminal and JSON.

pub mod driver;
pub mod options;
pub mod recorder;
pub mod report;
pub mod setup;
pub mod workloads;

pub use driver::run;

/// Why a load run could not start or finish (one line, exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// `--duration` is not a number with a unit.
    #[error("'{0}' is not a duration (e.g. 30s, 2m, 500ms)")]
    NotADuration(String),
    /// `--duration` has another unit.
    #[error("'{0}': the unit must be ms, s or m")]
    DurationUnit(String),
    /// `--duration` is 0 or over an hour.
    #[error("'{0}': a duration above 0 and at most 1 hour")]
    DurationRange(String),
    /// `media-get` without pictures to get.
    #[error("media-get needs cached pictures: name them with --media")]
    NoMedia,
    /// A request outlived the run.
    #[error("requests still running")]
    StillRunning,
    /// A chat scenario against a URL.
    #[error("chat scenarios need the embedded server (its fixture MCP server scripts the pictures)")]
    ChatNeedsEmbedded,
    /// `--url` is not a URL.
    #[error("{0} is not a URL")]
    NotAUrl(String),
    /// `--url` is another host, without `--allow-remote`.
    #[error("{0} is not on loopback: pass --allow-remote to load another host")]
    NotLoopback(String),
    /// The embedded server or its fixture did not start.
    #[error("the embedded server did not start: {0}")]
    Embedded(String),
    /// The warm-up turn did not cache the pictures `media-get` needs.
    #[error("the warm-up turn failed: {0}")]
    WarmUp(String),
}
pub use options::{LoadOptions, LoadScenario, Pace};

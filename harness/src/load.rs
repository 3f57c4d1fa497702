//! `mediacheck load`: honest latency under load for tool-picture traffic, and "nothing lost" as a
//! number (DESIGN §4).
//!
//! - [`options`]: scenarios (`media-get`, `chat-image`, `cache-write`, `mixed`), closed loop
//!   (`--concurrency`) or open loop (`--rate`, latency from the intended send time).
//! - [`setup`]: the server under load — the embedded reference server wired to the fixture MCP
//!   server, or a URL on loopback.
//! - [`workloads`]: one request of each kind, timed, with its integrity check (every body's bytes
//!   against its name: [`integrity`] proves a name's first body by SHA-256 and compares the later
//!   ones with that proven copy; every picture a turn announced fetched back), picture fetches on
//!   [`wire`]'s own kept-alive connections (an HTTP/1.1 client of its own; [`chunked`] decodes
//!   chunked bodies in place).
//! - [`recorder`]: HDR histograms, errors by kind, integrity counts; [`cost`]: the tester's own CPU
//!   seconds per 1,000 requests.
//! - [`driver`]: the loops, the progress bar, the RSS sampler; [`report`]: terminal and JSON.
//! - Many machines: [`segment`] (worker I of N takes a disjoint share; a common start),
//!   [`intervals`] (HdrHistogram interval logs), [`worker`] (what a segment writes: logs and its
//!   ledger), [`merge`] (`mediacheck load merge`: one report from the workers' outputs, exactly).

pub mod chunked;
pub mod cost;
pub mod driver;
pub mod integrity;
pub mod intervals;
pub mod merge;
pub mod options;
pub mod recorder;
pub mod report;
pub mod segment;
pub mod setup;
pub mod wire;
pub mod worker;
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
    /// `--segment` is not `I/N` with 1 ≤ I ≤ N ≤ 10000.
    #[error("--segment '{0}': give I/N with 1 <= I <= N <= 10000 (e.g. 2/4)")]
    BadSegment(String),
    /// `--segments` without `JOB_COMPLETION_INDEX`.
    #[error("--segments needs JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job), or give --segment I/N")]
    NoJobIndex,
    /// `JOB_COMPLETION_INDEX` is not 0…N−1.
    #[error("JOB_COMPLETION_INDEX '{0}': a number from 0 to {n} for --segments {1}", n = .1.saturating_sub(1))]
    BadJobIndex(String, u32),
    /// `--start-at` is not an RFC 3339 instant.
    #[error("--start-at '{0}': an RFC 3339 instant with a zone, e.g. 2026-12-01T10:00:00Z")]
    NotAnInstant(String),
    /// `--start-at` passed longer ago than the run lasts.
    #[error("--start-at passed {past:.1?} ago, longer than the run ({duration:?}): the other segments are over")]
    StartPassed {
        /// How long ago.
        past: std::time::Duration,
        /// The run's length.
        duration: std::time::Duration,
    },
    /// `--start-at` more than a day ahead.
    #[error("--start-at is more than 24 hours ahead: give an instant within a day")]
    StartTooFar,
    /// A closed loop with fewer workers than segments.
    #[error("--concurrency {concurrency} cannot give each of {segments} segments a worker")]
    TooFewWorkers {
        /// The total.
        concurrency: usize,
        /// Segments.
        segments: u64,
    },
    /// `--max-requests` smaller than the segments.
    #[error("--max-requests {max_requests} cannot give each of {segments} segments a request")]
    TooFewRequests {
        /// The total.
        max_requests: u64,
        /// Segments.
        segments: u64,
    },
}
pub use options::{LoadOptions, LoadScenario, Pace};

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
pub use options::{LoadOptions, LoadScenario, Pace};

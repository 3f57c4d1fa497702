//! What a check gets: a client for the server under test and what the target knows about it.

use std::path::PathBuf;

use crate::http::Http;

/// A check's view of the server.
#[derive(Clone)]
pub struct Ctx {
    /// A client that records the exchanges.
    pub http: Http,
    /// The run configuration the harness wrote, when it started the server.
    pub config_path: Option<PathBuf>,
}

//! The shared state every handler sees, behind one `Arc` (SPEC §3 status figures live here too).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

use crate::config::RunConfig;
use crate::engine::Engine;
use crate::mcp::Hub;
use crate::media::MediaCache;
use crate::vision::VisionBackend;

/// Everything a request may need.
pub struct AppState {
    /// The validated run configuration.
    pub config: Arc<RunConfig>,
    /// The model engine.
    pub engine: Arc<dyn Engine>,
    /// The MCP hub, when servers are configured.
    pub hub: Option<Arc<Hub>>,
    /// The tool-picture cache beside the run configuration (used when `mcp.image_results` is on).
    pub media: MediaCache,
    /// The vision backend, when the configuration has a `vision` block.
    pub vision: Option<Arc<dyn VisionBackend>>,
    /// Cancelled at shutdown; every request's token is a child of it.
    pub shutdown: CancellationToken,
    /// Counters shown by `/v1/status`.
    pub activity: Arc<Activity>,
    /// Room for request bodies being read and parsed, in KiB: all of them together hold at most
    /// `max_body_mib` (SPEC 1.11).
    pub body_room: tokio::sync::Semaphore,
}

impl AppState {
    /// Whether tool pictures are on (SPEC 8.1).
    pub fn image_results(&self) -> bool {
        self.config.mcp.image_results
    }
}

/// What the server is doing, for `/v1/status` (so a client can see that a closed stream stopped).
#[derive(Debug, Default)]
pub struct Activity {
    running: AtomicUsize,
    finished: AtomicU64,
    cancelled: AtomicU64,
}

impl Activity {
    /// Marks a generation as running until the returned guard is dropped.
    pub fn begin(self: &Arc<Self>) -> RunningGuard {
        self.running.fetch_add(1, Ordering::SeqCst);
        RunningGuard { activity: Arc::clone(self), cancelled: false }
    }

    /// Requests running now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Requests that ran to their end.
    pub fn finished(&self) -> u64 {
        self.finished.load(Ordering::SeqCst)
    }

    /// Requests ended because the client left or the server stopped.
    pub fn cancelled(&self) -> u64 {
        self.cancelled.load(Ordering::SeqCst)
    }
}

/// Held while a request generates; dropping it updates the counters.
pub struct RunningGuard {
    activity: Arc<Activity>,
    cancelled: bool,
}

impl RunningGuard {
    /// Records that the request ended by cancellation.
    pub fn mark_cancelled(&mut self) {
        self.cancelled = true;
    }
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        let counter = if self.cancelled { &self.activity.cancelled } else { &self.activity.finished };
        counter.fetch_add(1, Ordering::SeqCst);
        self.activity.running.fetch_sub(1, Ordering::SeqCst);
    }
}

//! What a load run does: which traffic, how it is paced, for how long.

use std::time::{Duration, SystemTime};

use super::LoadError;
use super::segment::Segment;

/// The traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum LoadScenario {
    /// Authenticated `GET /tool-media/<name>` of cached pictures of realistic sizes.
    MediaGet,
    /// Streamed chat turns whose tool returns two pictures.
    ChatImage,
    /// Streamed chat turns whose tool returns four pictures never seen before (cache writes).
    CacheWrite,
    /// The three together.
    Mixed,
}

/// One kind of request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// A picture fetch.
    MediaGet,
    /// A chat turn with pictures the cache already holds after the first.
    ChatImage,
    /// A chat turn with new pictures.
    CacheWrite,
}

impl Op {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::MediaGet => "media-get",
            Op::ChatImage => "chat-image",
            Op::CacheWrite => "cache-write",
        }
    }
}

/// One measured phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The whole request (for a chat turn: to `[DONE]`).
    Total,
    /// Time to the first `call` event.
    ToCall,
    /// Time to the first `result` event.
    ToResult,
}

impl Phase {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Total => "total",
            Phase::ToCall => "to call",
            Phase::ToResult => "to result",
        }
    }

    /// Its name in file names and JSON: `total`, `to-call`, `to-result`.
    pub fn slug(self) -> &'static str {
        match self {
            Phase::Total => "total",
            Phase::ToCall => "to-call",
            Phase::ToResult => "to-result",
        }
    }

    /// Every phase.
    pub const ALL: [Phase; 3] = [Phase::Total, Phase::ToCall, Phase::ToResult];
}

impl LoadScenario {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            LoadScenario::MediaGet => "media-get",
            LoadScenario::ChatImage => "chat-image",
            LoadScenario::CacheWrite => "cache-write",
            LoadScenario::Mixed => "mixed",
        }
    }

    /// The request kinds, in the round-robin order requests take.
    pub fn ops(self) -> &'static [Op] {
        match self {
            LoadScenario::MediaGet => &[Op::MediaGet],
            LoadScenario::ChatImage => &[Op::ChatImage],
            LoadScenario::CacheWrite => &[Op::CacheWrite],
            LoadScenario::Mixed => &[Op::MediaGet, Op::ChatImage, Op::CacheWrite],
        }
    }
}

/// How requests are paced (for a segment too: the whole run's totals).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pace {
    /// N workers, each sending its next request when the last one finished.
    Closed {
        /// Workers.
        concurrency: usize,
    },
    /// Requests sent on a fixed schedule whatever the server does; latency counts from the intended
    /// send time, so a stalled server cannot hide its stall (coordinated omission).
    Open {
        /// Requests per second.
        rate: f64,
        /// Connections the requests share (each request takes the next free one; one that waits for
        /// a connection is late, and its latency counts from its intended time all the same).
        #[serde(default = "default_open_connections")]
        connections: usize,
    },
}

/// A load run.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The traffic.
    pub scenario: LoadScenario,
    /// The pacing.
    pub pace: Pace,
    /// How long requests are started for.
    pub duration: Duration,
    /// At most this many requests (0: no limit but the duration).
    pub max_requests: u64,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// The share of the run this process makes ([`Segment::WHOLE`]: all of it).
    pub segment: Segment,
    /// Wait for this wall-clock instant before the first request (`--start-at`, `--start-in`).
    pub start_at: Option<SystemTime>,
    /// Keep one histogram per second for interval logs (`--out`).
    pub intervals: bool,
    /// The most bytes of proven copies kept to compare bodies with (past it, bodies are hashed).
    pub proven_cap: u64,
}

impl LoadOptions {
    /// A run of the whole load from one process, started at once, without interval logs.
    pub fn whole(scenario: LoadScenario, pace: Pace, duration: Duration, max_requests: u64) -> Self {
        LoadOptions {
            scenario,
            pace,
            duration,
            max_requests,
            progress: false,
            segment: Segment::WHOLE,
            start_at: None,
            intervals: false,
            proven_cap: super::integrity::DEFAULT_PROVEN_CAP,
        }
    }

    /// Refuses what cannot be split or started: a closed loop with fewer workers than segments, a
    /// request cap smaller than the segments, a start further in the past than the run is long.
    pub fn check(&self, now: SystemTime) -> Result<(), LoadError> {
        let segments = u64::from(self.segment.count);
        let (Pace::Closed { concurrency } | Pace::Open { connections: concurrency, .. }) = self.pace;
        if (concurrency as u64) < segments {
            return Err(LoadError::TooFewWorkers { concurrency, segments });
        }
        if self.max_requests > 0 && self.max_requests < segments {
            return Err(LoadError::TooFewRequests { max_requests: self.max_requests, segments });
        }
        if let Some(at) = self.start_at
            && let Ok(past) = now.duration_since(at)
            && past > self.duration
        {
            return Err(LoadError::StartPassed { past, duration: self.duration });
        }
        if let Some(at) = self.start_at
            && at.duration_since(now).is_ok_and(|ahead| ahead > MAX_START_AHEAD)
        {
            return Err(LoadError::StartTooFar);
        }
        Ok(())
    }

    /// Requests in flight at once at most (closed loop: workers; open loop: connections), for this
    /// segment.
    pub fn workers(&self) -> usize {
        let total = match self.pace {
            Pace::Closed { concurrency } => concurrency,
            Pace::Open { connections, .. } => connections,
        };
        self.segment.share(total.max(1) as u64) as usize
    }
}

/// The furthest ahead a start may be (a mistyped year would otherwise wait in silence).
pub const MAX_START_AHEAD: Duration = Duration::from_secs(24 * 3600);
/// The longest run accepted.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);
/// The open loop's connections unless `--connections` says otherwise.
pub const DEFAULT_OPEN_CONNECTIONS: usize = 64;

fn default_open_connections() -> usize {
    DEFAULT_OPEN_CONNECTIONS
}

/// Reads `30s`, `1.5m`, `500ms` or a plain number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, LoadError> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => (&text[..at], &text[at..]),
        None => (text, "s"),
    };
    let value: f64 = number.parse().map_err(|_| LoadError::NotADuration(text.to_string()))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(LoadError::DurationUnit(text.to_string())),
    };
    if seconds.is_nan() || seconds <= 0.0 || Duration::from_secs_f64(seconds) > MAX_DURATION {
        return Err(LoadError::DurationRange(text.to_string()));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("2h").is_err());
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("90m").is_err());
    }
}

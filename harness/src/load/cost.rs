//! What the load generator itself spent: this process's CPU seconds, user and system (`getrusage`),
//! over the run, and per 1,000 requests — so a user sees how much of the machine the tester took
//! from the server it measures. With the embedded target the server runs in this process and its CPU
//! is counted too; the report says which.

use std::time::Duration;

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;
use serde_json::{Value, json};

/// This process's CPU time so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cpu {
    /// In user mode.
    pub user: Duration,
    /// In the kernel.
    pub system: Duration,
}

fn duration(time: TimeVal) -> Duration {
    Duration::from_secs(time.tv_sec().max(0) as u64) + Duration::from_micros(time.tv_usec().max(0) as u64)
}

impl Cpu {
    /// Now (zero when the kernel will not say).
    pub fn now() -> Cpu {
        getrusage(UsageWho::RUSAGE_SELF)
            .map(|usage| Cpu { user: duration(usage.user_time()), system: duration(usage.system_time()) })
            .unwrap_or_default()
    }

    /// What was spent since `start`.
    pub fn since(self, start: Cpu) -> Cpu {
        Cpu { user: self.user.saturating_sub(start.user), system: self.system.saturating_sub(start.system) }
    }
}

/// The run's cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// User CPU seconds.
    pub user_s: f64,
    /// System CPU seconds.
    pub system_s: f64,
    /// Requests sent.
    pub requests: u64,
    /// Whether the server ran in this process (its CPU is in the figures).
    pub includes_server: bool,
}

impl Cost {
    /// The cost of `requests` that took `cpu`.
    pub fn new(cpu: Cpu, requests: u64, includes_server: bool) -> Self {
        Cost { user_s: cpu.user.as_secs_f64(), system_s: cpu.system.as_secs_f64(), requests, includes_server }
    }

    /// CPU seconds per 1,000 requests (`None` without requests).
    pub fn per_1000(&self) -> Option<f64> {
        (self.requests > 0).then(|| (self.user_s + self.system_s) * 1000.0 / self.requests as f64)
    }

    /// The report's line.
    pub fn line(&self) -> String {
        let whose = match self.includes_server {
            true => "this process: the embedded server's CPU is in it",
            false => "the load generator alone",
        };
        let per = self.per_1000().map_or("no requests".to_string(), |s| format!("{s:.3} CPU s per 1,000 requests"));
        format!(
            "cost: {per} ({:.2} s user + {:.2} s system for {} requests; {whose})",
            self.user_s, self.system_s, self.requests
        )
    }

    /// The JSON report's `cpu`.
    pub fn json(&self) -> Value {
        json!({
            "user_s": self.user_s,
            "system_s": self.system_s,
            "requests": self.requests,
            "per_1000_requests_s": self.per_1000(),
            "includes_server": self.includes_server,
        })
    }

    /// Back from [`Cost::json`] (a merge sums the segments'): `None` when absent.
    pub fn from_json(value: &Value) -> Option<Cost> {
        Some(Cost {
            user_s: value.get("user_s")?.as_f64()?,
            system_s: value.get("system_s")?.as_f64()?,
            requests: value.get("requests")?.as_u64()?,
            includes_server: value.get("includes_server")?.as_bool()?,
        })
    }

    /// Two segments' costs together.
    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            user_s: self.user_s + other.user_s,
            system_s: self.system_s + other.system_s,
            requests: self.requests + other.requests,
            includes_server: self.includes_server || other.includes_server,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work_and_is_counted_per_thousand_requests() {
        let start = Cpu::now();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let spent = Cpu::now().since(start);
        assert!(spent.user + spent.system > Duration::ZERO, "{spent:?} ({x})");
        let cost = Cost { user_s: 1.5, system_s: 0.5, requests: 4000, includes_server: false };
        assert_eq!(cost.per_1000(), Some(0.5));
        assert_eq!(Cost { requests: 0, ..cost }.per_1000(), None);
        assert_eq!(Cost::from_json(&cost.json()), Some(cost));
        let both = cost.plus(Cost { includes_server: true, ..cost });
        assert_eq!((both.requests, both.per_1000(), both.includes_server), (8000, Some(0.5), true));
        assert!(cost.line().starts_with("cost: 0.500 CPU s per 1,000 requests (1.50 s user + 0.50 s system"));
        assert!(cost.line().ends_with("the load generator alone)"));
    }
}

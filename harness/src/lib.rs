//! # mediacheck
//!
//! The conformance runner and the load generator for MCP image transport. It checks a
//! server from the outside, clause by clause of SPEC.md.
//!
//! ## Layout
//!
//! - [`case`]: what a case is (id, clause, MUST/SHOULD, scenario, check); [`check`]: the verdict type
//!   and the small assertion helpers (a leaf).
//! - [`cases`]: the cases, one file per SPEC section.
//! - [`scenario`]: the server configurations cases need.
//! - [`target`]: where servers come from — embedded, spawn, url; [`running`]: a server process a case
//!   starts, talks to and signals itself; [`embedded`]: the reference server
//!   inside (the default `embedded` feature; without it, no reference-server code at all).
//! - [`runner`]: runs cases, one task each, turning every error or panic into a verdict.
//! - [`http`] / [`sse`] / [`events`]: the harness's own client, stream reader (raw paths,
//!   transcripts) and types for SPEC 6.2's events; [`monitor`]: the wire monitor, SPEC's invariants of
//!   every path held against every whole exchange a case makes.
//! - [`report`]: terminal, JSON, JUnit, Markdown (a CI job's summary) and self-contained HTML reports;
//!   [`baseline`]: expected failures, stale entries.
//! - [`coverage`]: which SPEC clauses have a case, and why the others cannot be checked from outside.
//! - [`geometry`]: SPEC 12.2's image-token model, from the clause (what the vision cases expect).
//! - [`generate`]: the generated cases' seeded runner (proptest, shrinking) and models of clauses
//!   checked on generated requests (`lifting`: §11).
//! - [`load`]: `mediacheck load` — tool-picture traffic under load, HDR latencies, `lost: N`.
//! - [`attack`]: `mediacheck attack` — hostile traffic beside an honest client, peak RSS and p99 per attack.
//! - [`browser`]: the page cases' headless Chromium, recording proxy and page contract (SPEC 13.7).
//! - [`context`]: what a check sees — the client, the configuration folder, the fixture's log,
//!   restarting the server, launching server processes.
//!
//! **Architecture invariant:** verdicts come from the wire alone. The harness starts the reference
//! server (embedded target) but never reads its internals to decide anything.

pub mod attack;
pub mod baseline;
pub mod browser;
pub mod case;
pub mod cases;
pub mod check;
pub mod context;
pub mod coverage;
pub mod embedded;
pub mod events;
pub mod generate;
pub mod geometry;
pub mod http;
pub mod load;
pub mod monitor;
pub mod report;
pub mod requirements;
pub mod runner;
pub mod running;
pub mod scenario;
pub mod sse;
pub mod target;

/// `*` matches any run of characters; everything else matches itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            text.starts_with(head)
                && (head.len()..=text.len()).any(|i| text.is_char_boundary(i) && glob(tail, &text[i..]))
        }
    }
}

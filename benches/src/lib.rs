//! # benches
//!
//! criterion benchmarks of the hot paths, ids `area/operation/input` (DESIGN §7). Run them with
//! `ci/bench.sh`, which keeps a baseline and prints what regressed.
//!
//! ## Layout
//!
//! - [`inputs`]: the inputs, shared by the benchmarks and their tests: seed 001's three tool messages
//!   (2 MB with one picture, 2 MB with none, 20 KB), a 1.5 MB picture, a tool result carrying it.
//! - `benches/lift.rs`: lifting pictures out of tool text, beside its limits — one `memchr` pass over
//!   the same bytes, and one base64 decode of the picture.
//! - `benches/media.rs`: result-to-parts, SHA-256 plus the atomic cache write, `GET /tool-media`
//!   in-process, preparing a request that carries a `strata-tool-media:` reference.
//! - `benches/body_check.rs`: `mediacheck load`'s check of a picture body per size — SHA-256 against
//!   the name, and the compare with a proven copy that replaces it after a name's first body.

pub mod inputs;

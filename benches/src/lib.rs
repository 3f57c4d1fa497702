//! # benches
//!
//! criterion benchmarks of the hot paths (ids `area/operation/input`): lifting pictures out of tool
//! text, result-to-parts conversion, SHA-256 and the atomic cache write, serving `/tool-media`. Not
//! written yet: they come with the load-and-benchmarks issue.
//!
//! ## Layout
//!
//! (empty until that issue lands)

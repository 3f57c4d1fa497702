//! The browser behind the page cases (SPEC §13): headless Chromium through chromedriver, driven with
//! fantoccini, finding things only by the page contract of SPEC 13.7 — so the same cases check any
//! server's page.
//!
//! - [`driver`]: chromedriver (started on first use, stopped at the end of a run), one headless session
//!   per width with its viewport set exactly through CDP, screenshots per case, width and step.
//! - [`proxy`]: a recording proxy the browser talks to instead of the server: what the page requested,
//!   with which headers and bodies; [`recut`]: its other framing of event streams (SPEC 13.16).
//! - [`page`]: what a user does through the contract, and waiting for the DOM (never a fixed sleep).
//! - [`layout`]: 13.5's rules read from the page; [`rules`]: 13.8–13.12's (axe-core, target size, cut
//!   text, text size, pictures).

pub mod driver;
pub mod layout;
pub mod page;
pub mod proxy;
pub mod recut;
pub mod rules;

pub use driver::{Session, WIDTHS, run_ended, run_started};

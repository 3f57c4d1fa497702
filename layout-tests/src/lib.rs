//! # layout-tests
//!
//! WebDriver checks of the reference server's chat page in headless Chromium (Debian's `chromium` and
//! `chromium-driver`) at exact viewport widths, set with CDP `Emulation.setDeviceMetricsOverride`
//! because a window cannot be narrower than 500 px. Geometry and DOM are asserted, never pixels; a
//! screenshot per width and step is kept under `target/layout-screenshots/`.
//!
//! ## Layout
//!
//! - [`browser`]: chromedriver on a free loopback port, a headless session, the viewport, screenshots.
//! - [`page`]: what a user does on the page (set the key, send, stop, expand, reload) and waiting on
//!   the DOM for what should follow.
//! - [`geometry`]: the layout facts read from the page and the rules they must meet.
//!
//! The test itself is `tests/layout.rs`.

pub mod browser;
pub mod geometry;
pub mod page;

//! # layout-tests
//!
//! WebDriver checks of the reference server's chat page in headless Chromium at 320, 390, 640, 768 and
//! 1280 px (fantoccini + chromedriver, viewport set exactly with CDP). Not written yet: the chat page
//! and its tests come with the chat-page issue.
//!
//! ## Layout
//!
//! (empty until that issue lands)

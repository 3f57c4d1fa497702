//! Tool pictures (SPEC §8–§10): what a picture is (`format`), the names and references that point at
//! cached ones (`name`), the content-addressed cache folder (`cache`), and an MCP result cut into text
//! and pictures (`parts`).

pub mod cache;
pub mod format;
pub mod name;
pub mod parts;

pub use cache::MediaCache;
pub use format::Format;
pub use name::{MediaName, MediaRefError};

//! What every attack is sent with: the server's address and how long (`AttackEnv`), and the key the
//! attacked servers are given. Apart from the catalogue so that the senders (`requests`,
//! `connections`) and the catalogue that calls them do not need each other's types.

use std::path::PathBuf;
use std::time::Duration;

/// The API key every attacked server is given (the attacks send it: they are authenticated clients).
pub const KEY: &str = "mediacheck-attack-key";

/// Where and how long to attack.
#[derive(Debug, Clone)]
pub struct AttackEnv {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// How long.
    pub duration: Duration,
    /// The server's picture cache folder, `<config-stem>.tool-media/` beside its configuration (SPEC 8.3).
    pub media_folder: PathBuf,
}

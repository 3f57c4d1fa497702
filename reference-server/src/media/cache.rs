//! The content-addressed picture cache, `<config-stem>.tool-media/` (SPEC 8.3, 8.9, 9.3): every file is
//! named by its SHA-256, written to a temp file in the same folder and renamed, never rewritten, and
//! read back only as a regular file directly inside the folder (a symlink is never followed).
//!
//! Serving keeps recently read pictures in memory (their content can never change: the name is the
//! hash), but every request still looks at the file itself first, so a picture removed from the folder
//! is gone at once.

use std::collections::{HashMap, VecDeque};
use std::fs::{self, File, OpenOptions};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::format::Format;
use super::name::MediaName;

/// The cache folder.
#[derive(Debug, Clone)]
pub struct MediaCache {
    dir: PathBuf,
    recent: Arc<Mutex<Recent>>,
}

/// How many bytes of pictures are kept in memory for serving.
const MEMORY_BUDGET: usize = 64 << 20;

/// A cached picture's mode: the server's user only (SPEC 8.3).
const FILE_MODE: u32 = 0o600;
/// The cache folder's mode.
const FOLDER_MODE: u32 = 0o700;

/// Recently served pictures, oldest first.
#[derive(Debug, Default)]
struct Recent {
    bytes: HashMap<String, Bytes>,
    order: VecDeque<String>,
    total: usize,
}

impl Recent {
    fn insert(&mut self, name: &str, bytes: Bytes) {
        if bytes.len() > MEMORY_BUDGET / 4 || self.bytes.contains_key(name) {
            return;
        }
        while self.total + bytes.len() > MEMORY_BUDGET {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some(gone) = self.bytes.remove(&oldest) {
                self.total -= gone.len();
            }
        }
        self.total += bytes.len();
        self.order.push_back(name.to_string());
        self.bytes.insert(name.to_string(), bytes);
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        out.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(byte & 15)]));
    }
    out
}

impl MediaCache {
    /// A cache in `dir` (created on the first write).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, recent: Arc::default() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores a picture and returns its name. The same bytes twice are one file; a reader never sees
    /// half a file, and two writers of the same picture cannot corrupt it (each writes its own temp
    /// file; the rename of identical content is atomic either way).
    pub fn store(&self, format: Format, bytes: &[u8]) -> io::Result<MediaName> {
        let name = MediaName::new(&sha256_hex(bytes), format)
            .ok_or_else(|| io::Error::other("this format is not kept in the cache"))?;
        self.store_named(&name, bytes).map(|()| name)
    }

    /// Stores `bytes` under `name` (the caller vouches that the name is their hash).
    pub fn store_named(&self, name: &MediaName, bytes: &[u8]) -> io::Result<()> {
        let path = self.dir.join(name.as_str());
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64) {
            return Ok(());
        }
        self.ensure_dir()?;
        let temp = self.dir.join(format!(".{}.{}.tmp", name.sha256(), uuid::Uuid::new_v4().simple()));
        let written = (|| {
            let mut file = OpenOptions::new().write(true).create_new(true).mode(FILE_MODE).open(&temp)?;
            file.write_all(bytes)?;
            fs::rename(&temp, &path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written
    }

    fn ensure_dir(&self) -> io::Result<()> {
        match fs::symlink_metadata(&self.dir) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(_) => Err(io::Error::other("the cache path is not a folder")),
            Err(_) => {
                let mode = FOLDER_MODE;
                fs::DirBuilder::new().recursive(true).mode(mode).create(&self.dir)?;
                fs::set_permissions(&self.dir, fs::Permissions::from_mode(mode))
            }
        }
    }

    /// Opens a cached picture: the final component is opened with `O_NOFOLLOW` and must be a regular
    /// file. Any failure is `NotFound` to the caller's eyes; the route says nothing more.
    pub fn open(&self, name: &MediaName) -> io::Result<(File, u64)> {
        let path = self.dir.join(name.as_str());
        let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK;
        let file = OpenOptions::new().read(true).custom_flags(flags).open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(io::ErrorKind::NotFound, "not a regular file"));
        }
        Ok((file, meta.len()))
    }

    /// The size of a cached picture if it is a regular file directly in the folder (a link is not
    /// followed). Cheap: one `lstat`.
    pub fn size(&self, name: &MediaName) -> io::Result<u64> {
        let path = self.dir.join(name.as_str());
        let meta = fs::symlink_metadata(path)?;
        if !meta.is_file() {
            return Err(io::Error::new(io::ErrorKind::NotFound, "not a regular file"));
        }
        Ok(meta.len())
    }

    /// A picture served before, when its file is still there: `Ok(None)` means "read it" ([`Self::load`]);
    /// an error means there is no such picture.
    pub fn recent(&self, name: &MediaName) -> io::Result<Option<Bytes>> {
        let size = self.size(name)?;
        let recent = self.recent.lock().ok().and_then(|r| r.bytes.get(name.as_str()).cloned());
        Ok(recent.filter(|b| b.len() as u64 == size))
    }

    /// Reads a picture from the folder and keeps it in memory for the next [`Self::recent`].
    pub fn load(&self, name: &MediaName) -> io::Result<Bytes> {
        let bytes = Bytes::from(self.read(name)?);
        if let Ok(mut recent) = self.recent.lock() {
            recent.insert(name.as_str(), bytes.clone());
        }
        Ok(bytes)
    }

    /// Reads a cached picture whole.
    pub fn read(&self, name: &MediaName) -> io::Result<Vec<u8>> {
        let (mut file, len) = self.open(name)?;
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sha256_of_abc_is_the_known_one() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn a_stored_picture_is_named_by_its_hash_with_private_modes() {
        let dir = tempfile::tempdir().expect("dir");
        let cache = MediaCache::new(dir.path().join("run.tool-media"));
        let name = cache.store(Format::Png, b"\x89PNG\r\n\x1a\nfake").expect("stored");
        assert_eq!(name.as_str(), format!("{}.png", sha256_hex(b"\x89PNG\r\n\x1a\nfake")));
        let again = cache.store(Format::Png, b"\x89PNG\r\n\x1a\nfake").expect("stored");
        assert_eq!(name, again);
        let folder = fs::metadata(cache.dir()).expect("folder");
        assert_eq!(folder.permissions().mode() & 0o777, 0o700);
        let file = fs::metadata(cache.dir().join(name.as_str())).expect("file");
        assert_eq!(file.permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::read_dir(cache.dir()).expect("list").count(), 1, "no temp files left");
        assert_eq!(cache.read(&name).expect("read"), b"\x89PNG\r\n\x1a\nfake");
    }

    #[test]
    fn a_planted_symlink_is_not_followed() {
        let dir = tempfile::tempdir().expect("dir");
        let cache = MediaCache::new(dir.path().join("c"));
        fs::create_dir(cache.dir()).expect("dir");
        let secret = dir.path().join("secret.txt");
        fs::write(&secret, "canary").expect("write");
        let name = MediaName::new(&sha256_hex(b"x"), Format::Png).expect("name");
        std::os::unix::fs::symlink(&secret, cache.dir().join(name.as_str())).expect("link");
        assert!(cache.read(&name).is_err());
    }
}

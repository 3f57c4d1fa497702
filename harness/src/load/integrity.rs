//! Every picture body checked against its name, at wire speed.
//!
//! A name is the SHA-256 of its bytes, and the bytes of a name never change (SPEC 9.8). So the first
//! body of a name the run fetches is proven by SHA-256 and kept as the name's *proven copy*; every
//! later body of that name is compared byte for byte with the proven copy while it streams in — a
//! memory compare, many GB/s, and no copy of the body. A body equal to a proven copy hashes to the
//! name, so comparing checks exactly what hashing checks, not one byte less.
//!
//! Proven copies are bounded: they are kept for the names known before the run (`media-get`'s
//! pictures) while their bytes fit under a cap ([`DEFAULT_PROVEN_CAP`]); a name past the cap, and a
//! name only seen during the run (pictures a chat turn announces), is hashed every time. The report
//! counts each way apart.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::{Bytes, BytesMut};
use sha2::{Digest, Sha256};

/// The most bytes of proven copies a run keeps (256 MiB): past it, bodies are hashed.
pub const DEFAULT_PROVEN_CAP: u64 = 256 << 20;

/// How a body was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Hashed with SHA-256 and compared with its name.
    Hashed,
    /// Compared byte for byte with the name's proven copy.
    Compared,
}

/// The names known before the run, each with the digest its name states and, once a body proved it,
/// its proven copy.
#[derive(Debug)]
pub struct Proven {
    slots: HashMap<Box<str>, Slot>,
    cap: u64,
    held: AtomicU64,
}

/// One name known before the run.
#[derive(Debug)]
pub struct Slot {
    digest: Option<[u8; 32]>,
    copy: OnceLock<Bytes>,
    /// Whether a body is being gathered to become the copy (one at a time).
    gathering: AtomicBool,
}

/// The 32 bytes a name's first 64 characters state in lowercase hex (`None`: not such a name, so no
/// body can match it).
pub fn stated_digest(name: &str) -> Option<[u8; 32]> {
    let hex = name.as_bytes().get(..64)?;
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(digest)
}

impl Proven {
    /// Slots for `names`, keeping at most `cap` bytes of proven copies.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>, cap: u64) -> Self {
        let slots = names
            .into_iter()
            .map(|n| {
                (
                    Box::from(n),
                    Slot { digest: stated_digest(n), copy: OnceLock::new(), gathering: AtomicBool::new(false) },
                )
            })
            .collect();
        Proven { slots, cap, held: AtomicU64::new(0) }
    }

    /// Bytes held in proven copies, and how many names have one.
    pub fn held(&self) -> (u64, usize) {
        (self.held.load(Ordering::Relaxed), self.slots.values().filter(|s| s.copy.get().is_some()).count())
    }

    /// The cap on proven copies, in bytes.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Starts checking a body of `name`.
    pub fn check<'a>(&'a self, name: &str) -> BodyCheck<'a> {
        match self.slots.get(name) {
            Some(slot) => match slot.copy.get() {
                Some(copy) => BodyCheck::Compare { copy, offset: 0, equal: true },
                None => BodyCheck::hash(slot.digest, Some((self, slot))),
            },
            None => BodyCheck::hash(stated_digest(name), None),
        }
    }
}

/// A body being gathered to become its name's proven copy: one per name at a time, its bytes reserved
/// under the cap as they arrive, so proven copies and the bodies on their way to become one never hold
/// more than the cap together, whatever size of body a server sends. Dropped without being kept (a
/// wrong body, a body cut off, a timeout), it gives its reservation and its name back.
pub struct Gather<'a> {
    bytes: BytesMut,
    proven: &'a Proven,
    slot: &'a Slot,
}

impl<'a> Gather<'a> {
    fn start(proven: &'a Proven, slot: &'a Slot) -> Option<Self> {
        let free = proven.held.load(Ordering::Relaxed) < proven.cap;
        let claimed = free && slot.gathering.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok();
        claimed.then(|| Gather { bytes: BytesMut::new(), proven, slot })
    }

    /// Adds a chunk if it fits under the cap (`false`: it does not; the gathering is to be dropped).
    fn add(&mut self, chunk: &[u8]) -> bool {
        let len = chunk.len() as u64;
        if self.proven.held.fetch_add(len, Ordering::Relaxed) + len > self.proven.cap {
            self.proven.held.fetch_sub(len, Ordering::Relaxed);
            return false;
        }
        self.bytes.extend_from_slice(chunk);
        true
    }

    /// Makes the gathered body the name's proven copy (its bytes stay reserved).
    fn keep(mut self) {
        let bytes = std::mem::take(&mut self.bytes).freeze();
        if let Err(bytes) = self.slot.copy.set(bytes) {
            // Never happens (one gatherer a name, and none once there is a copy); released all the same.
            self.proven.held.fetch_sub(bytes.len() as u64, Ordering::Relaxed);
        }
    }
}

impl Drop for Gather<'_> {
    fn drop(&mut self) {
        self.proven.held.fetch_sub(self.bytes.len() as u64, Ordering::Relaxed);
        if self.slot.copy.get().is_none() {
            self.slot.gathering.store(false, Ordering::Release);
        }
    }
}

/// One body being checked, chunk by chunk as it arrives.
pub enum BodyCheck<'a> {
    /// Against the proven copy, without copying the body.
    Compare {
        /// The copy.
        copy: &'a Bytes,
        /// Bytes compared so far.
        offset: usize,
        /// Whether every byte so far matched.
        equal: bool,
    },
    /// By SHA-256; `keep` gathers the body to become its name's proven copy.
    Hash {
        /// The digest the name states.
        stated: Option<[u8; 32]>,
        /// The running hash.
        hasher: Box<Sha256>,
        /// The body so far, while it may become the proven copy.
        keep: Option<Gather<'a>>,
    },
}

impl<'a> BodyCheck<'a> {
    fn hash(stated: Option<[u8; 32]>, slot: Option<(&'a Proven, &'a Slot)>) -> Self {
        let keep = slot.and_then(|(proven, slot)| Gather::start(proven, slot));
        BodyCheck::Hash { stated, hasher: Box::new(Sha256::new()), keep }
    }

    /// The next chunk of the body.
    pub fn feed(&mut self, chunk: &[u8]) {
        match self {
            BodyCheck::Compare { copy, offset, equal } => {
                let end = *offset + chunk.len();
                *equal = *equal && copy.get(*offset..end) == Some(chunk);
                *offset = end;
            }
            BodyCheck::Hash { hasher, keep, .. } => {
                hasher.update(chunk);
                if keep.as_mut().is_some_and(|gather| !gather.add(chunk)) {
                    *keep = None;
                }
            }
        }
    }

    /// Whether the whole body was the name's bytes, and how that was checked. A hashed body that
    /// proved its name becomes the name's proven copy (room permitting).
    pub fn finish(self) -> (bool, How) {
        match self {
            BodyCheck::Compare { copy, offset, equal } => (equal && offset == copy.len(), How::Compared),
            BodyCheck::Hash { stated, hasher, keep } => {
                let whole = stated.is_some_and(|stated| hasher.finalize().as_slice() == stated);
                if whole && let Some(gather) = keep {
                    gather.keep();
                }
                (whole, How::Hashed)
            }
        }
    }
}

/// Checks a whole body at once (the criterion benchmark's and the tests' way in).
pub fn check_whole(proven: &Proven, name: &str, body: &[u8]) -> (bool, How) {
    let mut check = proven.check(name);
    check.feed(body);
    check.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(body: &[u8]) -> String {
        format!("{}.png", fixtures::images::sha256_hex(body))
    }

    #[test]
    fn the_first_body_is_hashed_and_proven_later_ones_compared() {
        let body = b"\x89PNG picture bytes".repeat(100);
        let name = name_of(&body);
        let proven = Proven::new([name.as_str()], DEFAULT_PROVEN_CAP);
        assert_eq!(check_whole(&proven, &name, &body), (true, How::Hashed));
        assert_eq!(proven.held(), (body.len() as u64, 1));
        assert_eq!(check_whole(&proven, &name, &body), (true, How::Compared));
        // In chunks of any size, too.
        let mut check = proven.check(&name);
        for chunk in body.chunks(7) {
            check.feed(chunk);
        }
        assert_eq!(check.finish(), (true, How::Compared));
    }

    #[test]
    fn every_wrong_body_is_caught_either_way() {
        let body = b"0123456789".repeat(50);
        let name = name_of(&body);
        let mut flipped = body.clone();
        flipped[499] ^= 1;
        let wrong = [flipped, body[..499].to_vec(), [body.as_slice(), b"x"].concat(), Vec::new()];
        // Hashed (no proven copy yet): a wrong body proves nothing and is not kept.
        let fresh = Proven::new([name.as_str()], DEFAULT_PROVEN_CAP);
        for bad in &wrong {
            assert_eq!(check_whole(&fresh, &name, bad), (false, How::Hashed), "{} bytes", bad.len());
        }
        assert_eq!(fresh.held(), (0, 0));
        // Compared (after a whole body proved the name).
        assert_eq!(check_whole(&fresh, &name, &body), (true, How::Hashed));
        for bad in &wrong {
            assert_eq!(check_whole(&fresh, &name, bad), (false, How::Compared), "{} bytes", bad.len());
        }
    }

    #[test]
    fn past_the_cap_and_for_names_not_known_ahead_every_body_is_hashed() {
        let (small, large) = (vec![1u8; 100], vec![2u8; 300]);
        let (small_name, large_name) = (name_of(&small), name_of(&large));
        let proven = Proven::new([small_name.as_str(), large_name.as_str()], 350);
        assert_eq!(check_whole(&proven, &small_name, &small), (true, How::Hashed));
        // 100 + 300 > 350: the large picture is never kept, so it is hashed every time.
        for _ in 0..3 {
            assert_eq!(check_whole(&proven, &large_name, &large), (true, How::Hashed));
        }
        assert_eq!(proven.held(), (100, 1));
        // A cap exactly the size of both keeps both (N, not N - 1).
        let exact = Proven::new([small_name.as_str(), large_name.as_str()], 400);
        check_whole(&exact, &small_name, &small);
        check_whole(&exact, &large_name, &large);
        assert_eq!(exact.held(), (400, 2));
        let other = name_of(b"announced during the run");
        assert_eq!(check_whole(&proven, &other, b"announced during the run"), (true, How::Hashed));
        assert_eq!(check_whole(&proven, &other, b"announced during the run"), (true, How::Hashed));
        assert_eq!(check_whole(&proven, &other, b"something else"), (false, How::Hashed));
    }

    #[test]
    fn one_body_at_a_time_is_gathered_and_a_body_cut_off_gives_its_room_back() {
        let body = vec![7u8; 1000];
        let name = name_of(&body);
        let proven = Proven::new([name.as_str()], 1500);
        let mut first = proven.check(&name);
        let mut second = proven.check(&name);
        first.feed(&body[..600]);
        second.feed(&body[..600]);
        // Only the first gathers: 600 bytes are reserved, not 1,200.
        assert_eq!(proven.held(), (600, 0));
        drop(first);
        assert_eq!(proven.held(), (0, 0), "a body cut off gives its reservation back");
        second.feed(&body[600..]);
        assert_eq!(second.finish(), (true, How::Hashed));
        assert_eq!(proven.held(), (0, 0), "the second began while the first gathered, so it kept nothing");
        // The name is free again: the next whole body becomes the copy.
        assert_eq!(check_whole(&proven, &name, &body), (true, How::Hashed));
        assert_eq!(proven.held(), (1000, 1));
        // A body larger than the room left is dropped midway and never counted past the cap.
        let big = vec![9u8; 600];
        let big_name = name_of(&big);
        let tight = Proven::new([big_name.as_str()], 500);
        assert_eq!(check_whole(&tight, &big_name, &big), (true, How::Hashed));
        assert_eq!(tight.held(), (0, 0));
    }

    #[test]
    fn names_state_their_digest_in_lowercase_hex_only() {
        let name = name_of(b"x");
        assert!(stated_digest(&name).is_some());
        assert_eq!(stated_digest(&name.to_uppercase()), None);
        assert_eq!(stated_digest(&name[..63]), None);
        assert_eq!(stated_digest(&format!("g{}", &name[1..])), None);
        let proven = Proven::new(["not-a-name.png"], DEFAULT_PROVEN_CAP);
        assert_eq!(check_whole(&proven, "not-a-name.png", b""), (false, How::Hashed));
    }
}

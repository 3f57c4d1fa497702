//! The picture (seed 003): a relative name resolved inside the image folder one component at a time
//! without following links (nor a file with a second name, a hard link) and read within the byte
//! limit; then ([`prepare`], in `picture`) checked from its header (format, size, pixels, animation:
//! GIF frames counted from their headers without decoding, APNG's `acTL` and WebP's animation flag
//! read from the chunks) before it is decoded, re-encoded from pixels — so no metadata survives — and
//! shrunk to at most 512 px.

mod picture;

use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path};

pub use picture::prepare;

/// The largest file accepted.
pub const MAX_BYTES: u64 = 10 << 20;
/// The most pixels accepted (width × height, read from the header).
pub const MAX_PIXELS: u64 = 20_000_000;
/// The longest side sent.
pub const MAX_SIDE: u32 = 512;
/// What the GIF frame count may allocate: its metadata only (XMP, ICC; it makes no frame buffer).
pub const MAX_GIF_FRAME_BYTES: u64 = 16 << 20;

/// Why a picture is refused. The texts go back to the client, so they name no path and no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Not a plain relative name (absolute, `..`, hidden, empty, separators the folder does not use).
    #[error(
        "image must be a relative file name inside the image folder (no absolute paths, '..', hidden names or backslashes)"
    )]
    NotARelativeName,
    /// A URL, a data URL or base64 instead of a name.
    #[error("image must be a file name inside the image folder, not a URL, a data URL or base64")]
    NotAName,
    /// A link somewhere on the way.
    #[error("symbolic links are not followed")]
    Link,
    /// Nothing of that name.
    #[error("there is no such picture in the image folder")]
    Missing,
    /// The picture, or a folder on the way to it, is not readable by the server's user.
    #[error(
        "permission denied: the server (UID/GID 10001 in the container) cannot read this picture or enter a folder on \
         the way to it; give it read access to the picture and read and traverse access to its folders, or set \
         VISION_IMAGE_GID to a group that has them"
    )]
    Permission,
    /// A folder, a device, a pipe.
    #[error("the picture is not a regular file")]
    NotAFile,
    /// A file with more than one name: a hard link could make a file outside the folder readable.
    #[error("the picture has more than one name (a hard link), which is not accepted: save it as a plain file")]
    HardLink,
    /// Over the byte limit.
    #[error("the picture is larger than 10 MiB")]
    TooLarge,
    /// Over the pixel limit.
    #[error("the picture has more than 20 megapixels")]
    TooManyPixels,
    /// Not PNG, JPEG, WebP or GIF.
    #[error("only PNG, JPEG, WebP and still GIF pictures are accepted")]
    Format,
    /// An animated GIF, PNG (APNG) or WebP.
    #[error("animated pictures (GIF, APNG, WebP) are not accepted: save one still frame")]
    Animated,
    /// Unreadable or corrupt.
    #[error("the picture could not be read")]
    Unreadable,
}

/// A picture ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// `data:image/<png|jpeg>;base64,…`.
    pub data_url: String,
    /// The width sent.
    pub width: u32,
    /// The height sent.
    pub height: u32,
}

/// Whether `name` is a plain relative name: no URL, no base64, no absolute path, no `..`, nothing hidden.
pub fn check_name(name: &str) -> Result<(), ImageError> {
    let lower = name.to_ascii_lowercase();
    if lower.contains("://") || lower.starts_with("data:") || lower.starts_with("www.") {
        return Err(ImageError::NotAName);
    }
    let base64ish =
        name.len() >= 256 && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    if base64ish {
        return Err(ImageError::NotAName);
    }
    if name.is_empty() || name.len() > 1024 || name.contains('\\') || name.contains('\0') || name.starts_with('/') {
        return Err(ImageError::NotARelativeName);
    }
    for component in Path::new(name).components() {
        match component {
            Component::Normal(part) if !part.to_string_lossy().starts_with('.') => {}
            _ => return Err(ImageError::NotARelativeName),
        }
    }
    Ok(())
}

/// What a failed look-up or open means for the client: missing, not allowed, a link, or unreadable.
fn io_error(error: &std::io::Error) -> ImageError {
    match error.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => ImageError::Missing,
        std::io::ErrorKind::PermissionDenied => ImageError::Permission,
        _ if error.raw_os_error() == Some(libc::ELOOP) => ImageError::Link,
        _ => ImageError::Unreadable,
    }
}

/// Opens `name` inside `root`: every component is looked at without following links, the file is
/// opened with `O_NOFOLLOW`, and the opened file must be the one that was looked at, inside `root`.
pub fn open_inside(root: &Path, name: &str) -> Result<(File, u64), ImageError> {
    check_name(name)?;
    let root = fs::canonicalize(root).map_err(|e| io_error(&e))?;
    let parts: Vec<_> = Path::new(name).components().collect();
    let mut path = root.clone();
    for (index, part) in parts.iter().enumerate() {
        path.push(part.as_os_str());
        let meta = fs::symlink_metadata(&path).map_err(|e| io_error(&e))?;
        if meta.file_type().is_symlink() {
            return Err(ImageError::Link);
        }
        let last = index + 1 == parts.len();
        if !last && !meta.is_dir() {
            return Err(ImageError::Missing);
        }
        if last && !meta.is_file() {
            return Err(ImageError::NotAFile);
        }
    }
    let looked_at = fs::symlink_metadata(&path).map_err(|e| io_error(&e))?;
    if looked_at.len() > MAX_BYTES {
        return Err(ImageError::TooLarge);
    }
    race_point(Moment::LookedAt, &path);
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| io_error(&e))?;
    let opened = file.metadata().map_err(|_| ImageError::Unreadable)?;
    if !opened.is_file() || opened.dev() != looked_at.dev() || opened.ino() != looked_at.ino() {
        return Err(ImageError::NotAFile);
    }
    if opened.nlink() > 1 {
        return Err(ImageError::HardLink);
    }
    // Nothing on the way was swapped for a link between the walk and the open.
    if let Ok(real) = fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        && real != path
    {
        return Err(ImageError::Link);
    }
    if opened.len() > MAX_BYTES {
        return Err(ImageError::TooLarge);
    }
    Ok((file, opened.len()))
}

/// The moments at which the folder's owner could change a file under the server: after it was looked
/// at (before the open), and after the open (before the read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Moment {
    LookedAt,
    Opened,
}

/// A test's change to the file.
#[cfg(test)]
type RaceChange = Box<dyn FnOnce(&Path)>;

#[cfg(test)]
thread_local! {
    /// What a test does to the file at a [`Moment`], once: it plays the owner racing the server.
    static RACE: std::cell::RefCell<Option<(Moment, RaceChange)>> = const { std::cell::RefCell::new(None) };
}

/// Runs the test's change to the file at `moment` (nothing outside the unit tests).
fn race_point(moment: Moment, path: &Path) {
    #[cfg(test)]
    RACE.with(|race| {
        let due = race.borrow().as_ref().is_some_and(|(at, _)| *at == moment);
        if due && let Some((_, change)) = race.borrow_mut().take() {
            change(path);
        }
    });
    #[cfg(not(test))]
    let _ = (moment, path);
}

/// Reads the picture `name` from `root`.
pub fn read_inside(root: &Path, name: &str) -> Result<Vec<u8>, ImageError> {
    let (file, len) = open_inside(root, name)?;
    race_point(Moment::Opened, &root.join(name));
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| io_error(&e))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ImageError::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_not_plain_relative_names_are_refused() {
        for bad in
            ["/etc/passwd", "../x.png", "a/../../x.png", ".hidden.png", "dir/.git/x.png", "a\\b.png", "", "./x.png"]
        {
            assert_eq!(check_name(bad), Err(ImageError::NotARelativeName), "{bad:?}");
        }
        for bad in ["https://example.com/x.png", "file:///etc/passwd", "data:image/png;base64,AAAA"] {
            assert_eq!(check_name(bad), Err(ImageError::NotAName), "{bad:?}");
        }
        assert_eq!(check_name(&"QUFB".repeat(100)), Err(ImageError::NotAName));
        assert_eq!(check_name("screens/error.png"), Ok(()));
        assert_eq!(check_name("a\0b.png"), Err(ImageError::NotARelativeName), "a NUL");
        // The name's bound at 1,023, 1,024 and 1,025 bytes (a 2-byte character at the end).
        for (name, accepted) in [
            (format!("{}.png", "x".repeat(1019)), true),
            (format!("{}é.png", "x".repeat(1018)), true),
            (format!("{}é.png", "x".repeat(1019)), false),
        ] {
            assert_eq!(check_name(&name).is_ok(), accepted, "{} bytes", name.len());
        }
    }

    /// The byte limit at N-1, N and N+1: a file of exactly 10 MiB is read whole, one byte more is
    /// refused before it is read.
    #[test]
    fn the_byte_limit_holds_at_its_bound() {
        let dir = tempfile::tempdir().expect("dir");
        let max = usize::try_from(MAX_BYTES).expect("fits");
        for (size, accepted) in [(max - 1, true), (max, true), (max + 1, false)] {
            std::fs::write(dir.path().join("p.png"), vec![7u8; size]).expect("file");
            match read_inside(dir.path(), "p.png") {
                Ok(bytes) => assert!(accepted && bytes.len() == size, "{size}: read {} bytes", bytes.len()),
                Err(error) => assert!(!accepted && error == ImageError::TooLarge, "{size}: {error:?}"),
            }
        }
    }

    /// Reads `p.png` (`size` bytes) with `change` done to it at `moment`, as the folder's owner could:
    /// what the read gave (its length) and whether the read got as far as the change.
    fn read_raced(
        size: u64,
        moment: Moment,
        change: impl FnOnce(&Path) + 'static,
    ) -> (Result<usize, ImageError>, bool) {
        let dir = tempfile::tempdir().expect("dir");
        let file = std::fs::File::create(dir.path().join("p.png")).expect("file");
        file.set_len(size).expect("size");
        RACE.with(|race| *race.borrow_mut() = Some((moment, Box::new(change))));
        let read = read_inside(dir.path(), "p.png").map(|bytes| bytes.len());
        (read, RACE.with(|race| race.borrow_mut().take().is_none()))
    }

    fn resize_to(size: u64) -> impl FnOnce(&Path) {
        move |path| std::fs::OpenOptions::new().write(true).open(path).expect("open").set_len(size).expect("resize")
    }

    /// Each size check holds on its own: a file over 10 MiB when looked at is refused though it shrinks
    /// before the open; one that grows past 10 MiB before the open, or after it (before the read), is
    /// refused too — never read cut at 10 MiB, never read whole, never given a buffer of its new size.
    #[test]
    fn a_file_that_changes_size_while_it_is_opened_is_judged_at_every_step() {
        let max = usize::try_from(MAX_BYTES).expect("fits");
        let too_large = Err(ImageError::TooLarge);
        assert_eq!(read_raced(MAX_BYTES + 1, Moment::LookedAt, resize_to(1000)), (too_large.clone(), false), "shrunk");
        assert_eq!(read_raced(1000, Moment::LookedAt, resize_to(MAX_BYTES + 1)), (too_large.clone(), true), "grown");
        assert_eq!(read_raced(1000, Moment::Opened, resize_to(MAX_BYTES + 1)), (too_large, true), "grown late");
        assert_eq!(read_raced(1000, Moment::Opened, resize_to(MAX_BYTES)), (Ok(max), true), "grown late to 10 MiB");
        assert_eq!(read_raced(1000, Moment::LookedAt, |_| ()), (Ok(1000), true), "unchanged");
    }

    /// The file swapped between the look-up and the open: for a link (to a picture outside the folder),
    /// refused as a link — O_NOFOLLOW, not the identity check after it; for another file, refused as not
    /// the one looked at; for a FIFO, refused without waiting for a writer (O_NONBLOCK).
    #[test]
    fn a_file_swapped_before_the_open_is_refused() {
        let outside = tempfile::tempdir().expect("dir");
        let secret = outside.path().join("secret.png");
        std::fs::write(&secret, b"not for the client").expect("secret");
        let swap_for_link = move |path: &Path| {
            std::fs::remove_file(path).expect("remove");
            std::os::unix::fs::symlink(&secret, path).expect("link");
        };
        assert_eq!(read_raced(100, Moment::LookedAt, swap_for_link), (Err(ImageError::Link), true));
        let swap_for_file = |path: &Path| {
            let other = path.with_file_name("other.png");
            std::fs::write(&other, b"another file").expect("other");
            std::fs::rename(&other, path).expect("rename");
        };
        assert_eq!(read_raced(100, Moment::LookedAt, swap_for_file), (Err(ImageError::NotAFile), true));
        let swap_for_fifo = |path: &Path| {
            std::fs::remove_file(path).expect("remove");
            let made = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo");
            assert!(made.success(), "mkfifo");
        };
        assert_eq!(read_raced(100, Moment::LookedAt, swap_for_fifo), (Err(ImageError::NotAFile), true));
    }

    /// Unmounts what a test mounted, last first, when it ends (however it ends).
    struct Mounted(Vec<std::path::PathBuf>);

    impl Mounted {
        fn mount(&mut self, args: &[&std::ffi::OsStr], at: &Path) {
            let status = std::process::Command::new("mount").args(args).arg(at).status().expect("mount");
            assert!(status.success(), "mount {args:?} {}: this test mounts two tmpfs, it needs root", at.display());
            self.0.push(at.to_path_buf());
        }
    }

    impl Drop for Mounted {
        fn drop(&mut self) {
            for at in self.0.iter().rev() {
                let _ = std::process::Command::new("umount").arg("-l").arg(at).status();
            }
        }
    }

    /// The file swapped for one with its inode number on another filesystem: a second filesystem
    /// mounted over the picture's folder between the look-up and the open. Only the device number tells
    /// the two apart (two fresh tmpfs number their files alike: the second file of each is inode 3), so
    /// the identity check must compare it; the file's path stays the same, so the check of the open
    /// file's path passes.
    #[test]
    fn a_file_swapped_for_its_inode_number_on_another_filesystem_is_refused() {
        use std::os::unix::fs::MetadataExt;
        let base = tempfile::tempdir().expect("dir");
        let (root, other) = (base.path().join("root"), base.path().join("other"));
        let mut mounted = Mounted(Vec::new());
        for dir in [&root, &other] {
            std::fs::create_dir(dir).expect("dir");
            mounted.mount(&["-t".as_ref(), "tmpfs".as_ref(), "-o".as_ref(), "size=1m".as_ref(), "tmpfs".as_ref()], dir);
        }
        std::fs::create_dir(root.join("sub")).expect("sub");
        std::fs::write(root.join("sub/p.png"), b"the picture looked at").expect("picture");
        std::fs::write(other.join("first"), b"").expect("first");
        std::fs::write(other.join("p.png"), b"another filesystem's file").expect("other");
        let (looked_at, swapped_in) =
            (root.join("sub/p.png").metadata().expect("meta"), other.join("p.png").metadata().expect("meta"));
        assert_eq!(looked_at.ino(), swapped_in.ino(), "the two files share an inode number (or this proves nothing)");
        assert_ne!(looked_at.dev(), swapped_in.dev(), "on two filesystems");
        let over = root.join("sub");
        let mount_over = move |_: &Path| {
            let status =
                std::process::Command::new("mount").arg("--bind").arg(&other).arg(&over).status().expect("mount");
            assert!(status.success(), "mount --bind");
        };
        RACE.with(|race| *race.borrow_mut() = Some((Moment::LookedAt, Box::new(mount_over))));
        let read = read_inside(&root, "sub/p.png");
        mounted.0.push(root.join("sub"));
        assert!(RACE.with(|race| race.borrow_mut().take().is_none()), "the read got as far as the swap");
        assert_eq!(read, Err(ImageError::NotAFile));
    }

    /// What the client is told for each way a look-up or an open can fail.
    #[test]
    fn io_errors_are_named_for_the_client() {
        for (errno, expected) in [
            (libc::ENOENT, ImageError::Missing),
            (libc::ENOTDIR, ImageError::Missing),
            (libc::EACCES, ImageError::Permission),
            (libc::ELOOP, ImageError::Link),
            (libc::ENAMETOOLONG, ImageError::Unreadable),
            (libc::EIO, ImageError::Unreadable),
        ] {
            assert_eq!(io_error(&std::io::Error::from_raw_os_error(errno)), expected, "errno {errno}");
        }
    }
}

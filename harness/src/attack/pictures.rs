//! The many-pictures attack (SPEC 9.8): thousands of distinct pictures planted in the server's cache
//! folder, each fetched at least once by a few clients, so that a server keeping what it served in
//! memory without a bound grows by all of them. Every answer is checked: 200 with the bytes whose
//! SHA-256 is the name.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fixtures::images::{PictureFormat, media_name, numbered_png, padded_png_of};

use super::env::{AttackEnv, KEY};

/// How many pictures are planted.
pub const COUNT: usize = 3_000;
/// The smallest picture's size (a 64×48 PNG padded, with its number in a chunk of its own).
pub const SIZE: usize = 128 << 10;

/// Picture `i`'s size: 128 KiB and 0 to 4,095 bytes, spread. Equal sizes would hide a copy whose
/// eviction only looks for a total of exactly its budget (64 MiB is 512 pictures of 128 KiB exactly).
pub fn size_of(i: usize) -> usize {
    SIZE + (i * 7919) % 4096
}
/// Clients fetching at once.
const WORKERS: usize = 4;

/// Writes the `count` pictures into `folder` (0700, files 0600, as a server would have written them)
/// under their cache names; the names, in order.
pub fn plant(folder: &Path, count: usize) -> io::Result<Vec<String>> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)?;
    let padded = padded_png_of(SIZE - 20, 64, 48);
    (0..count)
        .map(|i| {
            let bytes = numbered_png(&padded, i as u64, size_of(i) - SIZE);
            let name = media_name(PictureFormat::Png, &bytes);
            let mut file = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(folder.join(&name))?;
            io::Write::write_all(&mut file, &bytes)?;
            Ok(name)
        })
        .collect()
}

/// Plants [`COUNT`] pictures in the env's cache folder, then fetches them in turn from [`WORKERS`]
/// clients until the duration is over and every picture has been fetched at least once.
pub async fn fetch_all(env: &AttackEnv) -> BTreeMap<String, u64> {
    let folder = env.media_folder.clone();
    let names = match tokio::task::spawn_blocking(move || plant(&folder, COUNT)).await {
        Ok(Ok(names)) => Arc::new(names),
        Ok(Err(error)) => return BTreeMap::from([(format!("could not plant the pictures: {error}"), 1)]),
        Err(_) => return BTreeMap::from([("could not plant the pictures".to_string(), 1)]),
    };
    let deadline = tokio::time::Instant::now() + env.duration;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap_or_default();
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (client, names, next, base) = (client.clone(), names.clone(), next.clone(), env.base.clone());
            tokio::spawn(async move {
                let mut answers = BTreeMap::new();
                loop {
                    let turn = next.fetch_add(1, Ordering::Relaxed);
                    if turn >= names.len() && tokio::time::Instant::now() >= deadline {
                        break;
                    }
                    let name = &names[turn % names.len()];
                    let answer = fetch_one(&client, &base, name).await;
                    *answers.entry(answer).or_insert(0) += 1;
                }
                answers
            })
        })
        .collect();
    super::answers_of(tasks).await
}

/// One GET, named by what came back: `200`, `200 (other bytes)`, another status, or how it failed.
async fn fetch_one(client: &reqwest::Client, base: &str, name: &str) -> String {
    let response = match client.get(format!("{base}/tool-media/{name}")).bearer_auth(KEY).send().await {
        Ok(response) => response,
        Err(error) if error.is_timeout() => return "timeout".into(),
        Err(_) => return "closed".into(),
    };
    let status = response.status().as_u16();
    match response.bytes().await {
        Ok(body) if status == 200 && name.starts_with(&fixtures::images::sha256_hex(&body)) => "200".into(),
        Ok(_) if status == 200 => "200 (other bytes)".into(),
        Ok(_) => status.to_string(),
        Err(_) => format!("{status} (body cut)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_planted_picture_is_distinct_named_by_its_hash_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("dir");
        let folder = dir.path().join("attack.tool-media");
        let names = plant(&folder, 5).expect("planted");
        let unique: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(unique.len(), 5);
        for (i, name) in names.iter().enumerate() {
            let bytes = fs::read(folder.join(name)).expect("read");
            assert_eq!(bytes.len(), size_of(i), "picture {i}");
            assert_eq!(*name, format!("{}.png", fixtures::images::sha256_hex(&bytes)));
            assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "picture {i} is a PNG");
            assert_eq!(fs::metadata(folder.join(name)).expect("meta").permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(fs::metadata(&folder).expect("folder").permissions().mode() & 0o777, 0o700);
    }
}

//! Generated bursts of concurrent tool turns, and a model of what SPEC 8.3 and 8.6 say the cache and
//! the `media` entries must be when turns write the same new pictures at once and the files are
//! damaged between two bursts.
//!
//! A burst is 2 to 6 turns sent at once, each calling the fixture's `picture` tool for 1 to 3
//! pictures of one format (PNG, JPEG, WebP, or GIF, which is never cached) at the burst's size (one of
//! two) from seed 1 or 2 — so turns of one burst often ask for the same picture (seed 1 with 3 pictures and seed
//! 2 with 2 share two). The same burst runs twice; between the runs each announced file is kept,
//! deleted, or cut to half its bytes (as a crashed writer leaves it). The model, from SPEC alone:
//! every turn's result announces exactly its cached pictures in block order, each named by the
//! SHA-256 of its bytes with its format's extension, with its mime, size and dimensions (8.3, 8.6);
//! `GET` of each announced URL gives those bytes (9.x); after the second run every announced file is
//! in the cache folder whole — a deleted one written again, a cut one replaced (8.3: "read from the
//! folder each time, never remembered").
//!
//! The turns reach the server as requests naming a script set (4.9) per tool call, with
//! `restart_per_request`, so every turn runs its own call at once.

use std::path::{Path, PathBuf};

use fixtures::images::{self, PictureFormat};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::CHAT;
use crate::http::Http;
use crate::sse::EventStream;

/// The formats a turn's pictures take: three that are cached and one that is not (8.2).
const FORMATS: [PictureFormat; 4] = [PictureFormat::Png, PictureFormat::Jpeg, PictureFormat::Webp, PictureFormat::Gif];
/// The sizes a turn's pictures take.
const SIZES: [(u32, u32); 2] = [(64, 48), (333, 201)];
/// The first seeds a turn's pictures take (picture `i` of a call has seed `seed + i`).
const SEEDS: [u32; 2] = [1, 2];
/// The most pictures one call asks for.
const MOST: u32 = 3;

/// One turn: one call of the `picture` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// The pictures' format.
    pub format: PictureFormat,
    /// Their size.
    pub size: (u32, u32),
    /// The first picture's seed.
    pub seed: u32,
    /// How many pictures.
    pub count: u32,
}

impl Turn {
    /// The script set that makes this call (a request names it as its `model`).
    pub fn set_name(&self) -> String {
        format!("pictures-{}-{}x{}-{}-{}", self.format.extension(), self.size.0, self.size.1, self.seed, self.count)
    }

    /// The script of that set: the call, then an answer.
    fn scripts(&self) -> Vec<String> {
        let (width, height, seed, count) =
            (self.size.0.to_string(), self.size.1.to_string(), self.seed.to_string(), self.count.to_string());
        let arguments = [
            ("format", self.format.extension()),
            ("width", width.as_str()),
            ("height", height.as_str()),
            ("seed", seed.as_str()),
            ("count", count.as_str()),
        ];
        vec![fixtures::scripts::calls_script(&[("fake__picture", &arguments)]), fixtures::scripts::answer_script("ok")]
    }

    /// What 8.3 and 8.6 say the result announces: one entry per cached picture, in block order.
    fn expected(&self) -> Vec<Expected> {
        let cached = matches!(self.format, PictureFormat::Png | PictureFormat::Jpeg | PictureFormat::Webp);
        if !cached {
            return Vec::new();
        }
        (0..self.count)
            .map(|i| {
                let bytes = images::picture(self.format, self.size.0, self.size.1, self.seed + i);
                Expected {
                    name: format!("{}.{}", images::sha256_hex(&bytes), self.format.extension()),
                    mime: self.format.mime().to_string(),
                    size: self.size,
                    bytes,
                }
            })
            .collect()
    }
}

/// Every turn a burst can hold, so a server can be configured with each one's script set.
pub fn every_turn() -> Vec<Turn> {
    let mut turns = Vec::new();
    for format in FORMATS {
        for size in SIZES {
            for seed in SEEDS {
                for count in 1..=MOST {
                    turns.push(Turn { format, size, seed, count });
                }
            }
        }
    }
    turns
}

/// `engine.script_sets` for [`every_turn`].
pub fn script_sets() -> Value {
    Value::Object(every_turn().iter().map(|turn| (turn.set_name(), json!(turn.scripts()))).collect())
}

/// What happens to an announced file between the two runs of a burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Damage {
    /// Left as it is.
    Keep,
    /// Deleted.
    Delete,
    /// Cut to half its bytes.
    Cut,
}

/// A generated burst.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Burst {
    /// The turns sent at once.
    pub turns: Vec<Turn>,
    /// The damage done between the runs, to the announced files in name order, over and over.
    pub damage: Vec<Damage>,
}

/// Bursts from the whole space above.
pub fn bursts() -> impl Strategy<Value = Burst> {
    // One size a burst, so that its turns meet on a picture more often (formats still mix).
    let turns = (0..SIZES.len()).prop_flat_map(|s| {
        let turn = (0..FORMATS.len(), 0..SEEDS.len(), 1..=MOST).prop_map(move |(f, seed, count)| Turn {
            format: FORMATS[f],
            size: SIZES[s],
            seed: SEEDS[seed],
            count,
        });
        prop::collection::vec(turn, 2..=6)
    });
    let damage = prop_oneof![Just(Damage::Keep), Just(Damage::Delete), Just(Damage::Cut)];
    (turns, prop::collection::vec(damage, 1..=4)).prop_map(|(turns, damage)| Burst { turns, damage })
}

/// One line a failure prints.
pub fn describe(burst: &Burst) -> String {
    let turns: Vec<String> = burst
        .turns
        .iter()
        .map(|t| format!("{} {}x{} seed {} ×{}", t.format.extension(), t.size.0, t.size.1, t.seed, t.count))
        .collect();
    format!("turns at once: [{}]; between the runs: {:?}", turns.join(", "), burst.damage)
}

/// One announced picture as the model has it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expected {
    name: String,
    mime: String,
    size: (u32, u32),
    bytes: Vec<u8>,
}

/// Runs every turn of `burst` at once and checks each one's `media` and the served bytes.
async fn run_once(http: &Http, burst: &Burst, run: &str) -> Result<(), String> {
    let turns = burst.turns.iter().map(|turn| {
        let http = http.clone();
        let turn = *turn;
        async move {
            let body = json!({"model": turn.set_name(), "messages": [{"role": "user", "content": "go"}],
                "strata_mcp": true, "stream": true});
            let reply = http.post_json(CHAT, &body).send().await.map_err(|e| e.to_string())?;
            if reply.status != 200 {
                return Err(format!("{run}: status {} for {}: {}", reply.status, turn.set_name(), reply.text()));
            }
            let results = EventStream::parse(&reply.text()).results().map_err(|e| format!("{run}: {e:?}"))?;
            let announced: Vec<(String, String, u64, u64, u64)> = results
                .first()
                .map(|r| {
                    r.media.iter().map(|m| (m.name().to_string(), m.mime.clone(), m.bytes, m.width, m.height)).collect()
                })
                .unwrap_or_default();
            let expected = turn.expected();
            let wanted: Vec<(String, String, u64, u64, u64)> = expected
                .iter()
                .cloned()
                .map(|e| (e.name, e.mime, e.bytes.len() as u64, u64::from(e.size.0), u64::from(e.size.1)))
                .collect();
            if announced != wanted {
                return Err(format!(
                    "{run}, {}: media (name, mime, bytes, width, height) {announced:?}, the model says {wanted:?}",
                    turn.set_name()
                ));
            }
            for expected in &expected {
                let reply =
                    http.get(&format!("/tool-media/{}", expected.name)).send().await.map_err(|e| e.to_string())?;
                if reply.status != 200 || reply.body != expected.bytes {
                    return Err(format!(
                        "{run}: GET /tool-media/{} gave {} with {} bytes, the model says 200 with its {} bytes",
                        expected.name,
                        reply.status,
                        reply.body.len(),
                        expected.bytes.len()
                    ));
                }
            }
            Ok(())
        }
    });
    futures::future::join_all(turns).await.into_iter().collect::<Result<Vec<()>, String>>().map(|_| ())
}

/// The distinct pictures `burst` announces, by name.
fn announced(burst: &Burst) -> Vec<Expected> {
    let mut all: Vec<Expected> = burst.turns.iter().flat_map(Turn::expected).collect();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all.dedup_by(|a, b| a.name == b.name);
    all
}

/// Does `burst`'s damage to the cache folder's files (`pictures`: what it announces, by name).
fn damage(cache: &Path, pictures: &[Expected], burst: &Burst) -> Result<(), String> {
    for (picture, damage) in pictures.iter().zip(burst.damage.iter().cycle()) {
        let path = cache.join(&picture.name);
        match damage {
            Damage::Keep => Ok(()),
            Damage::Delete => std::fs::remove_file(&path),
            Damage::Cut => std::fs::write(&path, &picture.bytes[..picture.bytes.len() / 2]),
        }
        .map_err(|e| format!("the harness could not damage {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Runs `burst` twice with its damage between, and checks the cache folder at the end.
pub async fn check(http: Http, cache: PathBuf, burst: Burst) -> Result<(), String> {
    run_once(&http, &burst, "the first run").await?;
    // Each picture is encoded once for the damage and the final check (the turns encode their own).
    let pictures = announced(&burst);
    damage(&cache, &pictures, &burst)?;
    run_once(&http, &burst, "the second run, after the damage").await?;
    for picture in pictures {
        let path = cache.join(&picture.name);
        let held = std::fs::read(&path).unwrap_or_default();
        if held != picture.bytes {
            return Err(format!(
                "after the second run {} holds {} bytes, the model says its {} bytes (8.3: a deleted or cut file is written again)",
                picture.name,
                held.len(),
                picture.bytes.len()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_turn_has_its_own_set_and_turns_share_pictures() {
        let turns = every_turn();
        let mut names: Vec<String> = turns.iter().map(Turn::set_name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), turns.len());
        let one = Turn { format: PictureFormat::Png, size: SIZES[0], seed: 1, count: 3 };
        let two = Turn { seed: 2, count: 2, ..one };
        let shared = one.expected().iter().filter(|e| two.expected().contains(e)).count();
        assert_eq!(shared, 2);
        assert!(Turn { format: PictureFormat::Gif, ..one }.expected().is_empty());
    }

    /// Of 1,000 seeds, the runs of the case's budget (12) that hold what each named variant needs:
    /// two turns of one burst writing one picture (non-atomic), a cached file cut (stale-files-kept)
    /// or deleted (cache-remembered) between the runs, and a JPEG or WebP turn (jpeg-webp-refused).
    #[test]
    fn twelve_bursts_hold_what_each_variant_needs() {
        let held = crate::generate::runs_holding_each(bursts(), 12, 4, |burst| {
            // A picture is its format, size and seed; only PNG, JPEG and WebP are cached.
            let pictures = |t: &Turn| -> Vec<(PictureFormat, (u32, u32), u32)> {
                if t.format == PictureFormat::Gif {
                    return Vec::new();
                }
                (t.seed..t.seed + t.count).map(|seed| (t.format, t.size, seed)).collect()
            };
            let cached = burst.turns.iter().any(|t| !pictures(t).is_empty());
            let shared =
                burst.turns.iter().enumerate().any(|(i, a)| {
                    burst.turns[i + 1..].iter().any(|b| pictures(a).iter().any(|p| pictures(b).contains(p)))
                });
            vec![
                shared,
                cached && burst.damage.contains(&Damage::Cut),
                cached && burst.damage.contains(&Damage::Delete),
                burst.turns.iter().any(|t| matches!(t.format, PictureFormat::Jpeg | PictureFormat::Webp)),
            ]
        });
        assert!(held.iter().all(|&n| n >= 999), "runs of 1,000 holding each want: {held:?}");
    }
}

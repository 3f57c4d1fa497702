//! Generated cases (`gen.*`): requests built by proptest strategies from the whole input space a
//! clause allows, each checked against a model of that clause written here (never reference-server
//! code). A run takes `--gen-budget` generated requests per generated case from `--seed` (printed in
//! every verdict, so a failure can be replayed exactly); a failure is shrunk to a smallest request
//! that still fails and reported with the model's expectation and the server's answer.

pub mod body_room;
pub mod concurrency;
pub mod config;
pub mod config_readback;
pub mod covering;
pub mod cut_characters;
pub mod events;
pub mod framing;
pub mod keys;
pub mod lifting;
pub mod page;
pub mod pass_text;
pub mod picture_route;
pub mod requests;
pub mod results;
pub mod server_sources;
pub mod status;
pub mod stdio_entry;
pub mod timeouts;
pub mod tool_listing;

use std::sync::OnceLock;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use crate::case::{CheckError, CheckResult};

/// The chat route every generated request is posted to.
const CHAT: &str = "/v1/chat/completions";

/// Generated requests per generated case when `--gen-budget` is not given.
pub const DEFAULT_BUDGET: u32 = 48;
/// Shrinking steps at most, after a failure.
const SHRINK_STEPS: u32 = 300;
/// The line a failure's `actual` puts before the shrunk request (reports show what follows apart).
pub const SHRUNK_HEADING: &str = "smallest failing request (shrunk):";

/// The seed and budget of this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// The seed every generated case starts from.
    pub seed: u64,
    /// Generated requests per generated case.
    pub budget: u32,
    /// Whether a failure is shrunk to a smallest failing value (`MEDIACHECK_GEN_SHRINK=0` turns it off:
    /// the verdict is the same, the report shows the value as drawn; the broken-variants test, which
    /// needs only the verdict, runs so).
    pub shrink: bool,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets this process's seed and budget (once; later calls change nothing).
pub fn configure(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// This run's settings: as configured, else `MEDIACHECK_GEN_SEED`/`MEDIACHECK_GEN_BUDGET`/
/// `MEDIACHECK_GEN_SHRINK`, else a seed from the clock, the default budget and shrinking on.
pub fn settings() -> Settings {
    *SETTINGS.get_or_init(|| {
        let budget = std::env::var("MEDIACHECK_GEN_BUDGET").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_BUDGET);
        Settings { seed: default_seed(), budget, shrink: default_shrink() }
    })
}

/// Whether failures are shrunk: unless `MEDIACHECK_GEN_SHRINK` is `0`.
pub fn default_shrink() -> bool {
    std::env::var("MEDIACHECK_GEN_SHRINK").map_or(true, |v| v != "0")
}

/// `MEDIACHECK_GEN_SEED` when set, else a seed from the clock.
pub fn default_seed() -> u64 {
    std::env::var("MEDIACHECK_GEN_SEED").ok().and_then(|v| parse_seed(&v)).unwrap_or_else(clock_seed)
}

/// A seed as printed (`0x…` hexadecimal) or in decimal.
pub fn parse_seed(text: &str) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn clock_seed() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    now.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
}

/// Runs `check` on `budget` values of `strategy` from the run's seed (mixed with `salt`, so two
/// generated cases draw different values). A value `check` refuses is shrunk, and the case fails with
/// the smallest refused value `describe` writes, what `check` said of it, and the seed to replay.
pub async fn property<S, F, Fut>(salt: &str, strategy: S, describe: fn(&S::Value) -> String, check: F) -> CheckResult
where
    S: Strategy + Send + 'static,
    S::Value: Clone + Send + 'static,
    F: Fn(S::Value) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    property_sharing(salt, 1, strategy, describe, check).await
}

/// [`property`] with `1/share` of the budget (at least 1): for checks that each start a server.
pub async fn property_sharing<S, F, Fut>(
    salt: &str,
    share: u32,
    strategy: S,
    describe: fn(&S::Value) -> String,
    check: F,
) -> CheckResult
where
    S: Strategy + Send + 'static,
    S::Value: Clone + Send + 'static,
    F: Fn(S::Value) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let Settings { seed, budget: run_budget, shrink } = settings();
    let budget = (run_budget / share.max(1)).max(1);
    let handle = tokio::runtime::Handle::current();
    let key = key_of(seed, salt);
    // A case that times out drops this future, but the draws run on a blocking thread of their own: the
    // flag stops them at the next value, so none is left running into the runtime's shutdown (where
    // its timers would panic).
    let abandoned = Abandoned::default();
    let stop = std::sync::Arc::clone(&abandoned.0);
    let outcome = tokio::task::spawn_blocking(move || {
        let config = Config {
            cases: budget,
            max_shrink_iters: if shrink { SHRINK_STEPS } else { 0 },
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        let result = runner.run(&strategy, |value| {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(TestCaseError::fail("the case was abandoned (it timed out)"));
            }
            handle.block_on(check(value)).map_err(TestCaseError::fail)
        });
        result.map_err(|error| match error {
            TestError::Fail(why, smallest) => (why.to_string(), Some(describe(&smallest))),
            TestError::Abort(why) => (why.to_string(), None),
        })
    })
    .await
    .map_err(|e| crate::check::broken(format!("the generator stopped: {e}")))?;
    match outcome {
        Ok(()) => Ok(()),
        Err((why, smallest)) => Err(CheckError::Fail {
            expected: format!(
                "{budget} generated requests as the model says (seed {seed:#x}; replay: --seed {seed:#x} --gen-budget {run_budget})"
            ),
            actual: match smallest {
                Some(smallest) => format!("{why}\n{SHRUNK_HEADING}\n{smallest}"),
                None => why,
            },
        }),
    }
}

/// Coverage by construction, then chance: `check` runs first on each of `rows` (built by the case from
/// [`covering::pairwise`], so every pair of its axes' values is met on every run, whatever the seed or
/// budget), `at_once` of them at a time (for checks that mostly wait on a clock), then on `1/share` of
/// the budget drawn from `strategy` as [`property_sharing`] does. A row `check` refuses fails the case
/// as drawn (a covering row is already small), naming its place.
pub async fn covering_first<S, F, Fut>(
    salt: &str,
    share: u32,
    (rows, at_once): (Vec<S::Value>, usize),
    strategy: S,
    describe: fn(&S::Value) -> String,
    check: F,
) -> CheckResult
where
    S: Strategy + Send + 'static,
    S::Value: Clone + Send + 'static,
    F: Fn(S::Value) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    use futures::StreamExt;
    let count = rows.len();
    let verdicts: Vec<_> =
        futures::stream::iter(rows.iter().cloned().map(&check)).buffered(at_once.max(1)).collect().await;
    if let Some((at, why)) = verdicts.into_iter().enumerate().find_map(|(at, v)| v.err().map(|why| (at, why))) {
        return Err(CheckError::Fail {
            expected: format!("each of the {count} covering rows as the model says (they are the same on every run)"),
            actual: format!("{why}\n{SHRUNK_HEADING}\ncovering row {} of {count}: {}", at + 1, describe(&rows[at])),
        });
    }
    property_sharing(salt, share, strategy, describe, check).await
}

/// Set when dropped: the future of a generated case was abandoned.
#[derive(Default)]
struct Abandoned(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The generator key of `seed` mixed with `salt` (two generated cases draw different values).
fn key_of(seed: u64, salt: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    for (at, byte) in salt.bytes().enumerate() {
        key[8 + at % 24] ^= byte;
    }
    key
}

/// A runner drawing from the run's seed mixed with `salt`, for a generated case that draws and
/// shrinks its values itself (`gen.page-turns-model`: many values in one browser visit).
pub fn runner(salt: &str) -> TestRunner {
    let config = Config { failure_persistence: None, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key_of(settings().seed, salt)))
}

/// Of 1,000 runs of `n` values of `strategy` (seeds 0 to 999), how many hold a value `wanted` says
/// yes to: what the broken-variants test relies on when a generated case names a variant.
#[cfg(test)]
pub(crate) fn runs_holding<S: Strategy>(strategy: S, n: usize, wanted: impl Fn(&S::Value) -> bool) -> usize {
    runs_holding_each(strategy, n, 1, |value| vec![wanted(value)])[0]
}

/// [`runs_holding`] for `kinds` wants at once (`wanted` says which a value holds), each value made
/// and judged once: per want, the runs of 1,000 that hold it.
#[cfg(test)]
pub(crate) fn runs_holding_each<S: Strategy>(
    strategy: S,
    n: usize,
    kinds: usize,
    wanted: impl Fn(&S::Value) -> Vec<bool>,
) -> Vec<usize> {
    use proptest::strategy::ValueTree;
    let mut held = vec![0; kinds];
    for seed in 0..1000u64 {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        let mut seen = vec![false; kinds];
        for _ in 0..n {
            let Ok(tree) = strategy.new_tree(&mut runner) else { continue };
            for (seen, holds) in seen.iter_mut().zip(wanted(&tree.current())) {
                *seen |= holds;
            }
            if seen.iter().all(|s| *s) {
                break;
            }
        }
        for (held, seen) in held.iter_mut().zip(seen) {
            *held += usize::from(seen);
        }
    }
    held
}

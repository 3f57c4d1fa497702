//! The `mediacheck load` command line (the binary's, not the library's): one run, one segment of a run
//! started on many machines (`--segment`, `--segments` with `JOB_COMPLETION_INDEX`, `--start-at`,
//! `--out`), and `load merge DIR…`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use harness::load::segment::{Segment, Start, parse_rfc3339};
use harness::load::{LoadOptions, LoadScenario, Pace, merge, setup, worker};
use serde_json::json;

use crate::exit;

/// `mediacheck load`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct LoadArgs {
    #[command(subcommand)]
    action: Option<LoadAction>,
    /// The traffic.
    #[arg(long, value_enum, default_value = "mixed")]
    scenario: LoadScenario,
    /// Closed loop: this many requests in flight (the whole run's, when split into segments), each
    /// sent when the last one finished.
    #[arg(long, conflicts_with = "rate")]
    concurrency: Option<usize>,
    /// Open loop: this many requests per second (the whole run's), latency counted from the intended
    /// send time.
    #[arg(long)]
    rate: Option<f64>,
    /// Open loop: the connections the requests share (the whole run's); a request that waits for one
    /// is late, and its latency says so.
    #[arg(long, requires = "rate", default_value_t = harness::load::options::DEFAULT_OPEN_CONNECTIONS)]
    connections: usize,
    /// How long to send requests (e.g. 30s, 2m; at most 1 hour).
    #[arg(long, default_value = "10s", value_parser = harness::load::options::parse_duration)]
    duration: Duration,
    /// Stop after this many requests (the whole run's; 0: only the duration limits).
    #[arg(long, default_value_t = 0)]
    max_requests: u64,
    /// Load an already running server at this URL (media-get only; loopback unless --allow-remote).
    #[arg(long)]
    url: Option<String>,
    /// With --url: the server's API key.
    #[arg(long)]
    api_key: Option<String>,
    /// With --url: the cached pictures to fetch (names like <sha256>.png); repeatable.
    #[arg(long = "media")]
    media: Vec<String>,
    /// Allow --url to name a host that is not loopback.
    #[arg(long)]
    allow_remote: bool,
    /// Write the JSON report here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Make segment I of N of the run (e.g. 2/4): a disjoint 1/N of its requests and workers.
    #[arg(long, conflicts_with = "segments")]
    segment: Option<String>,
    /// The run has N segments and this is segment JOB_COMPLETION_INDEX + 1 (a Kubernetes Indexed Job).
    #[arg(long)]
    segments: Option<u32>,
    /// Start at this wall-clock instant (RFC 3339, e.g. 2026-12-01T10:00:00Z), as every segment does.
    #[arg(long, conflicts_with = "start_in")]
    start_at: Option<String>,
    /// Start this long after this process started (e.g. 30s).
    #[arg(long, value_parser = harness::load::options::parse_duration)]
    start_in: Option<Duration>,
    /// The run's id (default: derived from the scenario, the options and the start, so segments
    /// started with the same command line share it).
    #[arg(long)]
    run_id: Option<String>,
    /// Write this segment's interval logs and ledger into this folder (for `load merge`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep at most this many MiB of proven picture copies to compare bodies with (past it, and at
    /// 0, every body is hashed with SHA-256).
    #[arg(long, default_value_t = harness::load::integrity::DEFAULT_PROVEN_CAP >> 20)]
    proven_cap_mib: u64,
}

#[derive(Debug, clap::Subcommand)]
enum LoadAction {
    /// Merge the outputs of a run's segments into one report (exit 1 when a segment is missing, a
    /// picture was lost or a request failed; 2 when the outputs cannot be merged).
    Merge {
        /// Folders holding segment-I-of-N.json ledgers and their logs (or folders of such folders).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Write the merged JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
}

fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("mediacheck: {message}");
    ExitCode::from(exit::USAGE)
}

/// Runs `mediacheck load …`.
pub fn main(args: LoadArgs) -> ExitCode {
    if let Some(LoadAction::Merge { dirs, json }) = args.action {
        return merge_command(&dirs, json);
    }
    let pace = match args.rate {
        Some(rate) if rate > 0.0 && rate.is_finite() => {
            Pace::Open { rate, connections: args.connections.clamp(1, 10_000) }
        }
        Some(_) => return usage("--rate must be a number of requests per second above 0"),
        None => Pace::Closed { concurrency: args.concurrency.unwrap_or(8).clamp(1, 10_000) },
    };
    let segment = match (&args.segment, args.segments) {
        (Some(text), _) => Segment::parse(text),
        (None, Some(count)) => Segment::from_job_index(std::env::var("JOB_COMPLETION_INDEX").ok().as_deref(), count),
        (None, None) => Ok(Segment::WHOLE),
    };
    let segment = match segment {
        Ok(segment) => segment,
        Err(error) => return usage(error),
    };
    let now = SystemTime::now();
    let start = match (&args.start_at, args.start_in) {
        (Some(text), _) => match parse_rfc3339(text) {
            Ok(at) => Start::At { at, text: text.clone() },
            Err(error) => return usage(error),
        },
        (None, Some(delay)) => Start::In(delay),
        (None, None) => Start::Now,
    };
    let start_at = match &start {
        Start::Now => None,
        Start::At { at, .. } => Some(*at),
        Start::In(delay) => Some(now + *delay),
    };
    let split = args.segment.is_some() || args.segments.is_some();
    if split && args.out.is_none() {
        return usage("--segment and --segments need --out DIR (where the segment's logs and ledger go)");
    }
    if let Some(id) = &args.run_id
        && !worker::valid_run_id(id)
    {
        return usage(format!("--run-id '{id}': 1 to 64 characters of A-Z a-z 0-9 . _ -"));
    }
    let options = LoadOptions {
        progress: true,
        segment,
        start_at,
        intervals: args.out.is_some(),
        proven_cap: args.proven_cap_mib.saturating_mul(1 << 20),
        ..LoadOptions::whole(args.scenario, pace, args.duration, args.max_requests)
    };
    if let Err(error) = options.check(now) {
        return usage(error);
    }
    let target_identity = match &args.url {
        Some(url) => json!({"url": url, "media": args.media}),
        None => json!("embedded"),
    };
    let identity = worker::identity(&options, &start, target_identity);
    let run_id = args.run_id.clone().unwrap_or_else(|| worker::derive_run_id(&identity));
    if let Some(out) = &args.out
        && let Err(error) = std::fs::create_dir_all(out)
    {
        return usage(format!("--out {}: {error}", out.display()));
    }
    let runtime = match crate::runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        let target = match &args.url {
            Some(base) => setup::url(base, args.api_key.clone(), args.media.clone(), args.allow_remote),
            None => {
                eprintln!("starting the embedded reference server and caching the pictures to fetch");
                setup::embedded_for(segment).await
            }
        };
        let target = match target {
            Ok(target) => target,
            Err(error) => return usage(error),
        };
        if let Some(at) = start_at
            && let Ok(ahead) = at.duration_since(SystemTime::now())
        {
            eprintln!("segment {segment} of run {run_id}: starting in {:.1} s", ahead.as_secs_f64());
        }
        let report = harness::load::run(&options, &target).await;
        target.stop().await;
        let report = match report {
            Ok(report) => report,
            Err(error) => return usage(error),
        };
        if !report.timing.late.is_zero() {
            eprintln!(
                "segment {segment} of run {run_id}: started {:.3} s after --start-at",
                report.timing.late.as_secs_f64()
            );
        }
        print!("{}", report.text());
        if let Some(path) = &args.json
            && let Err(error) = std::fs::write(path, report.json().to_string())
        {
            return usage(format!("failed to write {}: {error}", path.display()));
        }
        if let Some(out) = &args.out {
            match worker::write(out, &run_id, &identity, &options, &report) {
                Ok(ledger) => {
                    eprintln!("segment {segment} of run {run_id}: ledger and interval logs in {}", ledger.display())
                }
                Err(error) => return usage(format!("failed to write into {}: {error}", out.display())),
            }
        }
        ExitCode::from(if report.lost == 0 && report.errors == 0 && report.ok > 0 {
            exit::PASSED
        } else {
            exit::FAILED
        })
    })
}

fn merge_command(dirs: &[PathBuf], json: Option<PathBuf>) -> ExitCode {
    let merged = match merge::merge(dirs) {
        Ok(merged) => merged,
        Err(error) => return usage(error),
    };
    print!("{}", merged.report.text());
    if let Some(path) = json
        && let Err(error) = std::fs::write(&path, merged.report.json().to_string())
    {
        return usage(format!("failed to write {}: {error}", path.display()));
    }
    ExitCode::from(if merged.passed() { exit::PASSED } else { exit::FAILED })
}

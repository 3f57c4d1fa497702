//! `mediacheck run | list | serve-reference` — see README.md.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use harness::case::Level;
use harness::runner::{self, Outcome};
use harness::target::Target;
use harness::{baseline, cases, report};

/// Exit codes.
mod exit {
    /// Every MUST passed (or failed as the baseline expects).
    pub const PASSED: u8 = 0;
    /// A MUST failed, or a baseline entry is stale.
    pub const FAILED: u8 = 1;
    /// The command line or a file could not be used.
    pub const USAGE: u8 = 2;
}

/// Conformance checks for MCP image transport.
#[derive(Debug, Parser)]
#[command(name = "mediacheck", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the cases against a server (default: the embedded reference server).
    Run {
        /// Check an already running server at this URL.
        #[arg(long, conflicts_with = "spawn")]
        url: Option<String>,
        /// With --url: the server's API key.
        #[arg(long)]
        api_key: Option<String>,
        /// Start the server under test from this command template ({config}, {port}, {scripts}).
        #[arg(long)]
        spawn: Option<String>,
        /// Only cases whose id matches this glob (`*` matches anything).
        #[arg(long)]
        only: Option<String>,
        /// Expected failures, one case id per line; a listed case that passes fails the run.
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Write the JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write a JUnit XML report here.
        #[arg(long)]
        junit: Option<PathBuf>,
    },
    /// List the cases without running them.
    List {
        /// Also show which broken server variants each case is proven to fail against.
        #[arg(long)]
        coverage: bool,
    },
    /// Run the reference server as a process (what the configuration cases start).
    #[command(hide = true, trailing_var_arg = true)]
    ServeReference {
        /// The reference server's own arguments.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::List { coverage } => {
            for case in cases::all() {
                let level = if case.level == Level::Must { "MUST" } else { "SHOULD" };
                println!("{:<6} {:<6} {:<48} {}", case.clause, level, case.id, case.description);
                if coverage {
                    println!("{:<14}fails against: {}", "", case.broken_by.join(", "));
                }
            }
            ExitCode::from(exit::PASSED)
        }
        Command::ServeReference { args } => {
            let argv = std::iter::once("reference-server".to_string()).chain(args);
            reference_server::cli::run(argv, reference_server::faults::Faults::none())
        }
        Command::Run { url, api_key, spawn, only, baseline, json, junit } => {
            let target = match (url, spawn) {
                (Some(base), None) => Target::Url { base, api_key },
                (None, Some(template)) => Target::Spawn { template },
                _ => Target::Embedded { launcher: std::env::current_exe().ok() },
            };
            run(target, only, baseline, json, junit)
        }
    }
}

fn run(
    target: Target,
    only: Option<String>,
    baseline_path: Option<PathBuf>,
    json: Option<PathBuf>,
    junit: Option<PathBuf>,
) -> ExitCode {
    let selected: Vec<_> = cases::all().into_iter().filter(|c| only.as_deref().is_none_or(|g| glob(g, c.id))).collect();
    if selected.is_empty() {
        eprintln!("mediacheck: no case matches --only {}", only.unwrap_or_default());
        return ExitCode::from(exit::USAGE);
    }
    let expected = match baseline_path.as_deref().map(baseline::read).transpose() {
        Ok(expected) => expected.unwrap_or_default(),
        Err(error) => {
            eprintln!("mediacheck: --baseline {error}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mediacheck: failed to start the runtime: {error}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let total = selected.len();
    eprintln!("running {total} cases against the {}", target.describe());
    let mut done = 0;
    let verdicts = runtime.block_on(runner::run(&selected, &target, |verdict| {
        done += 1;
        eprintln!("[{done:>3}/{total}] {}", report::progress_line(verdict));
    }));
    println!("{}", report::terminal(&target.describe(), &verdicts));
    let comparison = baseline::compare(&verdicts, &expected);
    if baseline_path.is_some() {
        println!("{}", report::baseline_summary(&comparison));
    }
    for (path, text) in
        [(json, report::json(&target.describe(), &verdicts).to_string()), (junit, report::junit(&verdicts))]
    {
        if let Some(path) = path
            && let Err(error) = std::fs::write(&path, text)
        {
            eprintln!("mediacheck: failed to write {}: {error}", path.display());
            return ExitCode::from(exit::USAGE);
        }
    }
    let failed = if baseline_path.is_some() {
        !comparison.passed()
    } else {
        verdicts.iter().any(|v| v.outcome == Outcome::Fail)
    };
    ExitCode::from(if failed { exit::FAILED } else { exit::PASSED })
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            text.starts_with(head)
                && (head.len()..=text.len()).any(|i| text.is_char_boundary(i) && glob(tail, &text[i..]))
        }
    }
}

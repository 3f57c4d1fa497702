//! `mediacheck run | list` — see README.md.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use harness::case::Level;
use harness::runner::{self, Outcome};
use harness::target::Target;
use harness::{cases, report};

/// Exit codes.
mod exit {
    /// Every MUST passed.
    pub const PASSED: u8 = 0;
    /// At least one MUST failed.
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
        /// Write the JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write a JUnit XML report here.
        #[arg(long)]
        junit: Option<PathBuf>,
    },
    /// List the cases without running them.
    List,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::List => {
            for case in cases::all() {
                let level = if case.level == Level::Must { "MUST" } else { "SHOULD" };
                println!("{:<6} {:<6} {:<52} {}", case.clause, level, case.id, case.description);
            }
            ExitCode::from(exit::PASSED)
        }
        Command::Run { url, api_key, spawn, only, json, junit } => {
            let target = match (url, spawn) {
                (Some(base), None) => Target::Url { base, api_key },
                (None, Some(template)) => Target::Spawn { template },
                _ => Target::Embedded,
            };
            let selected: Vec<_> =
                cases::all().into_iter().filter(|c| only.as_deref().is_none_or(|g| glob(g, c.id))).collect();
            if selected.is_empty() {
                eprintln!("mediacheck: no case matches --only {}", only.unwrap_or_default());
                return ExitCode::from(exit::USAGE);
            }
            let runtime = match tokio::runtime::Runtime::new() {
                Ok(runtime) => runtime,
                Err(error) => {
                    eprintln!("mediacheck: failed to start the runtime: {error}");
                    return ExitCode::from(exit::USAGE);
                }
            };
            eprintln!("running {} cases against the {}", selected.len(), target.describe());
            let verdicts =
                runtime.block_on(runner::run(&selected, &target, |v| eprintln!("{}", report::progress_line(v))));
            println!("{}", report::terminal(&target.describe(), &verdicts));
            if let Some(path) = json
                && let Err(error) = std::fs::write(&path, report::json(&target.describe(), &verdicts).to_string())
            {
                eprintln!("mediacheck: failed to write {}: {error}", path.display());
                return ExitCode::from(exit::USAGE);
            }
            if let Some(path) = junit
                && let Err(error) = std::fs::write(&path, report::junit(&verdicts))
            {
                eprintln!("mediacheck: failed to write {}: {error}", path.display());
                return ExitCode::from(exit::USAGE);
            }
            let failed = verdicts.iter().any(|v| v.outcome == Outcome::Fail);
            ExitCode::from(if failed { exit::FAILED } else { exit::PASSED })
        }
    }
}

/// `*` matches any run of characters; everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            text.starts_with(head)
                && (0..=text.len() - head.len())
                    .any(|i| text.is_char_boundary(head.len() + i) && glob(tail, &text[head.len() + i..]))
        }
    }
}

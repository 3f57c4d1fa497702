//! `mediacheck run | list | serve-reference` — see README.md.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use harness::case::Level;
use harness::runner::{self, Outcome};
use harness::target::Target;
use harness::{baseline, cases, report};

mod load_command;

/// Exit codes.
mod exit {
    /// Every MUST passed (or failed as the baseline expects).
    pub const PASSED: u8 = harness::report::judgement::EXIT_PASSED;
    /// A MUST failed, or a baseline entry is stale (or, with --strict, a case was not run).
    pub const FAILED: u8 = harness::report::judgement::EXIT_FAILED;
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
        /// With --url: the server's API key (or from MEDIACHECK_API_KEY; empty is none; reports never show it).
        #[arg(long, env = harness::report::replay::API_KEY_VARIABLE, hide_env_values = true)]
        api_key: Option<String>,
        /// Start the server under test from this command template ({config}, {port}, {scripts}).
        #[arg(long)]
        spawn: Option<String>,
        /// Only cases whose id matches this glob (`*` matches anything).
        #[arg(long)]
        only: Option<String>,
        /// Leave out the cases whose id matches this glob (e.g. `page.*`); repeatable.
        #[arg(long)]
        skip: Vec<String>,
        /// Expected failures, one case id per line; a listed case that passes fails the run.
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Write the JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write a JUnit XML report here.
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Write a Markdown summary here (counts by SPEC section, each failure with its replay
        /// command; short enough for a CI job's page, e.g. $GITHUB_STEP_SUMMARY).
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Write the HTML report here: one self-contained file, every case by SPEC section, filterable
        /// by outcome, with the page cases' screenshots.
        #[arg(long)]
        html: Option<PathBuf>,
        /// Cases that were not run fail the run (exit 1): only a full run is a conformance claim.
        #[arg(long)]
        strict: bool,
        /// Stop at the first failing MUST case; the cases after it are reported as not run.
        #[arg(long)]
        fail_fast: bool,
        /// Start no browser: the page cases are reported as not run, with this as the reason.
        #[arg(long)]
        no_browser: bool,
        /// Scenarios run at once, each with its own server (spawn and embedded targets; against
        /// --url, and with --fail-fast, one at a time). The report keeps the cases' order.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=32))]
        jobs: u16,
        /// The generated cases' seed (`0x…` or decimal; default: from the clock, printed in the
        /// report). A failure names the seed that replays it.
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Generated requests per generated case (`gen.*`).
        #[arg(long, default_value_t = harness::generate::DEFAULT_BUDGET, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        gen_budget: u32,
        /// Where the page cases' screenshots go (`<case>/<width>-<step>.png`); default: a
        /// `mediacheck-screenshots` folder beside the JSON, JUnit, HTML or Markdown report, or in the
        /// current folder.
        #[arg(long)]
        screenshots: Option<PathBuf>,
    },
    /// Put tool-picture traffic on a server and measure it (default: the embedded reference server);
    /// `load merge DIR…` merges the outputs of a run's segments.
    Load(load_command::LoadArgs),
    /// Send hostile traffic to fresh servers while an honest client keeps using them; peak RSS,
    /// `/health` p99 and `survived` per attack (default: the reference server, as a process).
    Attack {
        /// Start the server under attack from this command template ({config}, {port}).
        #[arg(long)]
        spawn: Option<String>,
        /// Only attacks whose id matches this glob (`*` matches anything).
        #[arg(long)]
        only: Option<String>,
        /// How long each attack lasts (e.g. 5s, 1m).
        #[arg(long, default_value = "10s", value_parser = harness::load::options::parse_duration)]
        duration: std::time::Duration,
        /// Also feed hostile pictures to this vision-mcp binary's tool.
        #[arg(long)]
        vision_mcp: Option<PathBuf>,
        /// Write the JSON report here.
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Play a hostile stdio MCP server (what `attack` configures the server under attack with).
    #[command(hide = true)]
    HostileMcp {
        /// How to misbehave (or `linger`: be the grandchild that sleeps).
        kind: String,
        /// A word the attack run finds this process (and its grandchild) by.
        #[arg(default_value = "")]
        marker: String,
    },
    /// Serve the fixture MCP server on stdin/stdout (what cases configure as a stdio MCP server).
    FixtureMcp {
        /// Tools per tools/list page (0: all on one page).
        #[arg(long, default_value_t = 0)]
        page: usize,
        /// Append one JSON line per start, call and cancellation to this file.
        #[arg(long)]
        log: Option<PathBuf>,
        /// Exit with code 3, saying why on stderr (and logging `{"crashed": pid}`), while this file exists.
        #[arg(long)]
        crash_if_exists: Option<PathBuf>,
        /// A word a case finds this process by (it only appears on the command line).
        #[arg(long, default_value = "")]
        marker: String,
        /// List these tools (a JSON list of MCP tools) instead of the fixture's own.
        #[arg(long)]
        listing: Option<PathBuf>,
    },
    /// Serve an MCP server whose tool names and results carry hostile text (SPEC 13.22) on stdin/stdout.
    #[command(hide = true)]
    HostileTextMcp,
    /// List the cases without running them.
    List {
        /// Also show which broken server variants each case is proven to fail against, every SPEC
        /// clause without a case (with the reason it cannot be checked from outside, when there is
        /// one), and how many of SPEC's requirements have a check a broken variant proves (each one
        /// without, with why).
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
            let all = cases::all();
            for case in &all {
                let level = if case.level == Level::Must { "MUST" } else { "SHOULD" };
                println!("{:<6} {:<6} {:<48} {}", case.clause, level, case.id, case.description);
                if coverage {
                    println!("{:<14}fails against: {}", "", case.broken_by.join(", "));
                }
            }
            if coverage {
                use harness::coverage::{Coverage, NOT_CHECKABLE, SPEC, clauses};
                print!("{}", Coverage::of(&all, SPEC, NOT_CHECKABLE).summary(clauses(SPEC).len()));
                print!("{}", harness::requirements::Standing::of(&all, SPEC, &harness::requirements::TABLE).summary());
            }
            ExitCode::from(exit::PASSED)
        }
        Command::FixtureMcp { page, log, crash_if_exists, marker: _, listing } => {
            let log = log.map(fixtures::mcp_server::FixtureLog::to_file).unwrap_or_default();
            if crash_if_exists.as_ref().is_some_and(|p| p.exists()) {
                log.push(serde_json::json!({"crashed": std::process::id()}));
                eprintln!("cannot start: the crash file is there");
                return ExitCode::from(3);
            }
            let listing = match listing.map(|path| std::fs::read_to_string(&path).map(|text| (path, text))) {
                None => None,
                Some(Ok((path, text))) => match serde_json::from_str(&text) {
                    Ok(tools) => Some(std::sync::Arc::new(tools)),
                    Err(error) => {
                        eprintln!("mediacheck fixture-mcp: --listing {}: {error}", path.display());
                        return ExitCode::from(exit::USAGE);
                    }
                },
                Some(Err(error)) => {
                    eprintln!("mediacheck fixture-mcp: --listing: {error}");
                    return ExitCode::from(exit::USAGE);
                }
            };
            let options = fixtures::mcp_server::FixtureOptions {
                page_size: page,
                log,
                exits_on_die: true,
                listing,
                ..Default::default()
            };
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return ExitCode::from(exit::USAGE);
            };
            match runtime.block_on(fixtures::mcp_server::serve_stdio(options)) {
                Ok(()) => ExitCode::from(exit::PASSED),
                Err(error) => {
                    eprintln!("mediacheck fixture-mcp: {error}");
                    ExitCode::from(exit::FAILED)
                }
            }
        }
        Command::HostileTextMcp => {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return ExitCode::from(exit::USAGE);
            };
            match runtime.block_on(fixtures::hostile_text::serve_stdio()) {
                Ok(()) => ExitCode::from(exit::PASSED),
                Err(error) => {
                    eprintln!("mediacheck hostile-text-mcp: {error}");
                    ExitCode::from(exit::FAILED)
                }
            }
        }
        Command::HostileMcp { kind, marker } => {
            use clap::ValueEnum;
            use fixtures::hostile_mcp::{Hostility, linger, serve};
            match (kind.as_str(), Hostility::from_str(&kind, false)) {
                ("linger", _) => linger(),
                (_, Ok(hostility)) => serve(hostility, &marker),
                (_, Err(error)) => {
                    eprintln!("mediacheck hostile-mcp: {error}");
                    return ExitCode::from(exit::USAGE);
                }
            }
            ExitCode::from(exit::PASSED)
        }
        Command::Attack { spawn, only, duration, vision_mcp, json } => {
            let Ok(launcher) = std::env::current_exe() else {
                eprintln!("mediacheck: cannot find its own binary to start servers with");
                return ExitCode::from(exit::USAGE);
            };
            if spawn.is_none() && !harness::embedded::AVAILABLE {
                eprintln!("mediacheck: {}", harness::embedded::MISSING);
                return ExitCode::from(exit::USAGE);
            }
            let template = spawn.unwrap_or_else(|| {
                format!("{} serve-reference --config {{config}} --port {{port}}", launcher.display())
            });
            let options = harness::attack::AttackOptions { template, launcher, duration, only, vision_mcp };
            attack(&options, json)
        }
        Command::ServeReference { args } => harness::embedded::serve(args),
        Command::Load(args) => load_command::main(args),
        Command::Run {
            url,
            api_key,
            spawn,
            only,
            skip,
            baseline,
            json,
            junit,
            markdown,
            html,
            strict,
            fail_fast,
            no_browser,
            jobs,
            seed,
            gen_budget,
            screenshots,
        } => {
            if no_browser {
                harness::browser::driver::turn_off();
            }
            let seed = seed.unwrap_or_else(harness::generate::default_seed);
            harness::generate::configure(harness::generate::Settings {
                seed,
                budget: gen_budget,
                shrink: harness::generate::default_shrink(),
            });
            let target = match (url, spawn) {
                // An empty key (the variable set to nothing) is no key: the cases that need one say so.
                (Some(base), None) => Target::Url { base, api_key: api_key.filter(|key| !key.is_empty()) },
                (None, Some(template)) => Target::Spawn { template },
                _ if !harness::embedded::AVAILABLE => {
                    eprintln!("mediacheck: {}", harness::embedded::MISSING);
                    return ExitCode::from(exit::USAGE);
                }
                _ => Target::Embedded { launcher: std::env::current_exe().ok() },
            };
            let screenshots = screenshots.unwrap_or_else(|| {
                let report = json.as_ref().or(junit.as_ref()).or(html.as_ref()).or(markdown.as_ref());
                let beside = report.and_then(|r| r.parent()).map(PathBuf::from).unwrap_or_default();
                beside.join("mediacheck-screenshots")
            });
            harness::browser::driver::keep_screenshots(screenshots.clone());
            let stop = if fail_fast { runner::Stop::AtFirstFailure } else { runner::Stop::Never };
            let jobs = usize::from(jobs);
            let reports = Reports { json, junit, markdown, html };
            run(target, RunOptions { only, skip, baseline_path: baseline, reports, strict, stop, jobs, screenshots })
        }
    }
}

/// What `run` was asked for besides the target.
struct RunOptions {
    only: Option<String>,
    skip: Vec<String>,
    baseline_path: Option<PathBuf>,
    reports: Reports,
    strict: bool,
    stop: runner::Stop,
    jobs: usize,
    screenshots: PathBuf,
}

/// Where the report files go.
struct Reports {
    json: Option<PathBuf>,
    junit: Option<PathBuf>,
    markdown: Option<PathBuf>,
    html: Option<PathBuf>,
}

fn run(target: Target, options: RunOptions) -> ExitCode {
    let RunOptions { only, skip, baseline_path, reports, strict, stop, jobs, screenshots } = options;
    let selected: Vec<_> = cases::all()
        .into_iter()
        .filter(|c| only.as_deref().is_none_or(|g| harness::glob(g, c.id)))
        .filter(|c| !skip.iter().any(|g| harness::glob(g, c.id)))
        .collect();
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
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let total = selected.len();
    eprintln!(
        "running {total} cases against the {} (generated cases: seed {:#x}, {} requests each)",
        target.describe(),
        harness::generate::settings().seed,
        harness::generate::settings().budget
    );
    if std::env::var_os(harness::browser::driver::WIDTHS_VARIABLE).is_some() {
        match harness::browser::driver::widths() {
            Ok(widths) => eprintln!(
                "page cases at widths {widths:?} only ({}): a quick check, not a conformance claim",
                harness::browser::driver::WIDTHS_VARIABLE
            ),
            Err(error) => eprintln!("mediacheck: {error}: the page cases will not run"),
        }
    }
    if let Ok(cap) = std::env::var(harness::browser::page::WAIT_CAP_VARIABLE) {
        eprintln!(
            "page waits capped at {cap} s ({}): a quick check, not a conformance claim",
            harness::browser::page::WAIT_CAP_VARIABLE
        );
    }
    let started = std::time::SystemTime::now();
    let mut done = 0;
    let verdicts = runtime.block_on(runner::run_at_once(&selected, &target, stop, jobs, |verdict| {
        done += 1;
        eprintln!("[{done:>3}/{total}] {}", report::progress_line(verdict));
    }));
    if screenshots.is_dir() && verdicts.iter().any(|v| v.id.starts_with("page.") && v.outcome != Outcome::NotRun) {
        eprintln!("screenshots of the page cases: {}/", screenshots.display());
    }
    let comparison = baseline::compare(&verdicts, &expected);
    let compared = baseline_path.is_some().then_some(&comparison);
    // The exit code and every report's headline come from this one judgement.
    let judgement = report::judgement::Judgement::of(&verdicts, compared, strict);
    println!("{}", report::terminal_judged(&target.describe(), &verdicts, compared, &judgement));
    let settings = harness::generate::settings();
    let facts = report::replay::RunFacts::new(&target, settings.seed, settings.budget, Some(screenshots))
        .started_at(started)
        .with_strict(strict);
    let Reports { json, junit, markdown, html } = reports;
    let written: [(Option<PathBuf>, &dyn Fn() -> String); 4] = [
        (json, &|| report::json_judged(&target.describe(), &verdicts, &judgement).to_string()),
        (junit, &|| report::junit(&verdicts)),
        (markdown, &|| report::markdown::markdown(&facts, &verdicts, compared)),
        (html, &|| report::html::html(&facts, &verdicts, compared)),
    ];
    for (path, text) in written {
        if let Some(path) = path
            && let Err(error) = std::fs::write(&path, text())
        {
            eprintln!("mediacheck: failed to write {}: {error}", path.display());
            return ExitCode::from(exit::USAGE);
        }
    }
    ExitCode::from(judgement.exit_code())
}

fn attack(options: &harness::attack::AttackOptions, json: Option<PathBuf>) -> ExitCode {
    use harness::attack::{self, report};
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        eprintln!(
            "each attack: a fresh server, {} s of attack beside an honest client",
            options.duration.as_secs_f64()
        );
        println!("{}", report::header());
        let results = attack::run(options, |result| println!("{}", report::line(result))).await;
        if results.is_empty() && options.vision_mcp.is_none() {
            eprintln!("mediacheck: no attack matches --only {}", options.only.clone().unwrap_or_default());
            return ExitCode::from(exit::USAGE);
        }
        let vision = match &options.vision_mcp {
            Some(binary) => match attack::vision::run(binary).await {
                Ok(vision) => {
                    print!("\n{}", report::vision(&vision));
                    vision
                }
                Err(error) => {
                    eprintln!("mediacheck: vision-mcp: {error}");
                    return ExitCode::from(exit::FAILED);
                }
            },
            None => Vec::new(),
        };
        println!("\n{}", report::summary(&results, &vision));
        if let Some(path) = json
            && let Err(error) = std::fs::write(&path, report::json(&results, &vision).to_string())
        {
            eprintln!("mediacheck: failed to write {}: {error}", path.display());
            return ExitCode::from(exit::USAGE);
        }
        let survived = results.iter().all(|r| r.survived) && vision.iter().all(|v| v.survived);
        ExitCode::from(if survived { exit::PASSED } else { exit::FAILED })
    })
}

/// The Tokio runtime every subcommand runs on, or the exit code that says it could not start.
fn parse_seed(text: &str) -> Result<u64, String> {
    harness::generate::parse_seed(text).ok_or_else(|| format!("{text:?} is not a seed (0x… hexadecimal or decimal)"))
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Runtime::new().map_err(|error| {
        eprintln!("mediacheck: failed to start the runtime: {error}");
        ExitCode::from(exit::USAGE)
    })
}

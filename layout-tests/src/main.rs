//! `layout-tests [--url URL [--api-key KEY] | --spawn TEMPLATE] [--out DIR]` — see the crate's docs.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use harness::target::Target;

/// The chat page's layout and accessibility at every width, with screenshots and contact sheets.
#[derive(Debug, Parser)]
#[command(name = "layout-tests", version)]
struct Cli {
    /// Check the page of an already running server at this URL.
    #[arg(long, conflicts_with = "spawn")]
    url: Option<String>,
    /// With --url: the server's API key.
    #[arg(long)]
    api_key: Option<String>,
    /// Start the server under test from this command template ({config}, {port}, {scripts}).
    #[arg(long)]
    spawn: Option<String>,
    /// Where the screenshots, contact sheets and reports go.
    #[arg(long, default_value = "layout-report")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (target, name) = match (cli.url, cli.spawn) {
        (Some(base), None) => (Target::Url { base: base.clone(), api_key: cli.api_key }, base),
        (None, Some(template)) => (Target::Spawn { template: template.clone() }, template),
        _ => (Target::Embedded { launcher: None }, "embedded reference server".to_string()),
    };
    let Ok(runtime) = tokio::runtime::Runtime::new() else {
        eprintln!("layout-tests: failed to start the runtime");
        return ExitCode::from(2);
    };
    match runtime.block_on(layout_tests::run(&target, &name, &cli.out)) {
        Ok(run) => {
            print!("{}", harness::report::terminal(&name, &run.verdicts));
            println!("contact sheets and reports: {}", cli.out.display());
            ExitCode::from(if run.passed() { 0 } else { 1 })
        }
        Err(error) => {
            eprintln!("layout-tests: failed to write into {}: {error}", cli.out.display());
            ExitCode::from(2)
        }
    }
}

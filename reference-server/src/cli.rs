//! The command line, shared by the `reference-server` binary and the tools that start the same server
//! as a process (`mediacheck serve-reference`, `fixtures/broken`): `reference-server --config FILE
//! [--host H] [--port P] [--api-key K] [--script TEXT]... [--mcp-config FILE] [--web-dir DIR]`. A bad
//! value is one line naming it and exit code 2; when ready it prints `listening on http://HOST:PORT`
//! (SPEC 1.2, 1.3).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tokio::net::TcpListener;

use crate::config::{Overrides, RunConfig};

/// The reference server for MCP image transport.
#[derive(Debug, Parser)]
#[command(name = "reference-server", version)]
struct Cli {
    /// The run configuration (JSON).
    #[arg(long)]
    config: PathBuf,
    /// The address to bind (default 127.0.0.1, or the configuration's "host").
    #[arg(long)]
    host: Option<String>,
    /// The port (0 picks a free one; default 8095, or the configuration's "port").
    #[arg(long)]
    port: Option<u16>,
    /// The API key clients must send (default: env STRATA_API_KEY, then the configuration's "api_key").
    #[arg(long)]
    api_key: Option<String>,
    /// A mock-engine script, one per engine pass; the last repeats. Replaces the configuration's.
    #[arg(long = "script")]
    scripts: Vec<String>,
    /// A file of MCP servers, {"mcpServers": {...}}, merged after the configuration's.
    #[arg(long)]
    mcp_config: Option<PathBuf>,
    /// Development: read the page's files (index.html, web/*.js, web/app.css) from this folder on every
    /// request instead of the copies compiled in.
    #[arg(long)]
    web_dir: Option<PathBuf>,
}

/// Exit code for a configuration the server cannot use.
const EXIT_BAD_CONFIG: u8 = 2;
/// Exit code when the address cannot be bound or serving fails.
const EXIT_SERVE_FAILED: u8 = 1;

/// `RUST_LOG` (default `info`), with the libraries that would log message bodies capped whatever it
/// asks: rmcp logs every JSON-RPC message (prompts, tool arguments, pictures) at debug, and the HTTP
/// stack logs headers at trace. Logs never carry a prompt, a picture or a key (SPEC 1.12).
fn log_filter() -> tracing_subscriber::EnvFilter {
    let mut filter = tracing_subscriber::EnvFilter::try_from_env("RUST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    for capped in ["rmcp=warn", "hyper=info", "hyper_util=info", "reqwest=info", "h2=info", "rustls=info"] {
        if let Ok(directive) = capped.parse() {
            filter = filter.add_directive(directive);
        }
    }
    filter
}

/// Runs the server as the binary does: parses `args` (the program name first), loads the
/// configuration, serves until a stop signal.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    run_wrapped(args, |app, _| app)
}

/// [`run`], with the router passed through `wrap` before it serves: a program embedding the server
/// puts its own layers in front of every route (the binary wraps nothing).
pub fn run_wrapped<I, T>(args: I, wrap: crate::server::Wrap) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { EXIT_BAD_CONFIG } else { 0 });
        }
    };
    let overrides = Overrides {
        host: cli.host,
        port: cli.port,
        api_key: cli.api_key,
        env_api_key: std::env::var("STRATA_API_KEY").ok(),
        env_allowed_hosts: std::env::var("STRATA_ALLOWED_HOSTS").ok(),
        scripts: cli.scripts,
        mcp_config: cli.mcp_config,
        web_dir: cli.web_dir,
    };
    let loaded = match RunConfig::load(&cli.config, &overrides) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("reference-server: {error}");
            return ExitCode::from(EXIT_BAD_CONFIG);
        }
    };
    for warning in &loaded.warnings {
        eprintln!("reference-server: {warning}");
    }
    // Colour only on a terminal: a log piped to a file or a collector is plain text (SPEC 1.12).
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_env_filter(log_filter())
        .try_init()
        .ok();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("reference-server: failed to start the runtime: {error}");
            return ExitCode::from(EXIT_SERVE_FAILED);
        }
    };
    runtime.block_on(serve_until_stopped(loaded.config, wrap))
}

async fn serve_until_stopped(config: RunConfig, wrap: crate::server::Wrap) -> ExitCode {
    let listener = match TcpListener::bind((config.host.as_str(), config.port)).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("reference-server: failed to listen on {}:{}: {error}", config.host, config.port);
            return ExitCode::from(EXIT_SERVE_FAILED);
        }
    };
    let addr = match listener.local_addr() {
        Ok(addr) => addr,
        Err(error) => {
            eprintln!("reference-server: failed to read the bound address: {error}");
            return ExitCode::from(EXIT_SERVE_FAILED);
        }
    };
    let state = match crate::server::build_state(config) {
        Ok(state) => state,
        Err(error) => {
            eprintln!("reference-server: {error}");
            return ExitCode::from(EXIT_BAD_CONFIG);
        }
    };
    let stop = match stop_signal() {
        Ok(stop) => stop,
        Err(error) => {
            eprintln!("reference-server: failed to install the signal handlers: {error}");
            return ExitCode::from(EXIT_SERVE_FAILED);
        }
    };
    println!("listening on http://{addr}");
    match crate::server::serve_wrapped(listener, state, stop, wrap).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("reference-server: failed while serving: {error}");
            ExitCode::from(EXIT_SERVE_FAILED)
        }
    }
}

/// Installs the SIGINT and SIGTERM handlers now, so that a signal sent the moment the ready line
/// appears is already a clean stop, and returns the future that ends at the first of them.
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        tracing::info!("stopping");
    })
}

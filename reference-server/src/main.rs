//! `reference-server --config FILE [--host H] [--port P] [--api-key K] [--script TEXT]... [--mcp-config FILE]`
//!
//! Reads the configuration (a bad value: one line naming it, exit code 2), binds, prints
//! `listening on http://HOST:PORT`, and serves until ctrl-c or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use reference_server::config::{Overrides, RunConfig};
use tokio::net::TcpListener;

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
}

/// Exit code for a configuration the server cannot use.
const EXIT_BAD_CONFIG: u8 = 2;
/// Exit code when the address cannot be bound or serving fails.
const EXIT_SERVE_FAILED: u8 = 1;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let overrides = Overrides {
        host: cli.host,
        port: cli.port,
        api_key: cli.api_key,
        env_api_key: std::env::var("STRATA_API_KEY").ok(),
        env_allowed_hosts: std::env::var("STRATA_ALLOWED_HOSTS").ok(),
        scripts: cli.scripts,
        mcp_config: cli.mcp_config,
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
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| "info,rmcp=warn".into()),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("reference-server: failed to start the runtime: {error}");
            return ExitCode::from(EXIT_SERVE_FAILED);
        }
    };
    runtime.block_on(run(loaded.config))
}

async fn run(config: RunConfig) -> ExitCode {
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
    let state = match reference_server::server::build_state(config) {
        Ok(state) => state,
        Err(error) => {
            eprintln!("reference-server: {error}");
            return ExitCode::from(EXIT_BAD_CONFIG);
        }
    };
    println!("listening on http://{addr}");
    match reference_server::serve(listener, state, stop_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("reference-server: failed while serving: {error}");
            ExitCode::from(EXIT_SERVE_FAILED)
        }
    }
}

async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!("stopping");
}

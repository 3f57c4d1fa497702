//! `vision-mcp [--http [--host H] [--port P]]` and `vision-mcp check URL …` — see README.md.

use std::net::SocketAddr;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rmcp::ServiceExt;
use tokio::signal::unix::{SignalKind, signal};
use vision_mcp::config::Settings;
use vision_mcp::guard::Guard;
use vision_mcp::openai::OPENAI_BASE;
use vision_mcp::server::{VisionServer, http_app};
use vision_mcp::tool::Analyzer;

/// Exit code for settings the server cannot use.
const EXIT_CONFIG: u8 = 2;
/// Exit code for anything else that stops it.
const EXIT_FAILED: u8 = 1;

/// One tool, analyze_image: a picture from one folder, looked at by the OpenAI Responses API.
#[derive(Debug, Parser)]
#[command(name = "vision-mcp", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Serve Streamable HTTP at /mcp instead of stdio (needs VISION_MCP_TOKEN).
    #[arg(long)]
    http: bool,
    /// With --http: the address to bind (a container binds 0.0.0.0).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// With --http: the port.
    #[arg(long, default_value_t = 8000)]
    port: u16,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Initialize and list the tools at URL (token from VISION_MCP_TOKEN); with --image, one real call.
    Check {
        /// The server's /mcp URL.
        url: String,
        /// A picture in the server's image folder: makes one real, billed call.
        #[arg(long)]
        image: Option<String>,
        /// auto, low or high.
        #[arg(long, default_value = "auto")]
        detail: String,
        /// What to ask about the picture.
        #[arg(long, default_value = "List what is visible in this picture.")]
        prompt: String,
    },
}

/// `RUST_LOG` (default `info`), with the libraries that would log message bodies capped whatever it asks:
/// rmcp logs every JSON-RPC message (prompts) at debug, the HTTP stack headers (the token) at trace.
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(log_filter()).init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("vision-mcp: failed to start the runtime: {error}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    match cli.command {
        Some(Command::Check { url, image, detail, prompt }) => runtime.block_on(check(url, image, detail, prompt)),
        None => runtime.block_on(serve(cli.http, &cli.host, cli.port)),
    }
}

async fn check(url: String, image: Option<String>, detail: String, prompt: String) -> ExitCode {
    let Some(token) = std::env::var("VISION_MCP_TOKEN").ok().filter(|t| !t.trim().is_empty()) else {
        eprintln!("vision-mcp: VISION_MCP_TOKEN: missing or empty: check needs the server's token");
        return ExitCode::from(EXIT_CONFIG);
    };
    let request = vision_mcp::check::CheckRequest { url, token: token.trim().to_string(), image, detail, prompt };
    match vision_mcp::check::run(&request).await {
        Ok(report) => {
            print!("{}", report.text);
            if report.passed {
                ExitCode::SUCCESS
            } else {
                eprintln!("vision-mcp: check: the call to analyze_image was refused (above)");
                ExitCode::from(EXIT_FAILED)
            }
        }
        Err(error) => {
            eprintln!("vision-mcp: check: {error}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

async fn serve(http: bool, host: &str, port: u16) -> ExitCode {
    let settings = match Settings::from_env(|k| std::env::var(k).ok(), http) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("vision-mcp: {error}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    match vision_mcp::config::image_root_access(&settings.image_root) {
        vision_mcp::config::RootAccess::Usable => {}
        vision_mcp::config::RootAccess::NotAFolder => {
            eprintln!(
                "vision-mcp: VISION_IMAGE_ROOT: not a folder (in Docker: VISION_IMAGE_DIR in .env is mounted there)"
            );
            return ExitCode::from(EXIT_CONFIG);
        }
        vision_mcp::config::RootAccess::Denied(user) => {
            // A warning, not a stop: the share's permissions can be fixed on the NAS without a restart.
            tracing::warn!(
                "VISION_IMAGE_ROOT: permission denied: this server ({user}) cannot list or enter the image folder, so \
                 every call will be refused; give it read and traverse (r-x) access to the share, or set \
                 VISION_IMAGE_GID to a group that has them and recreate the container"
            );
        }
    }
    let analyzer = match Analyzer::new(&settings, OPENAI_BASE) {
        Ok(analyzer) => analyzer,
        Err(error) => {
            eprintln!("vision-mcp: {error}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if !analyzer.budget().usable() {
        tracing::warn!("VISION_USAGE_DB cannot be used: every call will be refused until it can");
    }
    if !http {
        let transport = (tokio::io::stdin(), tokio::io::stdout());
        return match VisionServer::new(analyzer).serve(transport).await {
            Ok(service) => {
                let _ = service.waiting().await;
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("vision-mcp: {error}");
                ExitCode::from(EXIT_FAILED)
            }
        };
    }
    let addr: SocketAddr = match format!("{host}:{port}").parse().or_else(|_| format!("[{host}]:{port}").parse()) {
        Ok(addr) => addr,
        Err(_) => {
            eprintln!("vision-mcp: --host: '{host}' is not an IP address");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("vision-mcp: failed to listen on {addr}: {error}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let token = settings.token.clone().unwrap_or_default();
    let stop = tokio_util::sync::CancellationToken::new();
    let app = http_app(analyzer, Guard::new(&token, &settings.allowed_hosts), stop.clone());
    let bound = listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
    // The handlers are installed before the ready line: a SIGTERM sent the moment it appears (or by
    // `docker stop`, where the process is PID 1 and the default action does nothing) is a clean stop.
    let (mut interrupt, mut terminate) = match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(interrupt), Ok(terminate)) => (interrupt, terminate),
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("vision-mcp: failed to install the signal handlers: {error}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    println!("listening on http://{bound}/mcp");
    serve_connections(listener, app, async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        stop.cancel();
    })
    .await;
    ExitCode::SUCCESS
}

/// At most this many connections are served at once; one more is closed as it arrives.
const MAX_CONNECTIONS: usize = 64;
/// A client must send its request headers within this time, or it is dropped (slowloris).
const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Accepts connections until `stopping` completes, then lets the open ones finish. Each request
/// carries its peer address (for the guard's refusal log).
async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    stopping: impl std::future::Future<Output = ()>,
) {
    use axum::extract::ConnectInfo;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt;
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
    tokio::pin!(stopping);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut stopping => break,
        };
        let Ok(slot) = std::sync::Arc::clone(&slots).try_acquire_owned() else {
            drop(tcp);
            continue;
        };
        let app = app.clone().map_request(move |mut request: axum::extract::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            request
        });
        let service = hyper_util::service::TowerToHyperService::new(app);
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            let _ = connection.await;
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

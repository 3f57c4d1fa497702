//! Building the state, binding, serving and stopping (SPEC 1.8, 1.9). The binary and every test go
//! through [`start`], so tests run the same server a user runs.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::{RunConfig, StartupError};
use crate::engine::mock::MockEngine;
use crate::mcp::Hub;
use crate::media::MediaCache;
use crate::routes;
use crate::state::{Activity, AppState};
use crate::vision;

/// Builds the shared state; starts the MCP servers in the background. Needs a Tokio runtime. Fails
/// only for a vision backend this build or machine cannot provide (SPEC 1.10).
pub fn build_state(config: RunConfig) -> Result<Arc<AppState>, StartupError> {
    let vision = config.vision.as_ref().map(vision::backend_for).transpose()?;
    let engine = Arc::new(MockEngine::new(&config.engine));
    let hub = (!config.mcp_servers.is_empty()).then(|| Hub::start(&config.mcp_servers, config.mcp.clone()));
    let body_room = tokio::sync::Semaphore::new(config.max_body_bytes.div_ceil(1024).max(1));
    Ok(Arc::new(AppState {
        body_room,
        media: MediaCache::new(config.media_dir()),
        config: Arc::new(config),
        engine,
        hub,
        vision,
        shutdown: CancellationToken::new(),
        activity: Arc::new(Activity::default()),
    }))
}

/// Serves `state` on `listener` until `stop` completes, then cancels running requests, waits for open
/// connections to finish, and stops the MCP servers.
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_wrapped(listener, state, stop, |app, _| app).await
}

/// What a program embedding the server may put in front of every route (its own tower layers); it
/// sees the run configuration.
pub type Wrap = fn(axum::Router, &RunConfig) -> axum::Router;

/// [`serve`], with the router passed through `wrap` first.
pub async fn serve_wrapped(
    listener: TcpListener,
    state: Arc<AppState>,
    stop: impl Future<Output = ()> + Send + 'static,
    wrap: Wrap,
) -> std::io::Result<()> {
    let app = wrap(routes::app(Arc::clone(&state)), &state.config);
    let shutdown = state.shutdown.clone();
    let stopping = async move {
        stop.await;
        shutdown.cancel();
    };
    let served = serve_connections(listener, app, &state.config, stopping).await;
    if let Some(hub) = &state.hub {
        hub.close().await;
    }
    served
}

/// Accepts connections until `stopping` completes, then waits for the open ones to finish. Every
/// connection must send its request headers within `header_timeout` (a slowloris client is dropped);
/// at most `max_connections` are served at once, and one over that is closed as it arrives, so idle
/// or slow clients cannot exhaust the server's file descriptors and memory (SPEC 1.11).
async fn serve_connections(
    listener: TcpListener,
    app: axum::Router,
    config: &RunConfig,
    stopping: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let slots = Arc::new(tokio::sync::Semaphore::new(config.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(config.header_timeout);
    tokio::pin!(stopping);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of file descriptors or a connection reset before accept: wait a moment, go on.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut stopping => break,
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            drop(tcp);
            continue;
        };
        // Small frames (SSE chunks, 304s) go out at once.
        let _ = tcp.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let connection = builder.serve_connection(TokioIo::new(tcp), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A server running in this process.
pub struct RunningServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Its state (tests read the engine's prompts from here).
    pub state: Arc<AppState>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// `http://HOST:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the server and waits until it has stopped (MCP processes reaped).
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Binds `config.host:config.port` and serves in the background.
pub async fn start(config: RunConfig) -> std::io::Result<RunningServer> {
    start_wrapped(config, |app, _| app).await
}

/// [`start`], with the router passed through `wrap` first.
pub async fn start_wrapped(config: RunConfig, wrap: Wrap) -> std::io::Result<RunningServer> {
    let listener = TcpListener::bind((config.host.as_str(), config.port)).await?;
    let addr = listener.local_addr()?;
    let state = build_state(config).map_err(std::io::Error::other)?;
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    let task =
        tokio::spawn(serve_wrapped(listener, Arc::clone(&state), async move { stopped.cancelled().await }, wrap));
    Ok(RunningServer { addr, state, stop, task })
}

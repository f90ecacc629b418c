//! [`McpHttpServer`], the standalone server: the router on a TCP listener, with
//! header-read and idle timeouts and a graceful shutdown.

use super::options::HttpOptions;
use crate::server::McpServer;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;
use toolwright_core::ToolSet;

/// Serves `tools` over Streamable HTTP at `http://{addr}/mcp` until the process ends,
/// with default [`HttpOptions`] (loopback hosts and origins only); see
/// [`McpHttpServer`] to change them or to stop the server (for example gracefully on
/// [`shutdown_signal`]).
pub async fn serve_http(tools: ToolSet, addr: impl ToSocketAddrs) -> io::Result<()> {
    McpHttpServer::bind(McpServer::new(tools), addr)
        .await?
        .run()
        .await
}

/// The standalone Streamable HTTP server: [`McpServer::router_with`] on a TCP
/// listener, with header-read and idle timeouts and a graceful shutdown.
///
/// ```no_run
/// # async fn demo(tools: toolwright_core::ToolSet) -> std::io::Result<()> {
/// use toolwright_mcp::{McpHttpServer, McpServer};
/// let http = McpHttpServer::bind(McpServer::new(tools), "127.0.0.1:0").await?;
/// println!("serving on {}", http.url());
/// let stop = http.shutdown_token();
/// let running = tokio::spawn(http.run());
/// // ... later: stop accepting, let calls in flight finish (up to the grace period).
/// stop.cancel();
/// # let _ = running.await;
/// # Ok(()) }
/// ```
///
/// To stop as service managers ask (systemd, Docker and Kubernetes send `SIGTERM`, a
/// terminal Ctrl-C), cancel the token on [`shutdown_signal`]:
///
/// ```no_run
/// # async fn demo(tools: toolwright_core::ToolSet) -> std::io::Result<()> {
/// use toolwright_mcp::{McpHttpServer, McpServer, shutdown_signal};
/// let http = McpHttpServer::bind(McpServer::new(tools), "127.0.0.1:8000").await?;
/// let stop = http.shutdown_token();
/// tokio::spawn(async move {
///     shutdown_signal().await;
///     stop.cancel();
/// });
/// http.run().await
/// # }
/// ```
pub struct McpHttpServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    server: McpServer,
    options: HttpOptions,
    shutdown: CancellationToken,
    grace: Duration,
}

impl McpHttpServer {
    /// Binds `addr`. Port 0 picks a free port; read it with [`local_addr`](Self::local_addr).
    pub async fn bind(server: McpServer, addr: impl ToSocketAddrs) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        Ok(Self {
            listener,
            local_addr,
            server,
            options: HttpOptions::default(),
            shutdown: CancellationToken::new(),
            grace: Duration::from_secs(10),
        })
    }

    /// Serve as `options` say, replacing what earlier settings chose.
    pub fn with_options(mut self, options: HttpOptions) -> Self {
        self.options = options;
        self
    }

    /// Accept requests whose `Host` header names one of `hosts` (with or without a
    /// port), instead of only loopback names.
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.options = self.options.with_allowed_hosts(hosts);
        self
    }

    /// At shutdown, wait up to `grace` (10 seconds by default) for requests in flight,
    /// and tasks running (see [`McpServer::shutdown_tasks`]), before ending them.
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.options.path)
    }

    /// Cancelling this token shuts the server down: it stops accepting connections,
    /// lets requests in flight finish for up to the grace period, then ends them and
    /// every session. A client's standalone event stream counts as in flight, so with
    /// such clients connected the shutdown takes the whole grace period.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves until the shutdown token is cancelled and the shutdown has finished.
    ///
    /// An `InvalidInput` error, before serving anything, if the options'
    /// authentication requires scopes for a tool the server does not serve (see
    /// [`HttpAuth::require_scopes`](crate::HttpAuth::require_scopes)).
    pub async fn run(self) -> io::Result<()> {
        let sessions = self.options.cancel.clone();
        let header_read_timeout = self.options.header_read_timeout;
        let router = self
            .server
            .try_router_with(self.options)
            .map_err(|error| io::Error::new(io::ErrorKind::InvalidInput, error))?;
        let graceful = GracefulShutdown::new();
        let mut http = hyper::server::conn::http1::Builder::new();
        // hyper's header-read timeout needs a timer to act. It runs while a connection
        // waits for a request's head, so it also closes connections idle between
        // requests (but never one streaming a response).
        http.timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout);
        loop {
            let stream = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _peer)) => stream,
                    // Per-connection failures (resets, no file descriptors left) must
                    // not end the server; back off briefly so a persistent error does
                    // not spin while the timeouts free descriptors.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
                () = self.shutdown.cancelled() => break,
            };
            // Responses are written in several pieces (head, event, end of stream);
            // with Nagle's algorithm each answer would wait for the client's delayed ACK.
            let _ = stream.set_nodelay(true);
            let service = TowerToHyperService::new(router.clone());
            let connection = http.serve_connection(TokioIo::new(stream), service);
            let connection = graceful.watch(connection);
            tokio::spawn(async move {
                // A broken connection concerns that client alone.
                let _ = connection.await;
            });
        }
        // Stop accepting (the listener is dropped), let connections finish what they
        // are answering and tasks finish their rounds, then end the sessions and with
        // them every call still running.
        drop(self.listener);
        let (_, ()) = tokio::join!(
            tokio::time::timeout(self.grace, graceful.shutdown()),
            self.server.shutdown_tasks(self.grace),
        );
        sessions.cancel();
        Ok(())
    }
}

impl std::fmt::Debug for McpHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpServer")
            .field("local_addr", &self.local_addr)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// A future that completes when the process is asked to stop: on Ctrl-C (`SIGINT`),
/// and on Unix also on `SIGTERM`, the signal systemd, Docker and Kubernetes send before
/// they kill a process. Give it to [`McpHttpServer::shutdown_token`]'s owner, or to
/// `axum::serve(..).with_graceful_shutdown(..)`, so calls in flight are answered
/// before the process exits.
///
/// The handlers are installed when this function is called (call it inside a Tokio
/// runtime), not when the future is first polled, so a signal that arrives between
/// the two is not lost. From then on these signals no longer end the process by
/// themselves: whoever awaits the future decides what to do. Nothing in this crate
/// installs them unless this function is called. A signal whose handler cannot be
/// installed keeps its default action.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async move {
            let wait = |listener: Option<tokio::signal::unix::Signal>| async move {
                match listener {
                    Some(mut listener) => {
                        listener.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(interrupt) => {}
                () = wait(terminate) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

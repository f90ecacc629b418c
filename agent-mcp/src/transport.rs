//! Serving an [`McpServer`] over stdio and Streamable HTTP.

use crate::server::McpServer;
use agent_core::ToolSet;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio_util::sync::CancellationToken;

/// Serves `tools` over stdio (newline-delimited JSON-RPC on stdin/stdout) until the
/// client closes stdin. Diagnostics must go to stderr: stdout belongs to the protocol.
pub async fn serve_stdio(tools: ToolSet) -> io::Result<()> {
    serve_stdio_with(McpServer::new(tools)).await
}

/// Serves `server` over stdio; see [`serve_stdio`].
pub async fn serve_stdio_with(server: McpServer) -> io::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| io::Error::other(format!("MCP initialization over stdio failed: {e}")))?;
    running
        .waiting()
        .await
        .map_err(|e| io::Error::other(format!("the MCP stdio session failed: {e}")))?;
    Ok(())
}

/// Serves `tools` over Streamable HTTP at `http://{addr}/mcp` until the process ends.
/// Every client session gets its own server state. Only requests whose `Host` is a
/// loopback name are accepted (DNS-rebinding protection); see [`McpHttpServer`] to
/// change that or to stop the server.
pub async fn serve_http(tools: ToolSet, addr: impl ToSocketAddrs) -> io::Result<()> {
    McpHttpServer::bind(McpServer::new(tools), addr)
        .await?
        .run()
        .await
}

/// A Streamable HTTP endpoint for an [`McpServer`], bound and ready to run.
///
/// ```no_run
/// # async fn demo(tools: agent_core::ToolSet) -> std::io::Result<()> {
/// use agent_mcp::{McpHttpServer, McpServer};
/// let http = McpHttpServer::bind(McpServer::new(tools), "127.0.0.1:0").await?;
/// println!("serving on http://{}/mcp", http.local_addr());
/// let stop = http.shutdown_token();
/// tokio::spawn(http.run());
/// // ... later:
/// stop.cancel();
/// # Ok(()) }
/// ```
pub struct McpHttpServer {
    listener: TcpListener,
    local_addr: SocketAddr,
    server: McpServer,
    config: StreamableHttpServerConfig,
    shutdown: CancellationToken,
}

impl McpHttpServer {
    /// Binds `addr`. Port 0 picks a free port; read it with [`local_addr`](Self::local_addr).
    pub async fn bind(server: McpServer, addr: impl ToSocketAddrs) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        // rmcp's defaults: loopback `Host`s only, sessions, SSE keep-alive, a request
        // body limit. Sessions end when the server stops.
        let config =
            StreamableHttpServerConfig::default().with_cancellation_token(shutdown.clone());
        Ok(Self {
            listener,
            local_addr,
            server,
            config,
            shutdown,
        })
    }

    /// Accept requests whose `Host` header names one of `hosts` (with or without a
    /// port), instead of only loopback names.
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.config = self.config.with_allowed_hosts(hosts);
        self
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local_addr)
    }

    /// Cancelling this token stops accepting connections and ends every session.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves until the shutdown token is cancelled.
    pub async fn run(self) -> io::Result<()> {
        let server = self.server;
        let service = StreamableHttpService::new(
            move || Ok(server.for_new_session()),
            Arc::new(LocalSessionManager::default()),
            self.config,
        );
        loop {
            let (stream, _peer) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // Per-connection failures (resets, fd pressure) must not end the
                    // server; back off briefly so a persistent error does not spin.
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        continue;
                    }
                },
                () = self.shutdown.cancelled() => return Ok(()),
            };
            let service = TowerToHyperService::new(service.clone());
            let shutdown = self.shutdown.clone();
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service);
                tokio::select! {
                    // A broken connection concerns that client alone.
                    _ = connection => {}
                    () = shutdown.cancelled() => {}
                }
            });
        }
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

//! Serving an [`McpServer`] over stdio and Streamable HTTP.

use crate::server::McpServer;
use agent_core::ToolSet;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::{Service as _, service_fn};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
    ReadHalf, WriteHalf,
};
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Serves `tools` over stdio (newline-delimited JSON-RPC on stdin/stdout) until the
/// client closes stdin. Diagnostics must go to stderr: stdout belongs to the protocol.
pub async fn serve_stdio(tools: ToolSet) -> io::Result<()> {
    serve_stdio_with(McpServer::new(tools)).await
}

/// Serves `server` over stdio; see [`serve_stdio`].
pub async fn serve_stdio_with(server: McpServer) -> io::Result<()> {
    serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// The largest JSON-RPC message accepted on a stream transport: the same bound rmcp's
/// Streamable HTTP server puts on a request body.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// Serves `server` over a byte stream pair carrying newline-delimited JSON-RPC (the
/// stdio transport's framing), until `input` ends.
///
/// Every line is checked before rmcp sees it: a line that is not JSON (malformed,
/// nested deeper than serde_json's limit of 128, longer than [`MAX_MESSAGE_BYTES`]) is
/// answered with a JSON-RPC parse error (`-32700`), where rmcp alone would drop it in
/// silence, and the session goes on.
pub async fn serve_io<R, W>(server: McpServer, input: R, output: W) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // rmcp speaks to one end of an in-memory pipe; we stand between it and the client.
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (from_rmcp, to_rmcp) = tokio::io::split(ours);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    let inbound = tokio::spawn(pump_inbound(input, to_rmcp, errors_tx));
    let outbound = tokio::spawn(pump_outbound(from_rmcp, errors_rx, output));

    let served = async {
        let running = server
            .serve(tokio::io::split(theirs))
            .await
            .map_err(|e| io::Error::other(format!("MCP initialization failed: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| io::Error::other(format!("the MCP session failed: {e}")))?;
        Ok::<_, io::Error>(())
    };
    let result = served.await;
    inbound.abort();
    // rmcp has dropped its end, so the outbound pump drains what is left and ends.
    let _ = outbound.await;
    result
}

/// Client to rmcp: whole lines that are JSON pass; the rest are answered here.
async fn pump_inbound<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: WriteHalf<DuplexStream>,
    errors: mpsc::UnboundedSender<String>,
) {
    let mut input = BufReader::new(input);
    let mut line = Vec::new();
    loop {
        line.clear();
        let too_long = match read_line_capped(&mut input, &mut line, MAX_MESSAGE_BYTES).await {
            Ok(None) => break,
            Ok(Some(too_long)) => too_long,
            Err(_) => break,
        };
        if line.iter().all(u8::is_ascii_whitespace) && !too_long {
            continue;
        }
        let problem = if too_long {
            Some(format!("message longer than {MAX_MESSAGE_BYTES} bytes"))
        } else {
            // Parsed into a `Value` (not skipped with `IgnoredAny`) because only that path
            // applies serde_json's nesting limit, the one rmcp's own parse would trip on.
            serde_json::from_slice::<Value>(&line)
                .err()
                .map(|e| e.to_string())
        };
        if let Some(problem) = problem {
            let error = json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32700, "message": format!("Parse error: {problem}")},
            });
            let _ = errors.send(error.to_string());
            continue;
        }
        line.push(b'\n');
        if to_rmcp.write_all(&line).await.is_err() {
            break;
        }
    }
    // End of input: rmcp sees end of stream and closes the session.
    let _ = to_rmcp.shutdown().await;
}

/// Reads one line (without its newline) into `line`. `Ok(None)` at end of input;
/// `Ok(Some(true))` when the line was longer than `cap`: its excess is skipped, so a
/// huge line costs at most `cap` bytes of memory.
async fn read_line_capped<R: AsyncBufRead + Unpin>(
    input: &mut R,
    line: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Option<bool>> {
    let mut too_long = false;
    let mut read_any = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(read_any.then_some(too_long));
        }
        read_any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() <= cap {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let consumed = done.unwrap_or(buf.len());
        input.consume(consumed);
        if done.is_some() {
            return Ok(Some(too_long));
        }
    }
}

/// rmcp and parse errors to the client, a whole line at a time so they never interleave.
async fn pump_outbound<W: AsyncWrite + Unpin>(
    from_rmcp: ReadHalf<DuplexStream>,
    mut errors: mpsc::UnboundedReceiver<String>,
    mut output: W,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        line.clear();
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            error = errors.recv(), if errors_open => match error {
                Some(error) => {
                    line.extend_from_slice(error.as_bytes());
                    line.push(b'\n');
                }
                None => {
                    errors_open = false;
                    continue;
                }
            },
        }
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
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
        format!("http://{}{MCP_PATH}", self.local_addr)
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
            let endpoint = TowerToHyperService::new(service.clone());
            // One endpoint, `/mcp`; anything else is not ours to answer.
            let routed = service_fn(move |request: Request<Incoming>| {
                let endpoint = endpoint.clone();
                async move {
                    if request.uri().path() == MCP_PATH {
                        endpoint.call(request).await
                    } else {
                        Ok(not_found())
                    }
                }
            });
            let shutdown = self.shutdown.clone();
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), routed);
                tokio::select! {
                    // A broken connection concerns that client alone.
                    _ = connection => {}
                    () = shutdown.cancelled() => {}
                }
            });
        }
    }
}

/// The path of the Streamable HTTP endpoint.
const MCP_PATH: &str = "/mcp";

fn not_found() -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(b"Not Found: the MCP endpoint is /mcp")).boxed(),
    );
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

impl std::fmt::Debug for McpHttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpServer")
            .field("local_addr", &self.local_addr)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

//! Streamable HTTP: an [`McpServer`] as an axum [`Router`] an application mounts, and
//! [`McpHttpServer`], the standalone server built on that router.

use crate::auth::{self, AuthState, HttpAuth};
use crate::http_calls::{FastCall, HttpSessions, SessionUse};
use crate::limits::{self, Admission, BodyLimits, CancelCall, GuardedBody};
use crate::server::McpServer;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;
use toolwright_core::ToolSet;

/// The header that names a Streamable HTTP session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The session `headers` name, if they name one readably.
pub(crate) fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER)?.to_str().ok()
}

/// How the HTTP endpoint is served: who may reach it, the limits that keep one client
/// from exhausting it, and authentication. The defaults are safe for a server on
/// loopback; a public deployment names its own hosts and origins.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The endpoint's path within the router (`/mcp`).
    pub path: String,
    /// Accepted `Host` headers, with or without a port (DNS-rebinding protection).
    /// Default: `localhost`, `127.0.0.1`, `::1`. Empty accepts any host.
    pub allowed_hosts: Vec<String>,
    /// Accepted browser `Origin`s, as `scheme://host:port` (`:*` for any port).
    /// Default: loopback origins on any port. A request with another `Origin`,
    /// `null` included, is refused with 403; requests without one (non-browser
    /// clients) pass.
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted (413 beyond it). Default 4 MiB.
    pub max_body_bytes: usize,
    /// The most JSON values (arrays, objects, members, items) a request body may hold
    /// (413 beyond it). A parsed value costs tens of bytes however short its text, so
    /// this bounds what a body becomes in memory. Default 32,768.
    pub max_json_values: usize,
    /// Requests answered at once; more get 503 with `Retry-After`. A request counts
    /// until its response (a streamed one included) has been sent. Default 256.
    pub max_concurrent_requests: usize,
    /// Live sessions at once; a new client beyond them gets 503 with `Retry-After`.
    /// Default 1,024.
    pub max_sessions: usize,
    /// A session unused this long is closed. Default 5 minutes.
    pub session_idle_timeout: Duration,
    /// The longest a request may take, its streamed response included; its response
    /// then ends (503 if nothing was sent yet) and its call is cancelled. Default 10
    /// minutes.
    pub request_timeout: Duration,
    /// The time a connection has to send a request's headers, and the longest an idle
    /// connection is kept between requests: slow and idle connections are closed, so
    /// they cannot hold the server's connections. Default 10 seconds.
    pub header_read_timeout: Duration,
    /// The `Retry-After` sent with a 503. Default 1 second.
    pub retry_after: Duration,
    /// Serve without sessions: every request stands alone, so any instance behind a
    /// load balancer can answer it. Default off.
    pub stateless: bool,
    /// Bearer-token authentication; `None` (the default) serves everyone.
    pub auth: Option<HttpAuth>,
    /// Cancelling this ends every session at once; the standalone server does it after
    /// its grace period.
    pub cancel: CancellationToken,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            allowed_hosts: ["localhost", "127.0.0.1", "::1"]
                .map(str::to_owned)
                .to_vec(),
            allowed_origins: ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .flat_map(|host| ["http", "https"].map(|scheme| format!("{scheme}://{host}:*")))
                .collect(),
            max_body_bytes: crate::MAX_MESSAGE_BYTES,
            max_json_values: 32 * 1024,
            max_concurrent_requests: 256,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(600),
            header_read_timeout: Duration::from_secs(10),
            retry_after: Duration::from_secs(1),
            stateless: false,
            auth: None,
            cancel: CancellationToken::new(),
        }
    }
}

impl HttpOptions {
    /// Accept requests whose `Host` is one of `hosts` (with or without a port).
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Accept browser requests from `origins` (`https://app.example.com`, or with
    /// `:*` for any port) instead of loopback origins.
    pub fn with_allowed_origins(
        mut self,
        origins: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Refuse request bodies over `bytes`.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Refuse request bodies of more than `values` JSON values.
    pub fn with_max_json_values(mut self, values: usize) -> Self {
        self.max_json_values = values;
        self
    }

    /// Answer at most `requests` requests at once.
    pub fn with_max_concurrent_requests(mut self, requests: usize) -> Self {
        self.max_concurrent_requests = requests;
        self
    }

    /// Keep at most `sessions` sessions alive at once.
    pub fn with_max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Close a session unused for `idle`.
    pub fn with_session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// End a request that takes longer than `timeout`.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Close a connection that takes longer than `timeout` to send a request's headers,
    /// or stays idle that long between requests.
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Serve without sessions (see [`stateless`](Self::stateless)).
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Require a bearer token every request, checked by `auth`.
    pub fn with_auth(mut self, auth: HttpAuth) -> Self {
        self.auth = Some(auth);
        self
    }
}

impl McpServer {
    /// The MCP endpoint as an axum [`Router`] with default [`HttpOptions`]: Streamable
    /// HTTP at `/mcp`. Mount it anywhere in an application
    /// (`app.nest("/tools", server.router())` serves `/tools/mcp`), or serve it with
    /// [`McpHttpServer`].
    pub fn router(&self) -> Router {
        self.router_with(HttpOptions::default())
    }

    /// The MCP endpoint as an axum [`Router`], served as `options` say. With
    /// authentication, the router also serves the protected-resource metadata
    /// (`/.well-known/oauth-protected-resource`, RFC 9728) beside the endpoint.
    ///
    /// A call whose client disconnects before its answer is cancelled (its tool's
    /// cancellation token fires), and the places it held under the limits are freed.
    ///
    /// With sessions, a `tools/call` of a tool that cannot talk to its client mid-call
    /// (it takes no `ToolContext`, state or progress, and needs no approval) is answered
    /// as `application/json`, which the Streamable HTTP transport allows and clients
    /// accept; other requests are answered as rmcp's service answers them, calls on an
    /// event stream. Every request of a session, a call in flight included, keeps it
    /// from expiring.
    pub fn router_with(&self, options: HttpOptions) -> Router {
        let mut sessions = LocalSessionManager::default();
        // Calls answered by the endpoint itself never reach rmcp's session worker, so
        // its idle timer would close sessions in use: the endpoint, which sees every
        // request, closes idle sessions instead (see `HttpSessions`).
        sessions.session_config.keep_alive = None;
        let sessions = Arc::new(sessions);
        let calls = (!options.stateless).then(|| {
            Arc::new(HttpSessions::new(
                sessions.clone(),
                options.max_sessions,
                options.session_idle_timeout,
                &options.allowed_hosts,
                options.cancel.clone(),
            ))
        });
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts.clone())
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes)
            .with_cancellation_token(options.cancel.clone());
        if options.allowed_hosts.is_empty() {
            config = config.disable_allowed_hosts();
        }
        if options.stateless {
            config = config
                .with_legacy_session_mode(false)
                .with_json_response(true);
        }
        let server = self.clone();
        let registry = calls.as_ref().map(Arc::downgrade);
        let service = StreamableHttpService::new(
            move || {
                Ok(match &registry {
                    Some(registry) => server.for_http_session(registry.clone()),
                    None => server.for_new_session(),
                })
            },
            sessions.clone(),
            config,
        );
        let stateful = (!options.stateless).then_some(sessions);
        // One piece of state shared by every request (an `Arc` clone each) and one
        // handler doing every check in turn: layered middleware would clone rmcp's
        // service, its configuration lists included, at every layer of every request.
        let endpoint = Endpoint {
            service,
            admission: Admission::new(&options, stateful.clone()),
            body_limits: BodyLimits {
                max_bytes: options.max_body_bytes,
                max_values: options.max_json_values,
            },
            auth: options
                .auth
                .clone()
                .map(|auth| AuthState::new(auth, stateful.clone(), options.max_sessions)),
            sessions: stateful,
            calls,
        };
        let mut router = Router::new().route(
            &options.path,
            any(serve_endpoint).with_state(Arc::new(endpoint)),
        );
        if let Some(auth) = options.auth {
            let metadata = get(auth::resource_metadata).with_state((auth, options.path.clone()));
            router = router
                .route(auth::WELL_KNOWN, metadata.clone())
                .route(&format!("{}{}", auth::WELL_KNOWN, options.path), metadata);
        }
        router
    }
}

/// The MCP endpoint: rmcp's Streamable HTTP service behind our limits and
/// authentication.
struct Endpoint {
    service: StreamableHttpService<McpServer, LocalSessionManager>,
    admission: Admission,
    body_limits: BodyLimits,
    auth: Option<AuthState>,
    /// `None` when serving without sessions.
    sessions: Option<Arc<LocalSessionManager>>,
    /// The sessions as this endpoint tracks them; `None` when serving without sessions.
    calls: Option<Arc<HttpSessions>>,
}

async fn serve_endpoint(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    endpoint.handle(request).await
}

impl Endpoint {
    /// Admission (POST only), then authentication, then the body's limits (POST only),
    /// then rmcp, under the request's deadline.
    ///
    /// rmcp's future and the fast path's are boxed where they start: held inline, they
    /// made this future kilobytes large, copied whole as tower and hyper moved it before
    /// its first poll (callgrind: most of a request's `memcpy`).
    async fn handle(&self, mut request: Request) -> Response {
        // A client's standalone event stream (GET) stays open for the whole session: it
        // is bounded by the sessions cap, not counted as a request in flight. DELETE
        // carries no body.
        if request.method() != Method::POST {
            let checked = match &self.auth {
                Some(auth) => match auth.check(&mut request).await {
                    Ok(checked) => Some(checked),
                    Err(refused) => return refused,
                },
                None => None,
            };
            let used = self.session_use(request.headers());
            let deleting = (request.method() == Method::DELETE)
                .then(|| request.headers().clone())
                .filter(|_| used.is_some());
            let response = Box::pin(self.service.handle(request)).await;
            drop(used);
            if let (Some(calls), Some(headers)) = (&self.calls, deleting)
                && response.status().is_success()
            {
                calls.closed(&headers);
            }
            if let (Some(auth), Some(checked)) = (&self.auth, checked) {
                auth.answered(checked, response.headers()).await;
            }
            return response.map(Body::new);
        }
        let admitted = match self.admission.admit(request.headers()).await {
            Ok(admitted) => admitted,
            Err(refused) => return refused,
        };
        let checked = match &self.auth {
            Some(auth) => match auth.check(&mut request).await {
                Ok(checked) => Some(checked),
                Err(refused) => return refused,
            },
            None => None,
        };
        let (parts, body) = request.into_parts();
        let bytes = match limits::read_body(&self.body_limits, body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        let used = self.session_use(&parts.headers);
        let (parts, bytes) = match &self.calls {
            Some(calls) if let Some(session) = &used => {
                match calls.fast_call(parts, bytes, session).await {
                    Ok(call) => return self.answer(call, admitted.permit, used).await,
                    Err(request) => request,
                }
            }
            _ => (parts, bytes),
        };
        let opening = used.is_none() && !parts.headers.contains_key(SESSION_HEADER);
        // A call of a session answers on an event stream. If that stream is dropped
        // before its end, the client is gone: rmcp would keep the call running (for a
        // client that might resume the stream), holding its places; it is cancelled.
        let cancel = match (&self.sessions, parts.headers.get(SESSION_HEADER)) {
            (Some(sessions), Some(session)) => CancelCall::new(sessions, session, &bytes),
            _ => None,
        };
        let request = Request::from_parts(parts, Full::new(bytes));
        let mut deadline = self.admission.deadline();
        let response = tokio::select! {
            response = Box::pin(self.service.handle(request)) => response,
            () = deadline.as_mut() => return self.admission.timed_out(),
        };
        if let (Some(calls), true) = (&self.calls, opening) {
            calls.opened(response.headers()).await;
        }
        if let (Some(auth), Some(checked)) = (&self.auth, checked) {
            auth.answered(checked, response.headers()).await;
        }
        let streamed = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
        let cancel = cancel.filter(|_| streamed);
        let (parts, body) = response.into_parts();
        let body = GuardedBody::new(body, deadline, admitted.permit, cancel).with_session(used);
        Response::from_parts(parts, Body::new(body))
    }

    /// The session of a request, in use until the guard is dropped (`None` without
    /// sessions, or for a session this endpoint does not know).
    fn session_use(&self, headers: &HeaderMap) -> Option<SessionUse> {
        let calls = self.calls.as_ref()?;
        calls.start_sweeping();
        calls.used(headers)
    }

    /// Answers a call on the fast path, as JSON, under the request's deadline. If the
    /// client disconnects, this future is dropped and the call with it (cancelled).
    async fn answer(
        &self,
        call: FastCall,
        permit: OwnedSemaphorePermit,
        used: Option<SessionUse>,
    ) -> Response {
        let mut deadline = self.admission.deadline();
        let answer = tokio::select! {
            answer = Box::pin(call.answer()) => answer,
            () = deadline.as_mut() => return self.admission.timed_out(),
        };
        let Ok(answer) = answer else {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal Server Error: the call's answer could not be written as JSON",
            )
                .into_response();
        };
        let body = Full::new(Bytes::from(answer))
            .map_err(|never| match never {})
            .boxed();
        let body = GuardedBody::new(body, deadline, permit, None).with_session(used);
        let mut response = Response::new(Body::new(body));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

/// Serves `tools` over Streamable HTTP at `http://{addr}/mcp` until the process ends,
/// with default [`HttpOptions`] (loopback hosts and origins only); see
/// [`McpHttpServer`] to change them or to stop the server.
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

    /// At shutdown, wait up to `grace` (10 seconds by default) for requests in flight
    /// before ending them.
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
    pub async fn run(self) -> io::Result<()> {
        let sessions = self.options.cancel.clone();
        let header_read_timeout = self.options.header_read_timeout;
        let router = self.server.router_with(self.options);
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
        // are answering, then end the sessions and with them every call still running.
        drop(self.listener);
        let _ = tokio::time::timeout(self.grace, graceful.shutdown()).await;
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

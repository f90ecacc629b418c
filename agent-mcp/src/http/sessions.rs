//! The sessions of a stateful Streamable HTTP endpoint, in one table that owns each
//! session's life.
//!
//! A session is one [`SessionEntry`], and every fact about it hangs off that entry: rmcp's
//! worker handle (what rmcp's path sends the session's messages to), the principal that
//! opened it, its place under the sessions cap, when it was last used, and, once the
//! client has initialized, the handler and peer its calls run with. rmcp reaches the
//! table through [`SessionManager`], implemented here over the same entries, so rmcp's
//! view of which sessions exist and the endpoint's are one view: a session is created
//! once (`create_session`, with the owner and the place its opening request reserved),
//! and removed once, whichever way it ends (a DELETE, idle expiry, the worker ending at
//! shutdown), which flags it closed for requests already holding it and frees its place.
//! Kept in several tables that each pruned on their own, sessions ended in one and lived
//! on in another, owner records outlived their sessions, and counts drifted.
//!
//! The endpoint closes idle sessions itself: it sees every request, and rmcp's session
//! worker does not see the calls answered here.
//!
//! With the handler, a plain `tools/call` POST whose tool cannot need its client
//! mid-call is answered here with an `application/json` response: it runs through
//! rmcp's handler dispatch and [`McpServer::run_call`] as on rmcp's path, skipping rmcp's
//! session worker, service loop and event stream. Anything else (other methods, batches,
//! a tool that reads its context or needs approval, unusual headers) goes to rmcp.

use crate::server::McpServer;
use crate::server::session::{SessionObserver, session_id};
use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use futures::Stream;
use rmcp::Service;
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage,
    ClientRequest, ErrorCode, JsonRpcVersion2_0, ProtocolVersion, RequestId, RequestMetaObject,
    ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::transport::WorkerTransport;
use rmcp::transport::common::server_side_http::session_id as new_session_id;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionHandle, LocalSessionManagerError, LocalSessionWorker, SessionConfig, SessionError,
    create_local_session,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use serde::Deserialize;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock, PoisonError, RwLock, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::Receiver;
use tokio_util::sync::CancellationToken;

const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// The room a call's answer is written into at first.
const ANSWER_CAPACITY: usize = 1024;

/// The sessions of one stateful endpoint.
pub(crate) struct HttpSessions {
    table: RwLock<HashMap<SessionId, Arc<SessionEntry>>>,
    /// Live sessions plus the places reserved by requests opening one: what the cap
    /// bounds. Changed only with an entry's creation or removal, or a reservation's.
    places: AtomicUsize,
    max_sessions: usize,
    /// How rmcp's worker serves each session (without its own idle timer).
    worker: SessionConfig,
    idle: Duration,
    /// The clock stamps count from.
    base: Instant,
    sweeping: Once,
    cancel: CancellationToken,
    /// `Host` values the fast path accepts; others go to rmcp.
    allowed_hosts: AllowedHosts,
}

/// One live session.
pub(crate) struct SessionEntry {
    /// rmcp's worker for the session, which rmcp's path sends its messages to.
    handle: LocalSessionHandle,
    /// The subject of the principal that opened it, when the endpoint authenticates.
    owner: Option<String>,
    /// Set once, when the entry leaves the table: a request that found it before then
    /// goes to rmcp, which answers 404.
    closed: AtomicBool,
    /// Milliseconds since `base` at the last request's start or end.
    last_use: AtomicU64,
    /// The MCP session's requests being answered: it is not idle while one runs.
    in_flight: AtomicUsize,
    /// Set once the client has initialized the session.
    handler: OnceLock<SessionHandler>,
}

/// The session's own server instance and its peer, as rmcp's worker holds them.
struct SessionHandler {
    server: McpServer,
    peer: Peer<RoleServer>,
}

impl SessionEntry {
    /// The subject of the principal that opened the session, if one did.
    pub(crate) fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }
}

/// Milliseconds since `base`, the clock session stamps count on.
fn millis_since(base: Instant) -> u64 {
    u64::try_from(base.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A host and optional port, normalised as a `Host` header is compared.
#[derive(PartialEq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    /// A `Host` header's value; `None` if it is not an authority.
    fn parse(text: &str) -> Option<Self> {
        let authority = axum::http::uri::Authority::try_from(text.trim()).ok()?;
        Some(Self::new(authority.host(), authority.port_u16()))
    }

    /// An allowed host as rmcp reads it: an authority, or else the bare text as a host
    /// (`::1`). Never dropped, so a list with entries never allows every host.
    fn allowed(text: &str) -> Self {
        Self::parse(text).unwrap_or_else(|| Self::new(text.trim(), None))
    }

    fn new(host: &str, port: Option<u16>) -> Self {
        Self {
            host: host.trim_matches(['[', ']']).to_ascii_lowercase(),
            port,
        }
    }
}

tokio::task_local! {
    /// What the request being answered brings to the session it opens. rmcp creates
    /// sessions through [`SessionManager::create_session`], which takes no request, on
    /// the request's own task: the endpoint scopes this around rmcp's handling.
    static OPENING: Opening;
}

/// A request that may open a session: its place under the cap and its principal.
pub(crate) struct Opening {
    place: Mutex<Option<Place>>,
    owner: Option<String>,
}

impl Opening {
    /// A request holding `place`, by the principal whose subject is `owner`.
    pub(crate) fn new(place: Option<Place>, owner: Option<String>) -> Self {
        Self {
            place: Mutex::new(place),
            owner,
        }
    }

    /// Runs `future` (rmcp answering the request) with this opening in scope.
    pub(crate) async fn scope<F: Future>(self, future: F) -> F::Output {
        OPENING.scope(self, future).await
    }
}

/// A place under the sessions cap, reserved for a session about to open. Given back
/// when dropped, unless a session took it over.
pub(crate) struct Place {
    sessions: Arc<HttpSessions>,
    /// Taken over by a session, whose entry gives it back when it leaves the table.
    kept: bool,
}

impl Drop for Place {
    fn drop(&mut self) {
        if !self.kept {
            self.sessions.places.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl HttpSessions {
    /// An empty table for at most `max_sessions` sessions, closing those idle for
    /// `idle`, until `cancel` (the server's shutdown).
    pub(crate) fn new(
        max_sessions: usize,
        idle: Duration,
        allowed_hosts: &[String],
        cancel: CancellationToken,
    ) -> Self {
        let mut worker = SessionConfig::default();
        // Calls answered by the endpoint itself never reach rmcp's session worker, so
        // its idle timer would close sessions in use: the endpoint closes idle ones.
        worker.keep_alive = None;
        Self {
            table: RwLock::default(),
            places: AtomicUsize::new(0),
            max_sessions,
            worker,
            idle,
            base: Instant::now(),
            sweeping: Once::new(),
            cancel,
            allowed_hosts: AllowedHosts::new(allowed_hosts),
        }
    }

    fn now(&self) -> u64 {
        millis_since(self.base)
    }

    /// The number of live sessions some principal owns.
    #[cfg(test)]
    pub(crate) fn owned(&self) -> usize {
        self.read()
            .values()
            .filter(|entry| entry.owner.is_some())
            .count()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<SessionId, Arc<SessionEntry>>> {
        self.table.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more session, or `None` if the live sessions and those being
    /// opened fill the cap.
    pub(crate) fn reserve(self: &Arc<Self>) -> Option<Place> {
        self.places
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |places| {
                (places < self.max_sessions).then_some(places + 1)
            })
            .ok()?;
        Some(Place {
            sessions: self.clone(),
            kept: false,
        })
    }

    /// The live session `headers` name.
    pub(crate) fn find(&self, headers: &HeaderMap) -> Option<Arc<SessionEntry>> {
        self.read().get(session_id(headers)?).cloned()
    }

    /// Starts closing idle sessions, once, from the first request (a runtime exists
    /// by then; building the router may happen outside one).
    pub(crate) fn start_sweeping(self: &Arc<Self>) {
        self.sweeping.call_once(|| {
            let period = (self.idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
            tokio::spawn(sweep(Arc::downgrade(self), self.cancel.clone(), period));
        });
    }

    /// A request of the session `entry` has arrived: the session is in use until the
    /// returned guard is dropped.
    pub(crate) fn used(&self, entry: Arc<SessionEntry>) -> SessionUse {
        entry.last_use.store(self.now(), Ordering::Relaxed);
        entry.in_flight.fetch_add(1, Ordering::Relaxed);
        SessionUse {
            entry,
            base: self.base,
        }
    }

    /// Takes the session `id` out of the table, if it is there: the one way a session
    /// leaves it.
    fn remove(&self, id: &str) -> Option<Arc<SessionEntry>> {
        let entry = self
            .table
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id)?;
        self.retire(&entry);
        Some(entry)
    }

    /// An entry has left the table: it is closed, and its place free.
    fn retire(&self, entry: &SessionEntry) {
        entry.closed.store(true, Ordering::SeqCst);
        self.places.fetch_sub(1, Ordering::SeqCst);
    }

    /// Closes the sessions unused for the idle timeout.
    async fn close_idle(&self) {
        let now = self.now();
        let idle_ms = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        let mut idle = Vec::new();
        self.table
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, entry| {
                let unused = now.saturating_sub(entry.last_use.load(Ordering::Relaxed));
                let expired = entry.in_flight.load(Ordering::Relaxed) == 0 && unused >= idle_ms;
                if expired {
                    idle.push(entry.clone());
                }
                !expired
            });
        for entry in idle {
            self.retire(&entry);
            // A worker already gone is as good as closed.
            let _ = entry.handle.close().await;
        }
    }

    /// The call in a POST, if it is one this endpoint answers itself; otherwise the
    /// request, untouched, for rmcp.
    pub(crate) async fn fast_call(
        &self,
        parts: Parts,
        body: Bytes,
        session: &SessionUse,
    ) -> Result<FastCall, (Parts, Bytes)> {
        let Some(handler) = self.eligible(&parts.headers, &body, &session.entry) else {
            return Err((parts, body));
        };
        let Some(planned) = plan(handler, &body) else {
            return Err((parts, body));
        };
        // A session closed since the request found it (deleted, expired, at shutdown)
        // is rmcp's to answer: 404.
        if session.entry.closed.load(Ordering::SeqCst) {
            return Err((parts, body));
        }
        Ok(planned.into_call(handler.server.clone(), handler.peer.clone(), parts, false))
    }

    /// The handler of a session whose POST's headers allow the fast path, if the
    /// session has initialized and is still served.
    fn eligible<'a>(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        entry: &'a SessionEntry,
    ) -> Option<&'a SessionHandler> {
        // Only bodies that can be a call are parsed here; the rest is rmcp's to parse.
        if !may_be_call(body) {
            return None;
        }
        if !plain_post(headers, &self.allowed_hosts) {
            return None;
        }
        // Versions with an initialize handshake and without per-request headers to
        // check against the body; rmcp validates the rest.
        if let Some(version) = headers.get(PROTOCOL_VERSION_HEADER) {
            let version = version.to_str().ok()?;
            let legacy = ProtocolVersion::KNOWN_VERSIONS.iter().any(|known| {
                known.as_str() == version
                    && known.has_initialize()
                    && version < ProtocolVersion::STANDARD_HEADERS.as_str()
            });
            if !legacy {
                return None;
            }
        }
        let handler = entry.handler.get()?;
        (!handler.peer.is_transport_closed()).then_some(handler)
    }

    /// The worker handle of the live session `id`, or rmcp's error for a missing one.
    fn handle(&self, id: &SessionId) -> Result<LocalSessionHandle, LocalSessionManagerError> {
        self.read()
            .get(id)
            .map(|entry| entry.handle.clone())
            .ok_or_else(|| LocalSessionManagerError::SessionNotFound(id.clone()))
    }
}

/// rmcp's view of the sessions: the same entries, its worker handle in each. rmcp's
/// own in-memory manager does the same over a table of its own; this one's table is the
/// endpoint's.
impl SessionManager for HttpSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (place, owner) = OPENING
            .try_with(|opening| {
                let place = opening
                    .place
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                (place, opening.owner.clone())
            })
            .unwrap_or_default();
        match place {
            // The session takes the place over: it is given back when the entry leaves
            // the table.
            Some(mut place) => place.kept = true,
            // Opened outside a request the endpoint admitted (none is): counted all the
            // same, so the count stays exact.
            None => {
                self.places.fetch_add(1, Ordering::SeqCst);
            }
        }
        let id = new_session_id();
        let (handle, worker) = create_local_session(id.clone(), self.worker.clone());
        let entry = Arc::new(SessionEntry {
            handle,
            owner,
            closed: AtomicBool::new(false),
            last_use: AtomicU64::new(self.now()),
            in_flight: AtomicUsize::new(0),
            handler: OnceLock::new(),
        });
        self.table
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), entry);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.handle(id)?.initialize(message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.read().contains_key(id))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let Some(entry) = self.remove(id) else {
            return Ok(());
        };
        match entry.handle.close().await {
            // The worker already ended: nothing left to close.
            Ok(()) | Err(SessionError::SessionServiceTerminated) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let handle = self.handle(id)?;
        let receiver = handle.establish_request_wise_channel().await?;
        handle
            .push_message(message, receiver.http_request_id)
            .await?;
        Ok(Messages(receiver.inner))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.handle(id)?.push_message(message, None).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let receiver = self.handle(id)?.establish_common_channel().await?;
        Ok(Messages(receiver.inner))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let handle = self.handle(id)?;
        let receiver = handle.resume(last_event_id.parse()?).await?;
        Ok(Messages(receiver.inner))
    }
}

/// A session worker's messages for one stream, as a [`Stream`].
struct Messages(Receiver<ServerSseMessage>);

impl Stream for Messages {
    type Item = ServerSseMessage;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// A call this endpoint answers itself.
pub(crate) struct FastCall {
    server: McpServer,
    request: ClientRequest,
    context: RequestContext<RoleServer>,
    /// A self-contained request (protocol 2026-07-28), whose errors carry an HTTP status.
    self_contained: bool,
}

/// A fast call's answer: the HTTP status and the JSON-RPC message, as bytes.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) body: Vec<u8>,
}

impl FastCall {
    /// Runs the call and returns its JSON-RPC answer. The request goes through rmcp's
    /// own dispatch (`ServerHandler::handle_request`, then `McpServer::run_call`), as
    /// rmcp's service loop would send it, so the answer is shaped as on rmcp's path
    /// (for the protocol version the session negotiated, or the request names). Dropping
    /// the future cancels the call, as a cancelled request does on rmcp's path: its tool
    /// is told to stop and its places are freed.
    pub(crate) async fn answer(self) -> Result<Answer, serde_json::Error> {
        let Self {
            server,
            request,
            context,
            self_contained,
        } = self;
        let id = context.id.clone();
        let _cancel_when_dropped = context.ct.clone().drop_guard();
        let message = match Service::handle_request(&server, request, context).await {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        let status = if self_contained {
            self_contained_status(&message)
        } else {
            StatusCode::OK
        };
        // Sized for a typical answer: grown from serde_json's 128 bytes, it was copied
        // several times on the way.
        let mut body = Vec::with_capacity(ANSWER_CAPACITY);
        serde_json::to_writer(&mut body, &message)?;
        Ok(Answer { status, body })
    }
}

/// The HTTP status of a self-contained request's answer, as rmcp's stateless path gives
/// it: the errors the protocol tells a client by status are 400 and 404, any other
/// answer 200. (A request whose `_meta` lacks what 2026-07-28 requires never gets here.)
fn self_contained_status(message: &ServerJsonRpcMessage) -> StatusCode {
    let ServerJsonRpcMessage::Error(error) = message else {
        return StatusCode::OK;
    };
    match error.error.code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// A request of a session, in use until dropped.
pub(crate) struct SessionUse {
    entry: Arc<SessionEntry>,
    base: Instant,
}

impl SessionUse {
    /// rmcp's worker handle for the session.
    pub(crate) fn handle(&self) -> &LocalSessionHandle {
        &self.entry.handle
    }
}

impl Drop for SessionUse {
    fn drop(&mut self) {
        self.entry
            .last_use
            .store(millis_since(self.base), Ordering::Relaxed);
        self.entry.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A call's pieces, as rmcp's service loop takes them apart.
pub(super) struct Planned {
    id: RequestId,
    request: CallToolRequest,
    pub(super) meta: RequestMetaObject,
}

impl Planned {
    /// The call's parameters.
    pub(super) fn params_mut(&mut self) -> &mut CallToolRequestParams {
        &mut self.request.params
    }

    /// The call, to be run by `server` with `peer`, its request's `parts` in its
    /// extensions as rmcp puts them there.
    pub(super) fn into_call(
        self,
        server: McpServer,
        peer: Peer<RoleServer>,
        parts: Parts,
        self_contained: bool,
    ) -> FastCall {
        let Self {
            id,
            mut request,
            meta,
        } = self;
        let mut extensions = std::mem::take(&mut request.extensions);
        extensions.insert(parts);
        let mut context = RequestContext::new(id, peer);
        context.meta = meta;
        context.extensions = extensions;
        FastCall {
            server,
            request: ClientRequest::CallToolRequest(request),
            context,
            self_contained,
        }
    }
}

/// A `tools/call` request as sent. rmcp reads one through flattened structs, which
/// buffers every key and value before reading them again (callgrind: the largest cost
/// of a call here); this reads the same fields directly. What it cannot read (a
/// duplicate key, say) goes to rmcp, which answers as it would anyway.
#[derive(Deserialize)]
struct WireCall {
    // Read to be checked ("2.0", "tools/call"), then not needed.
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    #[serde(rename = "method")]
    _method: CallToolRequestMethod,
    params: CallToolRequestParams,
}

/// The call in `body`, if it is one request (not a batch) of `tools/call` without
/// answers to input the server asked for (those belong to rmcp's multi-round calls).
pub(super) fn read_call(body: &[u8]) -> Option<Planned> {
    // rmcp reads a message as each kind of message, and a request as each kind of
    // request, in turn: a `tools/call` is read here as one directly. A body naming a
    // result or an error too is not a plain request; rmcp classifies (and refuses) it.
    if contains(body, b"\"result\"") || contains(body, b"\"error\"") {
        return None;
    }
    let WireCall { id, mut params, .. } = serde_json::from_slice(body).ok()?;
    if params.input_responses.is_some() || params.request_state.is_some() {
        return None;
    }
    // As rmcp's service loop hands a request to its handler: the `_meta` in the
    // context, not in the request.
    let meta = params.meta.take().unwrap_or_default();
    Some(Planned {
        id,
        request: CallToolRequest::new(params),
        meta,
    })
}

/// The call in `body`, if it is a plain `tools/call` of a 2025 session that the
/// session's server can answer without its client.
fn plan(handler: &SessionHandler, body: &[u8]) -> Option<Planned> {
    let mut planned = read_call(body)?;
    // A request that states its own protocol version follows the stateless lifecycle
    // (see `stateless`).
    if planned.meta.protocol_version().is_some() {
        return None;
    }
    handler
        .server
        .runs_without_client(planned.params_mut())
        .then_some(planned)
}

/// Whether `needle` (which starts with a quote) is in `haystack`. Only the places
/// holding its first byte are compared: a body has few quotes, and comparing at every
/// byte cost a `memcmp` call each.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    haystack
        .iter()
        .enumerate()
        .filter(|&(_, &byte)| byte == first)
        .any(|(at, _)| haystack[at + 1..].starts_with(rest))
}

/// The `Host` values a fast path accepts (empty: any); others go to rmcp, which
/// refuses what it does not allow.
pub(super) struct AllowedHosts(Vec<Authority>);

impl AllowedHosts {
    pub(super) fn new(allowed: &[String]) -> Self {
        Self(
            allowed
                .iter()
                .map(|host| Authority::allowed(host))
                .collect(),
        )
    }

    fn allow(&self, headers: &HeaderMap) -> bool {
        let Some(host) = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .and_then(Authority::parse)
        else {
            return false;
        };
        self.0.is_empty()
            || self.0.iter().any(|allowed| {
                allowed.host == host.host && allowed.port.is_none_or(|port| host.port == Some(port))
            })
    }
}

/// Whether a POST's headers are plain enough for a fast path: no `Origin` (browser
/// requests are for rmcp to check and refuse), a host plainly allowed, a JSON body and
/// an `Accept` naming both kinds of answer, as rmcp requires.
pub(super) fn plain_post(headers: &HeaderMap, hosts: &AllowedHosts) -> bool {
    !headers.contains_key(header::ORIGIN)
        && hosts.allow(headers)
        && is_json(headers)
        && accepts_json_and_events(headers)
}

/// Whether `body` may hold a `tools/call` request: only those are parsed by a fast path.
pub(super) fn may_be_call(body: &[u8]) -> bool {
    contains(body, b"\"tools/call\"")
}

/// Whether the body is declared JSON, as rmcp requires.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|kind| {
            kind.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// Whether the client accepts both a JSON and an event-stream answer, as rmcp requires
/// of every POST. Accept values with parameters (weights) are left to rmcp.
fn accepts_json_and_events(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        if value.contains([';', '"']) {
            return false;
        }
        for kind in value.split(',').map(str::trim) {
            json |= kind.eq_ignore_ascii_case("application/json");
            events |= kind.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && events
}

/// Closes idle sessions every `period` until the endpoint is gone or shut down.
async fn sweep(sessions: Weak<HttpSessions>, cancel: CancellationToken, period: Duration) {
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = cancel.cancelled() => return,
        }
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        sessions.close_idle().await;
    }
}

// Its calls may now be answered here, by `server` with `peer`.
impl SessionObserver for HttpSessions {
    /// The client initialized the session whose `initialized` notification carried
    /// `parts`: its calls may now be answered here, by `server` with `peer`.
    fn initialized(&self, parts: &Parts, server: McpServer, peer: Peer<RoleServer>) {
        let Some(entry) = self.find(&parts.headers) else {
            return;
        };
        let _ = entry.handler.set(SessionHandler { server, peer });
    }
}

#[cfg(test)]
mod tests {
    use crate::http::HttpOptions;
    use crate::http::auth::{HttpAuth, StaticTokens};
    use crate::server::McpServer;
    use crate::server::session::SESSION_HEADER;
    use serde_json::json;
    use std::time::Duration;
    use toolwright_core::{Principal, ToolSet};

    /// The endpoint served on loopback as `options` say, with its session table.
    async fn serve(
        options: HttpOptions,
    ) -> (String, std::sync::Arc<super::HttpSessions>, reqwest::Client) {
        let options = options.with_auth(HttpAuth::new(
            StaticTokens::new().with_token("alice-token", Principal::new("alice")),
        ));
        let (router, sessions) = McpServer::new(ToolSet::new()).endpoint(options).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        (url, sessions.unwrap(), crate::tls::http_client().unwrap())
    }

    fn request(
        http: &reqwest::Client,
        method: reqwest::Method,
        url: &str,
    ) -> reqwest::RequestBuilder {
        http.request(method, url)
            .bearer_auth("alice-token")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
    }

    /// Opens a session; its id.
    async fn open(http: &reqwest::Client, url: &str) -> String {
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        }});
        let reply = request(http, reqwest::Method::POST, url)
            .body(initialize.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        let id = reply.headers()[SESSION_HEADER].to_str().unwrap().to_owned();
        // Read to its end: the answer is in it.
        reply.bytes().await.unwrap();
        id
    }

    /// Waits, up to a bound on a hang, until `condition` holds.
    async fn eventually(what: &str, condition: impl Fn() -> bool) {
        let waited = tokio::time::timeout(Duration::from_secs(60), async {
            while !condition() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        waited
            .await
            .unwrap_or_else(|_| panic!("never happened: {what}"));
    }

    #[tokio::test]
    async fn no_owner_outlives_its_session() {
        // Deleted by its client.
        let (url, sessions, http) = serve(HttpOptions::default()).await;
        let (kept, deleted) = (open(&http, &url).await, open(&http, &url).await);
        assert_eq!((sessions.read().len(), sessions.owned()), (2, 2));
        let reply = request(&http, reqwest::Method::DELETE, &url)
            .header(SESSION_HEADER, &deleted)
            .send()
            .await
            .unwrap();
        assert!(reply.status().is_success(), "{reply:?}");
        assert_eq!((sessions.read().len(), sessions.owned()), (1, 1));
        assert!(sessions.read().contains_key(kept.as_str()));

        // Expired while idle.
        let idle = HttpOptions::default().with_session_idle_timeout(Duration::from_millis(100));
        let (url, sessions, http) = serve(idle).await;
        open(&http, &url).await;
        assert_eq!(sessions.owned(), 1);
        eventually("the idle session is closed", || {
            sessions.read().is_empty() && sessions.owned() == 0
        })
        .await;

        // Ended at shutdown.
        let options = HttpOptions::default();
        let shutdown = options.cancel.clone();
        let (url, sessions, http) = serve(options).await;
        open(&http, &url).await;
        open(&http, &url).await;
        assert_eq!(sessions.owned(), 2);
        shutdown.cancel();
        eventually("the sessions end with the server", || {
            sessions.read().is_empty()
        })
        .await;
        assert_eq!(sessions.owned(), 0);
        assert_eq!(sessions.places.load(super::Ordering::SeqCst), 0);
    }
}

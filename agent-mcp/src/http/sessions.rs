//! The sessions of a stateful Streamable HTTP endpoint, as the endpoint sees them: when
//! each was last used (the endpoint closes idle ones itself, since it sees every request
//! and rmcp's session worker does not), and, once a session has initialized, the
//! handler and peer its calls run with.
//!
//! With those, a plain `tools/call` POST whose tool cannot need its client mid-call is
//! answered here with an `application/json` response: it runs through rmcp's handler
//! dispatch and [`McpServer::run_call`] as on rmcp's path, skipping rmcp's session
//! worker, service loop and event stream. Anything else (other methods, batches, a tool that reads its
//! context or needs approval, unusual headers) goes to rmcp.

use crate::server::McpServer;
use crate::server::session::{SessionObserver, session_id};
use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use rmcp::Service;
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientRequest, ErrorCode,
    JsonRpcVersion2_0, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Once, OnceLock, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// The room a call's answer is written into at first.
const ANSWER_CAPACITY: usize = 1024;

/// The sessions of one stateful endpoint.
pub(crate) struct HttpSessions {
    manager: Arc<LocalSessionManager>,
    table: RwLock<HashMap<SessionId, Arc<SessionEntry>>>,
    /// Entries past this many are pruned of ended sessions at once (the sweep prunes
    /// them too, but only every quarter of the idle timeout).
    max_entries: usize,
    idle: Duration,
    /// The clock stamps count from.
    base: Instant,
    sweeping: Once,
    cancel: CancellationToken,
    /// `Host` values the fast path accepts; others go to rmcp.
    allowed_hosts: AllowedHosts,
}

/// One live session.
struct SessionEntry {
    /// Milliseconds since `base` at the last request's start or end.
    last_use: AtomicU64,
    /// The MCP session's POSTs being answered: it is not idle while one runs.
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
    /// A session last used `now`, with nothing in flight and not yet initialized.
    fn new(now: u64) -> Arc<Self> {
        Arc::new(Self {
            last_use: AtomicU64::new(now),
            in_flight: AtomicUsize::new(0),
            handler: OnceLock::new(),
        })
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

impl HttpSessions {
    pub(crate) fn new(
        manager: Arc<LocalSessionManager>,
        max_sessions: usize,
        idle: Duration,
        allowed_hosts: &[String],
        cancel: CancellationToken,
    ) -> Self {
        Self {
            manager,
            table: RwLock::default(),
            max_entries: max_sessions.saturating_mul(2).max(64),
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

    fn entry(&self, id: &str) -> Option<Arc<SessionEntry>> {
        self.table
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// Starts closing idle sessions, once, from the first request (a runtime exists
    /// by then; building the router may happen outside one).
    pub(crate) fn start_sweeping(self: &Arc<Self>) {
        self.sweeping.call_once(|| {
            let period = (self.idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
            tokio::spawn(sweep(Arc::downgrade(self), self.cancel.clone(), period));
        });
    }

    /// A request of the session in `headers` has arrived: the session is in use until
    /// the returned guard is dropped.
    pub(crate) fn used(&self, headers: &HeaderMap) -> Option<SessionUse> {
        let entry = self.entry(session_id(headers)?)?;
        entry.last_use.store(self.now(), Ordering::Relaxed);
        entry.in_flight.fetch_add(1, Ordering::Relaxed);
        Some(SessionUse {
            entry,
            base: self.base,
        })
    }

    /// rmcp answered a request without a session by opening one.
    pub(crate) async fn opened(&self, response: &HeaderMap) {
        let Some(id) = session_id(response) else {
            return;
        };
        let entry = SessionEntry::new(self.now());
        let full = self
            .table
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
            >= self.max_entries;
        if full {
            // Sessions that ended since the last sweep are forgotten now, so the table
            // never holds many more entries than the sessions cap allows.
            let live: HashSet<SessionId> =
                self.manager.sessions.read().await.keys().cloned().collect();
            self.table
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|id, _| live.contains(id));
        }
        self.table
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(SessionId::from(id), entry);
    }

    /// The session in `headers` was closed by its client.
    pub(crate) fn closed(&self, headers: &HeaderMap) {
        if let Some(id) = session_id(headers) {
            self.table
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(id);
        }
    }

    /// Closes the sessions unused for the idle timeout, and forgets ended ones.
    async fn close_idle(&self) {
        let live: HashSet<SessionId> = self.manager.sessions.read().await.keys().cloned().collect();
        let now = self.now();
        let idle_ms = u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX);
        let mut idle = Vec::new();
        {
            let mut table = self.table.write().unwrap_or_else(PoisonError::into_inner);
            table.retain(|id, _| live.contains(id));
            for id in live {
                // A session the endpoint did not see open is counted from now.
                let entry = table
                    .entry(id.clone())
                    .or_insert_with(|| SessionEntry::new(now));
                let unused = now.saturating_sub(entry.last_use.load(Ordering::Relaxed));
                if entry.in_flight.load(Ordering::Relaxed) == 0 && unused >= idle_ms {
                    idle.push(id);
                }
            }
            for id in &idle {
                table.remove(id);
            }
        }
        for id in idle {
            // Already gone is as good as closed.
            let _ = self.manager.close_session(&id).await;
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
        // A session closed a moment ago (deleted, expired, at shutdown) is rmcp's to
        // answer: 404.
        let live = match session_id(&parts.headers) {
            Some(id) => self.manager.sessions.read().await.contains_key(id),
            None => false,
        };
        if !live {
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
        let Some(entry) = session_id(&parts.headers).and_then(|id| self.entry(id)) else {
            return;
        };
        let _ = entry.handler.set(SessionHandler { server, peer });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::session::SESSION_HEADER;
    use axum::http::HeaderValue;

    #[tokio::test]
    async fn the_table_holds_no_more_than_the_sessions_cap_allows() {
        let manager = Arc::new(LocalSessionManager::default());
        let sessions = HttpSessions::new(
            manager.clone(),
            10,
            Duration::from_secs(300),
            &[],
            CancellationToken::new(),
        );
        // A session as rmcp opens one and the endpoint sees it opened, with its
        // transport (the session lives while it is held).
        let open = async || {
            let (id, transport) = manager.create_session().await.unwrap();
            let mut headers = HeaderMap::new();
            headers.insert(SESSION_HEADER, HeaderValue::from_str(&id).unwrap());
            sessions.opened(&headers).await;
            (id, transport)
        };
        // Many sessions opened and ended one after another, none swept.
        for _ in 0..200 {
            let (id, _transport) = open().await;
            manager.close_session(&id).await.unwrap();
        }
        let held = sessions.table.read().unwrap().len();
        assert!(held <= sessions.max_entries, "{held} entries");
        // A live session is kept through the pruning.
        let (live, _live_transport) = open().await;
        for _ in 0..100 {
            let (id, _transport) = open().await;
            manager.close_session(&id).await.unwrap();
        }
        assert!(sessions.entry(&live).is_some());
        assert!(sessions.table.read().unwrap().len() <= sessions.max_entries);
    }
}

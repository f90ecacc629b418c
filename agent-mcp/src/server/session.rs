//! What identifies a client session to the protocol layer: the Streamable HTTP session
//! header a request carries (none over stdio, where the connection is the session), and
//! the hook through which a transport hears that a session's client has initialized.

use axum::http::HeaderMap;
use axum::http::request::Parts;
use rmcp::service::{Peer, RequestContext, RoleServer};
use std::sync::{Arc, LazyLock};

use super::McpServer;

/// The header that names a Streamable HTTP session.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The session `headers` name, if they name one readably.
pub(crate) fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_HEADER)?.to_str().ok()
}

/// The session a request belongs to, as a call's `ToolContext` names it; empty over
/// stdio, where the connection is the session.
pub(crate) fn session_key(context: &RequestContext<RoleServer>) -> Arc<str> {
    // Outside HTTP there is no session id; one shared empty id saves an allocation a call.
    static NONE: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from(""));
    match context
        .extensions
        .get::<Parts>()
        .and_then(|parts| session_id(&parts.headers))
    {
        Some(id) => Arc::from(id),
        None => NONE.clone(),
    }
}

/// A transport's table of sessions, told when a session's client has initialized (so
/// that the transport may answer that session's plain calls itself). Implemented by the
/// HTTP endpoint; the server holds it weakly, since the table holds the server.
pub(crate) trait SessionObserver: Send + Sync {
    /// The client initialized the session whose `initialized` notification carried
    /// `parts`: `server` with `peer` serves it.
    fn initialized(&self, parts: &Parts, server: McpServer, peer: Peer<RoleServer>);
}

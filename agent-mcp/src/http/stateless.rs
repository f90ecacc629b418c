//! The fast path for self-contained requests (protocol 2026-07-28): a `tools/call` that
//! names its protocol version and client in its `_meta`, with no session.
//!
//! rmcp serves each such request with a service of its own: a new server instance, a
//! one-message transport, a service loop and a task, then the answer read back from a
//! channel. A plain call whose tool cannot need its client mid-call is answered here
//! instead, through the same dispatch (`ServerHandler::handle_request`, then
//! [`McpServer`]'s call), with one long-lived peer that no call ever talks through.
//! Everything a request needs that this path does not do goes to rmcp untouched: a
//! header that is missing, repeated, encoded or does not match the body (rmcp answers
//! the mismatch), a tool declaring `x-mcp-header` parameters, a `_meta` without what
//! 2026-07-28 requires, answers to input the server asked for (`requestState`,
//! `inputResponses`), a progress token, and any tool that may ask its client (which is
//! where a missing client capability or an `InputRequiredResult` comes from).

use super::sessions::{AllowedHosts, FastCall, Planned, may_be_call, plain_post, read_call};
use crate::server::McpServer;
use crate::server::session::SESSION_HEADER;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use futures::{SinkExt, sink, stream};
use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams, ProtocolVersion};
use rmcp::service::{Peer, RoleServer, RunningService, serve_directly_with_ct};
use std::convert::Infallible;
use std::sync::OnceLock;
use tokio_util::sync::CancellationToken;

const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const PARAM_HEADER_PREFIX: &str = "mcp-param-";
/// How SEP-2243 marks a header value written in Base64; such values go to rmcp, which
/// decodes them.
const BASE64_PREFIX: &str = "=?base64?";

/// The self-contained calls of one endpoint.
pub(crate) struct StatelessCalls {
    /// The instance calls run on: a request of 2026-07-28 carries its client's
    /// capabilities and log level itself, so nothing of it is kept between calls.
    server: McpServer,
    allowed_hosts: AllowedHosts,
    cancel: CancellationToken,
    /// Started with the first call (a runtime exists by then; building the router may
    /// happen outside one), ended with the endpoint or at shutdown.
    peer: OnceLock<RunningService<RoleServer, McpServer>>,
}

impl StatelessCalls {
    pub(crate) fn new(
        server: &McpServer,
        allowed_hosts: &[String],
        cancel: CancellationToken,
    ) -> Self {
        Self {
            server: server.for_new_session(),
            allowed_hosts: AllowedHosts::new(allowed_hosts),
            cancel,
            peer: OnceLock::new(),
        }
    }

    /// The call a POST with `parts` runs, planned by [`plan`](Self::plan).
    pub(crate) fn call(&self, planned: Planned, parts: Parts) -> FastCall {
        planned.into_call(self.server.clone(), self.peer().clone(), parts, true)
    }

    /// The call in a POST, if it is a self-contained one answered here; otherwise
    /// (`None`) the request is rmcp's.
    pub(crate) fn plan(&self, headers: &HeaderMap, body: &[u8]) -> Option<Planned> {
        if !may_be_call(body)
            || headers.contains_key(SESSION_HEADER)
            || !plain_post(headers, &self.allowed_hosts)
            || sole(headers, PROTOCOL_VERSION_HEADER)? != ProtocolVersion::V_2026_07_28.as_str()
            || sole(headers, METHOD_HEADER)? != "tools/call"
        {
            return None;
        }
        let mut planned = read_call(body)?;
        let meta = &planned.meta;
        // The version the request names is the one its header names, and its `_meta`
        // holds what 2026-07-28 requires; rmcp answers any other request's errors.
        if meta.protocol_version()? != ProtocolVersion::V_2026_07_28
            || !meta
                .missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
            || meta.get_progress_token().is_some()
        {
            return None;
        }
        let name = sole(headers, NAME_HEADER)?;
        let params = planned.params_mut();
        if name != params.name || name.starts_with(BASE64_PREFIX) {
            return None;
        }
        let param_headers = headers
            .keys()
            .any(|key| key.as_str().starts_with(PARAM_HEADER_PREFIX));
        if param_headers || self.server.declares_header_params(name) {
            return None;
        }
        self.server.runs_without_client(params).then_some(planned)
    }

    /// The peer every self-contained call's context holds. No call answered here talks
    /// to its client (their tools cannot), so what it would send goes nowhere.
    fn peer(&self) -> &Peer<RoleServer> {
        self.peer
            .get_or_init(|| {
                let mut client = InitializeRequestParams::new(
                    ClientCapabilities::default(),
                    Implementation::default(),
                );
                client.protocol_version = ProtocolVersion::V_2026_07_28;
                let transport = (
                    sink::drain().sink_map_err(|never: Infallible| match never {}),
                    stream::pending(),
                );
                serve_directly_with_ct(
                    self.server.clone(),
                    transport,
                    Some(client),
                    self.cancel.child_token(),
                )
            })
            .peer()
    }
}

/// The one value of header `name`, as text; `None` if absent, repeated or not text.
fn sole<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

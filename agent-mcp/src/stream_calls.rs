//! `tools/call` answered on a stream transport without rmcp's service loop.
//!
//! rmcp parses every message into its own types, routes it through its service loop and
//! a task of its own, and serializes the answer back; for a `tools/call` that is most of
//! a round trip's cost. The stream transport has already parsed the line into a
//! [`Value`] (to check it), so a plain call is taken from that value, run through the
//! same [`McpServer::run_call`] rmcp's handler runs, and its response is written here,
//! in the same JSON rmcp writes. Everything else, including any call that looks unusual,
//! still goes to rmcp.

use crate::server::McpServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, NumberOrString, ProgressToken, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the session gives the fast path once it has initialized: the server instance
/// rmcp serves (so its log level and connection state are the ones rmcp's handler
/// uses) and the session's peer, through which a call's progress, logs and requests to
/// the client go out.
pub(crate) struct StreamCalls {
    server: Arc<McpServer>,
    peer: Peer<RoleServer>,
}

impl StreamCalls {
    pub(crate) fn new(server: Arc<McpServer>, peer: Peer<RoleServer>) -> Self {
        Self { server, peer }
    }
}

/// A line the fast path may take.
pub(crate) enum Fast {
    /// A `tools/call` request in its plainest form.
    Call(Call),
    /// `notifications/cancelled` for the request with this id.
    Cancel(RequestId),
}

/// A `tools/call` request taken from its line.
pub(crate) struct Call {
    id: RequestId,
    params: CallToolRequestParams,
    progress: Option<ProgressToken>,
}

/// The call or cancellation `message` is, when it has exactly the shape the fast path
/// answers as rmcp would; `None` sends it to rmcp. Only plain shapes are taken: any
/// other member, or a member of another type, leaves the message (and its error, if it
/// has one) to rmcp.
pub(crate) fn classify(message: Value) -> Option<Fast> {
    let Value::Object(mut message) = message else {
        return None;
    };
    if message.get("jsonrpc")?.as_str()? != "2.0" {
        return None;
    }
    let Value::Object(mut params) = message.remove("params")? else {
        return None;
    };
    match message.get("method")?.as_str()? {
        "tools/call" if message.len() == 3 => {
            let id = request_id(message.get("id")?)?;
            call(id, &mut params).map(Fast::Call)
        }
        "notifications/cancelled" if message.len() == 2 => {
            Some(Fast::Cancel(request_id(params.get("requestId")?)?))
        }
        _ => None,
    }
}

/// A call's parameters: `name`, optional `arguments` (an object) and optional `_meta`
/// holding at most a `progressToken`.
fn call(id: RequestId, params: &mut Map<String, Value>) -> Option<Call> {
    let mut progress = None;
    if let Some(meta) = params.remove("_meta") {
        let Value::Object(meta) = meta else {
            return None;
        };
        match meta.len() {
            0 => {}
            1 => progress = Some(ProgressToken(request_id(meta.get("progressToken")?)?)),
            _ => return None,
        }
    }
    let arguments = match params.remove("arguments") {
        None => None,
        Some(Value::Object(arguments)) => Some(arguments),
        Some(_) => return None,
    };
    let Value::String(name) = params.remove("name")? else {
        return None;
    };
    if !params.is_empty() {
        return None;
    }
    let mut params = CallToolRequestParams::new(name);
    params.arguments = arguments;
    Some(Call {
        id,
        params,
        progress,
    })
}

/// A JSON-RPC id as rmcp reads one: a string, or an integer that fits an `i64`.
fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(id) => Some(NumberOrString::String(id.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The fast calls of one session that have not answered yet.
pub(crate) struct InFlight {
    /// Cancelled when the session ends; every call's token is its child.
    session: CancellationToken,
    /// Each running call's token, and the number it was started under: a call
    /// cancelled by its client is removed, so its answer is dropped, as rmcp drops the
    /// answer of a request it cancelled, even when the client reused the id since.
    calls: HashMap<RequestId, (CancellationToken, u64)>,
    started: u64,
}

/// A fast call that has answered.
pub(crate) struct Finished {
    id: RequestId,
    started: u64,
    result: Result<rmcp::model::CallToolResult, ErrorData>,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        Self {
            session: CancellationToken::new(),
            calls: HashMap::new(),
            started: 0,
        }
    }

    /// The future that runs `call`, or `Err(call)` when a call with its id is running
    /// already (a client's mistake, left to rmcp).
    pub(crate) fn start(
        &mut self,
        fast: &StreamCalls,
        call: Call,
    ) -> Result<impl Future<Output = Finished> + Send + 'static, Call> {
        if self.calls.contains_key(&call.id) {
            return Err(call);
        }
        self.started += 1;
        let started = self.started;
        // As rmcp does for a request: a token of the call's own, under the session's.
        let ct = self.session.child_token();
        self.calls.insert(call.id.clone(), (ct.clone(), started));
        let mut context = RequestContext::new(call.id.clone(), fast.peer.clone());
        context.ct = ct;
        if let Some(progress) = call.progress {
            context.meta.set_progress_token(progress);
        }
        let server = fast.server.clone();
        Ok(async move {
            let result = server.run_call(call.params, context).await;
            Finished {
                id: call.id,
                started,
                result,
            }
        })
    }

    /// Cancels the running call `id`; `false` when no fast call has that id.
    pub(crate) fn cancel(&mut self, id: &RequestId) -> bool {
        match self.calls.remove(id) {
            Some((ct, _)) => {
                ct.cancel();
                true
            }
            None => false,
        }
    }

    /// The response line of a call that answered, or `None` when its client cancelled it.
    pub(crate) fn finish(&mut self, finished: Finished) -> Option<Vec<u8>> {
        match self.calls.get(&finished.id) {
            Some((_, started)) if *started == finished.started => {
                self.calls.remove(&finished.id);
            }
            _ => return None,
        }
        let message = match finished.result {
            Ok(result) => ServerJsonRpcMessage::response(
                ServerResult::from(CallToolResponse::from(result)),
                finished.id,
            ),
            Err(error) => ServerJsonRpcMessage::error(error, Some(finished.id)),
        };
        let mut line = serde_json::to_vec(&message).unwrap_or_else(|e| {
            // rmcp's types serialize to JSON; this is a bug, and the client still hears.
            let error = ErrorData::internal_error(format!("response not serializable: {e}"), None);
            serde_json::to_vec(&ServerJsonRpcMessage::error(error, None)).unwrap_or_default()
        });
        line.push(b'\n');
        Some(line)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // The session is over: whatever still runs is told to stop.
        self.session.cancel();
    }
}

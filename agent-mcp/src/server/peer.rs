//! [`McpPeer`]: what a tool served over MCP can do with the client that called it.

use super::input::{CallInput, InputRequest};
use rmcp::model::{ClientResult, ErrorCode, GetExtensions, RequestId, ServerRequest};
use rmcp::service::{OriginatingRequestId, Peer, RequestContext, RoleServer};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolwright_core::{ToolError, exec::CallPermit};

/// The MCP client a call came from. While a tool runs under [`McpServer`](crate::McpServer),
/// its [`ToolContext`](toolwright_core::ToolContext) holds one as state: take it as a
/// `State<McpPeer>` parameter, or `ctx.state::<McpPeer>()`. Outside MCP there is none.
///
/// Tools use it for what only MCP offers: log messages to the client, and questions for
/// the client (an elicitation form for its user, sampling from its model, its roots).
/// Progress does not need it: `Progress`/`ToolContext::emit_progress` become
/// `notifications/progress` already.
///
/// # Asking the caller
///
/// [`ask`](Self::ask) and [`ask_all`](Self::ask_all) are the one way a tool asks, whatever
/// protocol version its client speaks; see [`InputRequest`] for the programming model
/// (in short: on MCP 2026-07-28 the tool runs again from the start with the answers, so
/// what it does before asking must be safe to repeat).
#[derive(Clone)]
pub struct McpPeer {
    peer: Peer<RoleServer>,
    min_level: Arc<Mutex<LogLevel>>,
    /// The call's answers and questions, on a request of protocol 2026-07-28 or later
    /// (multi-round-trip requests); `None` on older sessions, which are asked directly.
    input: Option<Arc<CallInput>>,
    /// What the request itself says about its client, when it carries its own client
    /// context (protocol 2026-07-28 and later, which has no session to remember it).
    request: Option<Arc<RequestClient>>,
}

/// The client context a self-contained request (protocol 2026-07-28) carries in its
/// `_meta`: what its client can do and which log messages it wants. Nothing is
/// remembered between such requests.
#[derive(Debug)]
pub(crate) struct RequestClient {
    /// `io.modelcontextprotocol/clientCapabilities`, as JSON.
    capabilities: Value,
    /// `io.modelcontextprotocol/logLevel`: without it, no log message is sent.
    log_level: Option<LogLevel>,
    /// The first capability the request's tool needed and the client had not declared:
    /// the request is then answered with `MissingRequiredClientCapabilityError`.
    missing: Mutex<Option<&'static str>>,
}

impl RequestClient {
    /// The client context of `context`'s request, if it carries its own (protocol
    /// 2026-07-28): `None` for a request of a 2025 session, whose client declared itself
    /// at `initialize`.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<Arc<Self>> {
        // The request's own version, or its session's: versions without `initialize`
        // are the self-contained ones.
        let self_contained = context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize());
        if !self_contained {
            return None;
        }
        let capabilities = context
            .meta
            .client_capabilities()
            .and_then(|caps| serde_json::to_value(caps).ok())
            .unwrap_or_default();
        let log_level = context
            .meta
            .log_level()
            .and_then(|level| serde_json::to_value(level).ok())
            .and_then(|level| level.as_str().and_then(LogLevel::parse));
        Some(Arc::new(Self {
            capabilities,
            log_level,
            missing: Mutex::new(None),
        }))
    }

    fn declares(&self, capability: &str) -> bool {
        self.capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }

    /// The error answering a request whose tool needed a capability its client did not
    /// declare, if it did.
    pub(crate) fn missing_capability(&self) -> Option<rmcp::ErrorData> {
        let capability = (*self.missing.lock().unwrap_or_else(|e| e.into_inner()))?;
        Some(missing_capability_error(capability))
    }
}

/// `MissingRequiredClientCapabilityError` (-32021) for `capability`: `data` names it as
/// a `ClientCapabilities` object, as the protocol defines.
fn missing_capability_error(capability: &str) -> rmcp::ErrorData {
    rmcp::ErrorData::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "this request needs the client capability `{capability}`, which its \
             `_meta` (io.modelcontextprotocol/clientCapabilities) does not declare"
        ),
        Some(json!({"requiredCapabilities": {capability: {}}})),
    )
}

/// The client capability a server-to-client request needs, by method.
fn capability_for(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// The call a tool's code runs for: the request it answers, and its place under the
/// server's limit on calls in flight.
#[derive(Clone)]
pub(crate) struct CallOrigin {
    pub(crate) request: RequestId,
    pub(crate) permit: CallPermit,
}

tokio::task_local! {
    /// The call whose tool runs in this task. A request the tool makes of its client
    /// belongs to that call (SEP-2260): over Streamable HTTP it then goes on the call's
    /// own response stream, which the client reads, rather than on the standalone stream,
    /// which a client need not open. rmcp marks this itself inside a request's handler,
    /// but its mark does not cross into the task that runs the tool.
    pub(crate) static CALL_ORIGIN: CallOrigin;
}

/// The syslog severities MCP's logging uses, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum LogLevel {
    /// Detailed debugging information.
    #[default]
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        [
            Self::Debug,
            Self::Info,
            Self::Notice,
            Self::Warning,
            Self::Error,
            Self::Critical,
            Self::Alert,
            Self::Emergency,
        ]
        .into_iter()
        .find(|level| level.as_str() == name)
    }
}

impl McpPeer {
    pub(crate) fn new(peer: Peer<RoleServer>, min_level: Arc<Mutex<LogLevel>>) -> Self {
        Self {
            peer,
            min_level,
            input: None,
            request: None,
        }
    }

    /// The peer of one call made over protocol 2026-07-28 or later, whose questions go
    /// back in the call's answer (`InputRequiredResult`) rather than to the client.
    pub(crate) fn with_input(mut self, input: Arc<CallInput>) -> Self {
        self.input = Some(input);
        self
    }

    /// The call's answers and questions, on a multi-round-trip request.
    pub(crate) fn input(&self) -> Option<&Arc<CallInput>> {
        self.input.as_ref()
    }

    /// The approval this call ran under, when the server asked for one through the
    /// client on MCP 2026-07-28 or later: who decided (the caller's principal, or
    /// `anonymous` without authentication), when, and the decision. The approval was
    /// carried, sealed, in the request's `requestState`.
    pub fn approval(&self) -> Option<toolwright_core::run::ApprovalRecord> {
        self.input.as_ref().and_then(|input| input.approval())
    }

    /// Asks the caller `question` and returns its answer (the client's result as JSON:
    /// an `ElicitResult`, a `CreateMessageResult`, a `ListRootsResult`).
    ///
    /// On a session of a protocol before 2026-07-28, the request goes to the client now
    /// and the call waits for its answer. On 2026-07-28 and later, the answer comes from
    /// the call's retry: the first time, `ask` records the question and fails with an
    /// error the tool should return (`?`); the server then answers the call with an
    /// `InputRequiredResult`, and the client calls again with its answers, which `ask`
    /// returns when the tool runs again.
    ///
    /// Fails, without asking, when the client did not declare the capability the
    /// question needs (`elicitation`, `sampling`, `roots`).
    pub async fn ask(&self, question: InputRequest) -> Result<Value, ToolError> {
        let mut answers = self.ask_all([question]).await?;
        answers
            .pop()
            .ok_or_else(|| ToolError::execution("no answer to the one question asked"))
    }

    /// Asks the caller several questions at once and returns their answers, in order.
    /// On MCP 2026-07-28 and later, they travel in one `InputRequiredResult`, so the
    /// client answers them in one round; on older sessions, they are sent one by one.
    /// Fails, asking nothing, when the client lacks a capability one of them needs.
    pub async fn ask_all(
        &self,
        questions: impl IntoIterator<Item = InputRequest>,
    ) -> Result<Vec<Value>, ToolError> {
        let questions: Vec<InputRequest> = questions.into_iter().collect();
        for question in &questions {
            let capability = question.capability();
            if !self.client_supports(capability) {
                return Err(ToolError::execution(format!(
                    "`{}` needs the MCP client's `{capability}` capability, which this client \
                     did not declare; it cannot answer the question `{}`",
                    question.method(),
                    question.key()
                )));
            }
        }
        match &self.input {
            Some(input) => input.answers_to(&questions),
            None => {
                let mut answers = Vec::with_capacity(questions.len());
                for question in questions {
                    let (method, params) = question.into_request();
                    answers.push(self.request(method, params).await?);
                }
                Ok(answers)
            }
        }
    }

    /// From here on, the call runs as a task: for a `#[tool(task = "on_demand")]` tool,
    /// which asks its caller on the call itself (with [`ask`](Self::ask)) and becomes a
    /// task only once it has its answers. See the [`tasks`](crate::tasks) module.
    ///
    /// On a plain call of MCP 2026-07-28 or later, from a client that supports tasks,
    /// this fails with an error the tool returns (`?`): the server answers the call with
    /// a task (`CreateTaskResult`) holding the answers given so far, and **runs the tool
    /// again from the start inside the task**, where its questions have their answers and
    /// this returns `Ok`. Everywhere else it returns `Ok` and the tool goes on: inside a
    /// task, on a call from a client that does not support tasks (the call stays a plain
    /// call), and on a session of an older protocol (where such a tool's call is a task
    /// from the start, asking inside it).
    ///
    /// A call that still waits on answers is answered with its questions, not a task.
    pub async fn continue_as_task(&self) -> Result<(), ToolError> {
        match &self.input {
            Some(input) => input.continue_as_task(),
            None => Ok(()),
        }
    }

    /// The peer of one self-contained request (protocol 2026-07-28), which answers for
    /// its client from what the request carries.
    pub(crate) fn for_request(mut self, client: Arc<RequestClient>) -> Self {
        self.request = Some(client);
        self
    }

    /// Sends a `notifications/message` log entry, unless the client asked for a higher
    /// minimum level: with `logging/setLevel` on a 2025 session; on protocol 2026-07-28,
    /// with the request's `logLevel`, and a request without one gets no log messages.
    /// Fails only when the connection is gone.
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) -> Result<(), ToolError> {
        let min = match &self.request {
            Some(request) => match request.log_level {
                Some(min) => min,
                None => return Ok(()),
            },
            None => *self.min_level.lock().unwrap_or_else(|e| e.into_inner()),
        };
        if level < min {
            return Ok(());
        }
        let notification = json!({
            "method": "notifications/message",
            "params": {"level": level.as_str(), "data": data.into()},
        });
        // Built from JSON rather than rmcp's typed logging API, which rmcp marks
        // deprecated (SEP-2577) although the 2025 protocol versions still use it.
        let notification = serde_json::from_value(notification)
            .map_err(|e| ToolError::execution(format!("log message not sendable: {e}")))?;
        self.peer
            .send_notification(notification)
            .await
            .map_err(|e| ToolError::execution(format!("the MCP client is gone: {e}")))
    }

    /// Sends a request to the client (`sampling/createMessage`, `elicitation/create`,
    /// `roots/list`, `ping`) and returns its result as JSON. Fails with the client's
    /// error, or when the client does not answer the method.
    ///
    /// Only sessions of protocols before 2026-07-28 take requests from the server; on
    /// later ones this fails. [`ask`](Self::ask) asks on every version.
    ///
    /// Made from the tool's own task, the request belongs to its call and travels with
    /// the call's response; from a task the tool spawned, it goes on the session's
    /// standalone stream. While the client answers (a person deciding, the client's
    /// model sampling), the call gives back its place under the server's limit on calls
    /// in flight, so calls waiting on their clients never starve calls that could run;
    /// it takes a place again before it goes on.
    ///
    /// On protocol 2026-07-28 a request that needs a capability its client did not
    /// declare (`sampling`, `elicitation`, `roots`) fails, and the call is answered with
    /// `MissingRequiredClientCapabilityError`; that protocol has no requests from server
    /// to client, so one the client can answer fails too, saying so.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ToolError> {
        if let Some(client) = &self.request {
            if let Some(capability) = capability_for(method)
                && !client.declares(capability)
            {
                client
                    .missing
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(capability);
                return Err(ToolError::execution(
                    missing_capability_error(capability).message,
                ));
            }
            return Err(ToolError::execution(format!(
                "`{method}` cannot be sent: on MCP 2026-07-28 a server does not send \
                 requests to its client"
            )));
        }
        let mut request: ServerRequest =
            serde_json::from_value(json!({"method": method, "params": params})).map_err(|e| {
                ToolError::invalid_arguments(format!("not a valid `{method}` request: {e}"))
            })?;
        let origin = CALL_ORIGIN.try_with(Clone::clone).ok();
        if let Some(origin) = &origin {
            request
                .extensions_mut()
                .insert(OriginatingRequestId(origin.request.clone()));
        }
        let sent = self.peer.send_request(request);
        let answered = match &origin {
            Some(origin) => origin.permit.released(sent).await,
            None => sent.await,
        };
        let result: ClientResult = answered.map_err(|e| {
            ToolError::execution(format!("the MCP client did not answer `{method}`: {e}"))
        })?;
        serde_json::to_value(result)
            .map_err(|e| ToolError::execution(format!("unreadable answer to `{method}`: {e}")))
    }

    /// Whether the client declared a capability (`"sampling"`, `"elicitation"`,
    /// `"roots"`): at initialization on a 2025 session; on protocol 2026-07-28, in the
    /// request's own `_meta`.
    pub fn client_supports(&self, capability: &str) -> bool {
        let declared = |caps: &Value| caps.get(capability).is_some_and(|c| !c.is_null());
        if let Some(input) = &self.input {
            return declared(input.capabilities());
        }
        if let Some(client) = &self.request {
            return client.declares(capability);
        }
        self.peer
            .peer_info()
            .and_then(|info| serde_json::to_value(&info.capabilities).ok())
            .is_some_and(|caps| declared(&caps))
    }
}

impl std::fmt::Debug for McpPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPeer").finish_non_exhaustive()
    }
}

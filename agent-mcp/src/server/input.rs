//! Asking the caller: one way for a tool (and for the server's approval) to put a
//! question to the MCP client (an elicitation form for its user, sampling from its model,
//! its roots), whatever protocol version the client speaks.
//!
//! On sessions of protocols before 2026-07-28 a question is a server-to-client request,
//! sent while the call waits ([`McpPeer::request`](crate::McpPeer::request)). From
//! 2026-07-28 the server may not send requests; a call that needs answers ends with an
//! `InputRequiredResult` listing its questions and a sealed `requestState`, and the
//! client calls again with its answers (`inputResponses`) and that state (multi-round-trip
//! requests, SEP-2322). The tool then runs again from the start, and this time its
//! questions have answers.
//!
//! Single use is kept by each server process: replicas behind one endpoint share the key
//! (so any of them opens a state) but not the record of states taken, so within a
//! state's lifetime a replay sent to another replica is not caught.
//!
//! The state is sealed with HMAC-SHA256 by rmcp's `RequestStateCodec`: it binds
//! associated data (the caller's principal, the tool's name and its arguments) and an
//! expiry, which the core's run-state seal does not. A state is refused when it was
//! changed, sealed by another key, made for another principal or another call, expired,
//! or already used (each state answers one retry; the server remembers the states it took
//! until they expire). Approval answers are taken only with a state that asked for them.

use super::McpServer;
use super::access;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, InputRequest as WireRequest, InputRequests,
    InputRequiredResult, ProtocolVersion, RequestStateCodec, RequestStateError, SealOptions,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use toolwright_core::{
    AgentError, AgentResult, ToolError,
    run::{ApprovalRecord, ApprovalVerdict},
};

/// The key of the server's own approval question. Tools' keys may not start with
/// [`RESERVED_PREFIX`], so a tool can never ask (or be answered) in its place.
pub(crate) const APPROVAL_KEY: &str = "toolwright/approval";
const RESERVED_PREFIX: &str = "toolwright/";

/// The most states taken and not yet expired that a server remembers (to refuse their
/// replay). Beyond it, retries are refused until some expire: memory stays bounded.
const MAX_REMEMBERED_STATES: usize = 100_000;

/// The format of the sealed state's payload.
const STATE_VERSION: u8 = 1;

/// A question a tool asks its caller: its key (which names the answer on the wire), and
/// the request: an elicitation form, a sampling request, or a roots listing.
///
/// # The programming model
///
/// A tool asks with [`McpPeer::ask`](crate::McpPeer::ask) (or
/// [`McpPeer::ask_all`](crate::McpPeer::ask_all), several questions in one round) and
/// goes on with the answer:
///
/// ```no_run
/// use serde_json::json;
/// use toolwright_core::{State, ToolError, tool};
/// use toolwright_mcp::{InputRequest, McpPeer};
///
/// /// Greets the user by the name they give.
/// #[tool]
/// async fn greet(peer: State<McpPeer>) -> Result<String, ToolError> {
///     let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
///     let answer = peer.ask(InputRequest::elicit("name", "What is your name?", schema)).await?;
///     Ok(format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("stranger")))
/// }
/// ```
///
/// On a session of a protocol before 2026-07-28, `ask` sends the request to the client
/// and waits. From 2026-07-28, the first time the tool runs, `ask` records the question
/// and returns an error, which the tool returns with `?`; the server answers the call
/// with an `InputRequiredResult`, the client answers and calls again, and **the tool runs
/// again from the start**, where `ask` now returns the answer (answers given in earlier
/// rounds stay available in later ones). So what a tool does before its last question
/// must be safe to repeat: read, compute, ask; write only once every answer is in.
///
/// A question's key must be unique within the call; keys starting with `toolwright/`
/// are the server's own.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    key: String,
    method: &'static str,
    params: Value,
}

impl InputRequest {
    /// An elicitation form: `message` for the client's user and the `requested_schema`
    /// (a flat JSON Schema object) of what they fill in. The answer is an `ElicitResult`:
    /// `{"action": "accept" | "decline" | "cancel", "content": {...}}`.
    pub fn elicit(
        key: impl Into<String>,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Self {
        Self {
            key: key.into(),
            method: "elicitation/create",
            params: json!({"mode": "form", "message": message.into(), "requestedSchema": requested_schema}),
        }
    }

    /// A sampling request to the client's model, `params` as MCP's
    /// `sampling/createMessage` takes them (`messages`, `maxTokens`, ...). The answer is a
    /// `CreateMessageResult`: `{"role", "content", "model", ...}`.
    pub fn sample(key: impl Into<String>, params: Value) -> Self {
        Self {
            key: key.into(),
            method: "sampling/createMessage",
            params,
        }
    }

    /// The client's roots. The answer is a `ListRootsResult`: `{"roots": [{"uri", ...}]}`.
    pub fn list_roots(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            method: "roots/list",
            params: json!({}),
        }
    }

    /// The key naming the question and its answer.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The MCP method the question is asked with.
    pub fn method(&self) -> &'static str {
        self.method
    }

    /// The client capability the question needs.
    pub(crate) fn capability(&self) -> &'static str {
        capability_of(self.method)
    }

    pub(crate) fn into_request(self) -> (&'static str, Value) {
        (self.method, self.params)
    }

    /// The question as it travels in an `InputRequiredResult`.
    fn wire(&self) -> Result<WireRequest, ToolError> {
        serde_json::from_value(json!({"method": self.method, "params": self.params})).map_err(|e| {
            ToolError::invalid_arguments(format!(
                "the question `{}` is not a valid `{}` request: {e}",
                self.key, self.method
            ))
        })
    }
}

fn capability_of(method: &str) -> &'static str {
    match method {
        "sampling/createMessage" => "sampling",
        "roots/list" => "roots",
        _ => "elicitation",
    }
}

/// Whether `answer` has the shape of a client's result to `method`.
fn answers_method(method: &str, answer: &Value) -> bool {
    match method {
        "elicitation/create" => answer
            .get("action")
            .and_then(Value::as_str)
            .is_some_and(|action| matches!(action, "accept" | "decline" | "cancel")),
        "sampling/createMessage" => answer.get("role").is_some() && answer.get("content").is_some(),
        "roots/list" => answer.get("roots").is_some_and(Value::is_array),
        _ => false,
    }
}

/// How a server seals the state of calls that wait on their caller's answers
/// (MCP 2026-07-28 multi-round-trip requests).
#[derive(Clone)]
pub struct InputOptions {
    key: Option<Arc<[u8]>>,
    ttl: Duration,
}

impl Default for InputOptions {
    fn default() -> Self {
        Self {
            key: None,
            ttl: Duration::from_secs(15 * 60),
        }
    }
}

impl fmt::Debug for InputOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the key.
        f.debug_struct("InputOptions")
            .field("state_key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("state_ttl", &self.ttl)
            .finish()
    }
}

impl InputOptions {
    /// Seals with `key` (at least 32 bytes of secret, high-entropy material). Give every
    /// replica behind one endpoint the same key, so that any of them can take a retry.
    /// Without one, each server makes a random key of its own at start.
    pub fn state_key(mut self, key: impl Into<Vec<u8>>) -> AgentResult<Self> {
        let key: Vec<u8> = key.into();
        if key.len() < RequestStateCodec::MIN_KEY_LENGTH {
            return Err(AgentError::InvalidState(format!(
                "the request state key is {} bytes; it must be at least {} bytes of secret, \
                 random material",
                key.len(),
                RequestStateCodec::MIN_KEY_LENGTH
            )));
        }
        self.key = Some(key.into());
        Ok(self)
    }

    /// How long a client has to answer and retry (15 minutes by default: a person may
    /// be deciding). A state older than this is refused, and the call starts over.
    pub fn state_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
}

/// The server's seal for request states, and the states it has taken.
pub(crate) struct InputSeal {
    codec: RequestStateCodec,
    pub(crate) ttl: Duration,
    /// Nonces of the states taken, with when each expires (ms since the epoch).
    taken: Mutex<HashMap<String, u64>>,
}

impl InputSeal {
    pub(crate) fn new(options: &InputOptions) -> Self {
        let key: Vec<u8> = match &options.key {
            Some(key) => key.to_vec(),
            None => random_bytes::<32>().to_vec(),
        };
        // The length was checked by `state_key`, and a random key has 32 bytes.
        let codec = RequestStateCodec::new_unchecked(key);
        Self {
            codec,
            ttl: options.ttl,
            taken: Mutex::default(),
        }
    }

    fn seal(&self, payload: &StatePayload, binding: &[u8]) -> String {
        // A payload holds strings and JSON values only, which always serialize.
        let bytes = serde_json::to_vec(payload).unwrap_or_default();
        self.codec.seal_with(
            &bytes,
            &SealOptions::new().associated_data(binding).ttl(self.ttl),
        )
    }

    /// The nonce of `state`, if it is a state this server sealed for `binding` and not
    /// expired, whether or not it was taken already.
    fn peek_nonce(&self, state: &str, binding: &[u8]) -> Option<String> {
        let bytes = self.codec.open_with(state, binding).ok()?;
        let payload: StatePayload = serde_json::from_slice(&bytes).ok()?;
        Some(payload.nonce)
    }

    fn open(&self, state: &str, binding: &[u8]) -> Result<StatePayload, String> {
        let bytes = self
            .codec
            .open_with(state, binding)
            .map_err(|error| match error {
                RequestStateError::IntegrityCheckFailed => {
                    "its seal does not match: it was changed, \
                 sealed by another server, or issued to another caller or for a call with \
                 another tool or other arguments"
                        .to_owned()
                }
                RequestStateError::Expired => format!(
                    "it expired (a state is good for {} seconds)",
                    self.ttl.as_secs()
                ),
                other => format!("it is not a state this server issued ({other})"),
            })?;
        let payload: StatePayload = serde_json::from_slice(&bytes)
            .map_err(|e| format!("its contents are unreadable ({e})"))?;
        if payload.version != STATE_VERSION {
            return Err(format!(
                "it was written in format {}, this server reads format {STATE_VERSION}",
                payload.version
            ));
        }
        self.take(&payload.nonce)?;
        Ok(payload)
    }

    /// Marks the state named `nonce` taken: a second retry with it is a replay.
    fn take(&self, nonce: &str) -> Result<(), String> {
        let now = now_ms();
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        if taken.len() >= MAX_REMEMBERED_STATES {
            taken.retain(|_, expires| *expires > now);
            if taken.len() >= MAX_REMEMBERED_STATES {
                return Err(
                    "the server has too many calls waiting on answers; start the \
                            call over later"
                        .to_owned(),
                );
            }
        }
        let expires = now.saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX));
        if taken.insert(nonce.to_owned(), expires).is_some() {
            return Err("it was used already: each state answers one retry".to_owned());
        }
        Ok(())
    }
}

/// What a sealed state carries from one round of a call to the next.
#[derive(Serialize, Deserialize)]
struct StatePayload {
    #[serde(rename = "v")]
    version: u8,
    /// Unique to this state: a retry takes it once.
    #[serde(rename = "n")]
    nonce: String,
    /// The answers given in earlier rounds, by key.
    #[serde(default)]
    answers: Map<String, Value>,
    /// The questions this state's round asked, key to method: only their answers are
    /// taken from the retry.
    #[serde(default)]
    asked: BTreeMap<String, String>,
    /// The approval given in an earlier round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approval: Option<ApprovalRecord>,
}

/// One round of a call made over protocol 2026-07-28 or later: the answers it has, and
/// the questions its tool asks that have none yet.
pub(crate) struct CallInput {
    answers: Map<String, Value>,
    /// The answer to the server's approval question, taken only when this round's state
    /// asked it.
    approval_answer: Option<Value>,
    approval: Mutex<Option<ApprovalRecord>>,
    capabilities: Value,
    pending: Mutex<BTreeMap<String, (String, WireRequest)>>,
    /// Who answers: the principal's subject, or `anonymous` without authentication.
    reviewer: String,
    call_id: String,
    binding: Vec<u8>,
    /// Where this round stands with tasks: what `McpPeer::continue_as_task` does.
    task: TaskTurn,
    /// The tool asked, on a plain call that may become a task, to go on as a task.
    task_wanted: AtomicBool,
}

/// What `McpPeer::continue_as_task` does in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskTurn {
    /// The call stays a plain call (what is called is not `on_demand`, or its client
    /// does not support tasks): nothing.
    Never,
    /// A plain call of a `task = "on_demand"` tool from a client that supports tasks:
    /// the call is answered with a task, in which the tool runs again.
    Offered,
    /// The round runs inside a task already: nothing.
    Inside,
}

impl CallInput {
    /// One round of a task's call: the answers given so far (the approval's apart), and
    /// the approval an earlier round recorded. Nothing is sealed: the task keeps them.
    pub(crate) fn for_task(
        answers: Map<String, Value>,
        approval_answer: Option<Value>,
        approval: Option<ApprovalRecord>,
        context: &RequestContext<RoleServer>,
        reviewer: String,
        call_id: String,
    ) -> Self {
        Self {
            answers,
            approval_answer,
            approval: Mutex::new(approval),
            capabilities: client_capabilities(context),
            pending: Mutex::default(),
            reviewer,
            call_id,
            binding: Vec::new(),
            task: TaskTurn::Inside,
            task_wanted: AtomicBool::new(false),
        }
    }

    /// The answers given so far, by key (the approval's apart).
    pub(crate) fn answers(&self) -> &Map<String, Value> {
        &self.answers
    }

    /// Whether the tool asked to go on as a task (see [`continue_as_task`](Self::continue_as_task)).
    pub(crate) fn task_wanted(&self) -> bool {
        self.task_wanted.load(Ordering::Acquire)
    }

    /// `McpPeer::continue_as_task`: on a plain call that may become a task, records the
    /// wish and fails with an error the tool returns, so that the server answers with a
    /// task and runs the tool again inside it; elsewhere, nothing.
    pub(crate) fn continue_as_task(&self) -> Result<(), ToolError> {
        if self.task != TaskTurn::Offered {
            return Ok(());
        }
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if !pending.is_empty() {
            // The call is answered with its questions; a task would leave them unasked.
            return Err(waiting(pending.keys().map(String::as_str)));
        }
        self.task_wanted.store(true, Ordering::Release);
        Err(ToolError::denied(
            "this call goes on as a task: the server answers with the task and runs the \
             tool again inside it",
        ))
    }

    /// The questions this round asked that have no answer yet, by key: the method and
    /// the request as it travels.
    pub(crate) fn take_pending(&self) -> BTreeMap<String, (String, WireRequest)> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The capabilities the client declared in this request.
    pub(crate) fn capabilities(&self) -> &Value {
        &self.capabilities
    }

    /// The approval this call carries, if any.
    pub(crate) fn approval(&self) -> Option<ApprovalRecord> {
        self.approval
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The answers to `questions`, or, when some have none (or one not shaped as its
    /// method's result), those recorded for the call's `InputRequiredResult` and an
    /// error the tool returns.
    pub(crate) fn answers_to(&self, questions: &[InputRequest]) -> Result<Vec<Value>, ToolError> {
        let mut answers = Vec::with_capacity(questions.len());
        let mut missing = Vec::new();
        for question in questions {
            if question.key.starts_with(RESERVED_PREFIX) {
                return Err(ToolError::invalid_arguments(format!(
                    "the question key `{}` starts with `{RESERVED_PREFIX}`, which the server \
                     keeps for its own questions; choose another key",
                    question.key
                )));
            }
            match self.answers.get(&question.key) {
                Some(answer) if answers_method(question.method, answer) => {
                    answers.push(answer.clone());
                }
                _ => missing.push(question),
            }
        }
        if missing.is_empty() {
            return Ok(answers);
        }
        for question in &missing {
            self.record(&question.key, question.method, question.wire()?);
        }
        Err(waiting(missing.iter().map(|q| q.key.as_str())))
    }

    fn record(&self, key: &str, method: &str, request: WireRequest) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.to_owned(), (method.to_owned(), request));
    }

    /// The server's approval of the call of `tool`: approved when this call's state
    /// carries an approval, or its retry accepts the approval question the state asked;
    /// otherwise `question` is recorded and the call waits.
    pub(crate) fn approve(&self, tool: &str, question: Value) -> Result<(), ToolError> {
        if self.approval().is_some_and(|record| {
            record.decision == ApprovalVerdict::Approved && record.tool == tool
        }) {
            return Ok(());
        }
        let Some(answer) = &self.approval_answer else {
            let request =
                serde_json::from_value(json!({"method": "elicitation/create", "params": question}))
                    .map_err(|e| {
                        ToolError::execution(format!("the approval question is not valid: {e}"))
                    })?;
            self.record(APPROVAL_KEY, "elicitation/create", request);
            return Err(waiting([APPROVAL_KEY]));
        };
        let action = answer.get("action").and_then(Value::as_str);
        let decision = if action == Some("accept") {
            ApprovalVerdict::Approved
        } else {
            ApprovalVerdict::Denied
        };
        let record = ApprovalRecord {
            call_id: self.call_id.clone(),
            tool: tool.to_owned(),
            decision,
            who: self.reviewer.clone(),
            reason: None,
            at_ms: now_ms(),
            corrected_from: None,
        };
        tracing::info!(
            target: "toolwright_mcp::approval",
            tool,
            who = %record.who,
            decision = ?record.decision,
            at_ms = record.at_ms,
            "approval decided through the MCP client"
        );
        *self.approval.lock().unwrap_or_else(PoisonError::into_inner) = Some(record);
        verdict(tool, answer)
    }
}

/// `Ok` when `answer` (an `ElicitResult`) accepts the approval question for `tool`;
/// otherwise the `Denied` error saying what the user did and that the call did not run.
pub(crate) fn verdict(tool: &str, answer: &Value) -> Result<(), ToolError> {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Ok(()),
        Some("decline") => Err(ToolError::denied(format!(
            "the user declined to let `{tool}` run; the call did not run"
        ))),
        Some("cancel") => Err(ToolError::denied(format!(
            "the user dismissed the request to let `{tool}` run; the call did not run"
        ))),
        _ => Err(ToolError::denied(format!(
            "the client's answer to the approval request for `{tool}` was not an \
             acceptance ({answer}); the call did not run"
        ))),
    }
}

/// The error `ask` returns while the call waits on answers: the tool returns it, and the
/// server answers with an `InputRequiredResult` whatever the tool returned.
fn waiting<'a>(keys: impl IntoIterator<Item = &'a str>) -> ToolError {
    let keys: Vec<&str> = keys.into_iter().collect();
    ToolError::denied(format!(
        "this call waits on its caller's answers to {}; the client answers and calls again",
        keys.join(", ")
    ))
}

/// Whether `context`'s request speaks a protocol whose calls ask through
/// `InputRequiredResult` (2026-07-28 or later).
pub(crate) fn asks_by_result(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// A `tools/call` of protocol 2026-07-28 or later: its state opened and checked, its
/// tool run with its answers, and its answer an `InputRequiredResult` when the tool (or
/// its approval) asked something still unanswered. With `task` [`TaskTurn::Offered`]
/// (a `task = "on_demand"` tool, a client that supports tasks), a round whose tool says
/// `continue_as_task` is answered with a task started with the round's answers; a retry
/// of that round (its state sent again) is answered with the same task.
pub(crate) async fn call(
    server: &McpServer,
    mut request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
    task: TaskTurn,
) -> Result<CallToolResponse, McpError> {
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    let responses = request.input_responses.take().unwrap_or_default();
    let state = request.request_state.take();
    let name = request.name.to_string();
    let offered = task == TaskTurn::Offered;
    // The round's state, when it started a task already: this is a retry of that round.
    let nonce = match (&state, offered) {
        (Some(state), true) => server
            .shared
            .input
            .peek_nonce(state, &bound(&context, &name, &arguments)),
        _ => None,
    };
    if let Some(nonce) = &nonce
        && let Some(started) = server.task_started_by(nonce, &context).await?
    {
        return Ok(started.into());
    }
    let task_call = offered.then(|| {
        (
            context.clone(),
            request.arguments.clone().unwrap_or_default(),
        )
    });
    let round = Round {
        what: &name,
        arguments: &arguments,
        responses,
        state,
        task,
    };
    let answered = in_rounds(server, context, round, async |input, context| {
        let result = server
            .run_call_with(request, context, Some(input.clone()))
            .await?;
        Ok((result, input))
    })
    .await?;
    Ok(match answered {
        Answered::Complete((_, input)) if input.task_wanted() => {
            // Only an offered round can want a task.
            let (context, arguments) = task_call.ok_or_else(|| {
                McpError::internal_error("a task was wanted where none was offered", None)
            })?;
            let expires = now_ms().saturating_add(
                u64::try_from(server.shared.input.ttl.as_millis()).unwrap_or(u64::MAX),
            );
            server
                .start_task_from(
                    name,
                    arguments,
                    &input,
                    context,
                    nonce.map(|n| (n, expires)),
                )
                .await?
                .into()
        }
        Answered::Complete((result, _)) => result.into(),
        Answered::InputRequired(asked) => asked.into(),
    })
}

/// What the state of `context`'s call of `what` with `arguments` is bound to.
fn bound(context: &RequestContext<RoleServer>, what: &str, arguments: &Value) -> Vec<u8> {
    let reviewer = access::principal(context).map_or_else(|| "anonymous".to_owned(), |p| p.subject);
    binding(&reviewer, what, arguments)
}

/// What one round of a multi-round-trip request brings: the name of what it asks for
/// (a tool, a prompt) and its arguments, which the state is bound to, and the client's
/// answers with the state of the round before.
pub(crate) struct Round<'a> {
    pub(crate) what: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) responses: rmcp::model::InputResponses,
    pub(crate) state: Option<String>,
    /// Whether the call may become a task from where its tool says so.
    pub(crate) task: TaskTurn,
}

/// How a round ended: with the request's result, or with questions for the client.
pub(crate) enum Answered<T> {
    Complete(T),
    InputRequired(InputRequiredResult),
}

/// Runs one round of a request of protocol 2026-07-28 or later that may ask its caller
/// (a tool call, a prompt): `round`'s state opened and checked, `run` given the answers,
/// and an `InputRequiredResult` in place of its result when it asked something still
/// unanswered. `run` takes the request's context back (moved, not copied).
pub(crate) async fn in_rounds<T>(
    server: &McpServer,
    context: RequestContext<RoleServer>,
    round: Round<'_>,
    run: impl AsyncFnOnce(Arc<CallInput>, RequestContext<RoleServer>) -> Result<T, McpError>,
) -> Result<Answered<T>, McpError> {
    let seal = &server.shared.input;
    let reviewer =
        access::principal(&context).map_or_else(|| "anonymous".to_owned(), |p| p.subject);
    let binding = binding(&reviewer, round.what, round.arguments);
    let responses = round.responses;
    let mut answers = Map::new();
    let mut approval_answer = None;
    let mut approval = None;
    match round.state {
        Some(state) => {
            let payload = seal.open(&state, &binding).map_err(|reason| {
                McpError::invalid_params(
                    format!(
                        "the call's `requestState` was refused: {reason}. Call `{}` again \
                         without `requestState` and `inputResponses` to start over",
                        round.what
                    ),
                    None,
                )
            })?;
            answers = payload.answers;
            approval = payload.approval;
            for (key, answer) in responses {
                if !payload.asked.contains_key(&key) {
                    continue;
                }
                if key == APPROVAL_KEY {
                    approval_answer = Some(answer);
                } else {
                    answers.insert(key, answer);
                }
            }
        }
        // Without a state, answers are the client's own data and taken as such; an
        // approval never is, since nothing shows it answers a question about this call.
        None => answers.extend(
            responses
                .into_iter()
                .filter(|(key, _)| !key.starts_with(RESERVED_PREFIX)),
        ),
    }
    let input = Arc::new(CallInput {
        answers,
        approval_answer,
        approval: Mutex::new(approval),
        capabilities: client_capabilities(&context),
        pending: Mutex::default(),
        reviewer,
        call_id: super::request_id_text(&context.id),
        binding,
        task: round.task,
        task_wanted: AtomicBool::new(false),
    });
    let result = run(input.clone(), context).await?;
    let pending = input.take_pending();
    if pending.is_empty() {
        return Ok(Answered::Complete(result));
    }
    let mut asked = BTreeMap::new();
    let mut requests = InputRequests::new();
    for (key, (method, request)) in pending {
        asked.insert(key.clone(), method);
        requests.insert(key, request);
    }
    let payload = StatePayload {
        version: STATE_VERSION,
        nonce: hex(&random_bytes::<16>()),
        answers: input.answers.clone(),
        asked,
        approval: input.approval(),
    };
    let state = seal.seal(&payload, &input.binding);
    Ok(Answered::InputRequired(InputRequiredResult::new(
        Some(requests),
        Some(state),
    )))
}

/// The capabilities `context`'s client declared, as JSON.
fn client_capabilities(context: &RequestContext<RoleServer>) -> Value {
    context
        .client_capabilities()
        .and_then(|caps| serde_json::to_value(caps).ok())
        .unwrap_or(Value::Null)
}

/// What a state is bound to: the caller, the tool and its arguments (in a canonical
/// form, so that a client re-serializing them in another key order still matches).
fn binding(reviewer: &str, tool: &str, arguments: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"toolwright-mcp/tools-call/v1\0");
    out.extend_from_slice(reviewer.as_bytes());
    out.push(0);
    out.extend_from_slice(tool.as_bytes());
    out.push(0);
    canonical(arguments, &mut out);
    out
}

/// `value` as JSON with every object's keys sorted.
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // A string always serializes.
                out.extend_from_slice(&serde_json::to_vec(key).unwrap_or_default());
                out.push(b':');
                canonical(value, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(&serde_json::to_vec(other).unwrap_or_default()),
    }
}

pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0; N];
    // The operating system's generator; without it no key or nonce can be trusted.
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    bytes
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binding_ignores_key_order_but_not_values() {
        let a = binding(
            "alice",
            "pay",
            &json!({"to": "bob", "amount": 1, "memo": {"x": 1, "y": 2}}),
        );
        let b = binding(
            "alice",
            "pay",
            &json!({"memo": {"y": 2, "x": 1}, "amount": 1, "to": "bob"}),
        );
        assert_eq!(a, b);
        assert_ne!(
            a,
            binding(
                "alice",
                "pay",
                &json!({"to": "bob", "amount": 2, "memo": {"x": 1, "y": 2}})
            )
        );
        assert_ne!(
            a,
            binding(
                "mallory",
                "pay",
                &json!({"to": "bob", "amount": 1, "memo": {"x": 1, "y": 2}})
            )
        );
    }

    #[test]
    fn a_state_opens_once_and_only_for_its_binding() {
        let seal = InputSeal::new(&InputOptions::default());
        let payload = StatePayload {
            version: STATE_VERSION,
            nonce: hex(&random_bytes::<16>()),
            answers: Map::new(),
            asked: BTreeMap::new(),
            approval: None,
        };
        let state = seal.seal(&payload, b"alice");
        let refused = seal.open(&state, b"bob").err().unwrap_or_default();
        assert!(refused.contains("seal does not match"), "{refused}");
        assert!(seal.open(&state, b"alice").is_ok());
        let replayed = seal.open(&state, b"alice").err().unwrap_or_default();
        assert!(replayed.contains("used already"), "{replayed}");
    }

    #[test]
    fn answers_must_have_their_methods_shape() {
        assert!(answers_method(
            "elicitation/create",
            &json!({"action": "accept", "content": {}})
        ));
        assert!(!answers_method("elicitation/create", &json!(12345)));
        assert!(!answers_method(
            "elicitation/create",
            &json!({"action": "yes"})
        ));
        assert!(answers_method("roots/list", &json!({"roots": []})));
        assert!(!answers_method("roots/list", &json!({"roots": "none"})));
        assert!(answers_method(
            "sampling/createMessage",
            &json!({"role": "assistant", "content": {"type": "text", "text": "hi"}})
        ));
    }
}

//! [`McpServer`]: any [`ToolSet`] served to MCP clients.

use crate::approval::{self, ServerApproval};
use crate::convert::{error_result, success_result, tool_to_mcp};
use crate::peer::{CALL_ORIGIN, LogLevel, McpPeer};
use crate::stall::StallWatch;
use agent_core::{
    CallReporter, Extensions, ToolConfig, ToolContext, ToolError, ToolExposure, ToolLimits,
    ToolSet, truncate_error, truncate_output,
};
use futures::FutureExt;
use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, NumberOrString,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ServerCapabilities,
    ServerConfig,
};
use tracing::Instrument;
// rmcp marks MCP logging deprecated (SEP-2577, protocol 2026-07-28); the 2025 protocol
// versions clients speak today still use it, and the conformance suite tests it.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

/// How an [`McpServer`] presents itself and runs calls.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The `serverInfo.name` sent at initialization.
    pub name: String,
    /// The `serverInfo.version` sent at initialization.
    pub version: String,
    /// Optional `instructions` for the client's model.
    pub instructions: Option<String>,
    /// How calls run, as the executor runs them: the timeout of tools that set none,
    /// the limit on calls in flight (`max_concurrency`, across every session), retries of
    /// read-only and idempotent tools, the output budget, and which destructive tools
    /// need approval. The rest of it concerns a model's turn, which MCP does not have.
    pub tool_config: ToolConfig,
    /// At most this many tools per `tools/list` page; longer listings continue with a
    /// cursor.
    pub page_size: usize,
    /// What a call that needs a person's approval does: asks the client's user, by
    /// default.
    pub approval: ServerApproval,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            name: "agent-mcp".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            tool_config: ToolConfig::default(),
            page_size: 100,
            approval: ServerApproval::default(),
        }
    }
}

impl ServerOptions {
    /// Options naming the server.
    pub fn named(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }
}

/// One tool as listed: its MCP form, built once, and whether listing must ask it.
struct Listed {
    tool: rmcp::model::Tool,
    deferred: bool,
    index: usize,
}

struct Shared {
    tools: ToolSet,
    /// Tools' own concurrency rules, as the executor applies them: per-tool limits
    /// and exclusion groups, by tool name.
    limits: HashMap<&'static str, ToolLimits>,
    /// Every tool a client may ever see (Direct and Deferred), converted once.
    listing: Vec<Listed>,
    options: ServerOptions,
    /// Answers calls whose tool blocks its thread (`stall.rs`).
    stalls: Arc<StallWatch>,
    /// The server's own limit on calls in flight (`tool_config.max_concurrency`), across
    /// every session.
    global: Arc<Semaphore>,
}

/// An MCP server over a [`ToolSet`]: `tools/list` offers every Direct tool and every
/// active Deferred tool (never Hidden ones), `tools/call` runs them with their timeouts,
/// progress and cancellation. Serve it with [`serve_stdio`](crate::serve_stdio),
/// [`serve_http`](crate::serve_http), or any rmcp transport (it is an rmcp
/// `ServerHandler`).
///
/// A call whose tool blocks its thread past its timeout is answered as timed out on time
/// when the runtime has a second thread to answer from; on a current-thread runtime, when
/// the tool returns control.
///
/// Cloning is cheap and shares the tools; each clone has its own logging level, so give
/// each client session its own clone.
pub struct McpServer {
    shared: Arc<Shared>,
    log_level: Arc<Mutex<LogLevel>>,
    /// The state every call of this connection gets (its `McpPeer`), made at the first
    /// call: rmcp serves one connection per handler value.
    connection_state: OnceLock<Extensions>,
}

// A clone serves another connection: it shares the log level, as before, but not the
// first connection's peer.
impl Clone for McpServer {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            log_level: self.log_level.clone(),
            connection_state: OnceLock::new(),
        }
    }
}

impl McpServer {
    /// A server for `tools` with default options.
    pub fn new(tools: ToolSet) -> Self {
        Self::with_options(tools, ServerOptions::default())
    }

    /// A server for `tools`.
    pub fn with_options(tools: ToolSet, options: ServerOptions) -> Self {
        let listing = tools
            .iter()
            .enumerate()
            .filter(|(_, tool)| tool.exposure() != ToolExposure::Hidden)
            .filter_map(|(index, tool)| {
                let definition = tools.definition(tool.name())?;
                // A tool that states its own dialect keeps it; the core strips `$schema`
                // when normalising, so read it from the tool's raw schema.
                let dialect = tool.schema().get("$schema").cloned();
                Some(Listed {
                    tool: tool_to_mcp(definition, dialect),
                    deferred: tool.exposure() == ToolExposure::Deferred,
                    index,
                })
            })
            .collect();
        let limits = tools
            .iter()
            .zip(ToolLimits::of_each(&tools))
            .filter(|(_, limits)| !limits.is_empty())
            .map(|(tool, limits)| (tool.name(), limits))
            .collect();
        Self {
            shared: Arc::new(Shared {
                tools,
                limits,
                listing,
                stalls: Arc::default(),
                global: Arc::new(Semaphore::new(
                    options
                        .tool_config
                        .max_concurrency
                        .clamp(1, Semaphore::MAX_PERMITS),
                )),
                options,
            }),
            log_level: Arc::default(),
            connection_state: OnceLock::new(),
        }
    }

    /// The tools served.
    pub fn tools(&self) -> &ToolSet {
        &self.shared.tools
    }

    /// A clone for a new client session: same tools, fresh session state.
    pub fn for_new_session(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            log_level: Arc::default(),
            connection_state: OnceLock::new(),
        }
    }

    fn connection_state(&self, context: &RequestContext<RoleServer>) -> Extensions {
        self.connection_state
            .get_or_init(|| {
                let mut state = Extensions::new();
                state.insert(McpPeer::new(context.peer.clone(), self.log_level.clone()));
                state
            })
            .clone()
    }

    async fn run_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResult, McpError> {
        let tools = &self.shared.tools;
        // The executor's span, with the same fields: a call is traced alike however it runs.
        let span = tracing::info_span!(
            "tool_call",
            tool = %request.name,
            call_id = %context.id,
            outcome = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        let base =
            ToolContext::new(session_id(&context)).with_call_id(request_id_text(&context.id));
        // A tool the caller lacks the scopes for does not exist for them.
        if !crate::auth::may_use(&context, &request.name) {
            return Err(crate::auth::unknown_tool(tools, &request.name, &context));
        }
        let tool = match tools.resolve_in(&request.name, &base).await {
            Ok(tool) => tool.clone(),
            // MCP: an unknown tool is a protocol error (-32602), not a tool result.
            Err(error) => {
                record_end(&span, Some(&error), Duration::ZERO);
                return Err(McpError::invalid_params(error.message().to_owned(), None));
            }
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        let options = &self.shared.options;
        if options.approval == ServerApproval::Elicit
            && options.tool_config.needs_approval(tool.as_ref(), &args)
        {
            let peer = McpPeer::new(context.peer.clone(), self.log_level.clone());
            // Waiting for a person is not the tool's time: its timeout starts after.
            // Boxed, as few calls take this path: inline, asking would triple the size of
            // every call's future.
            let approved = tokio::select! {
                approved = Box::pin(approval::ask(&peer, tool.as_ref(), &args)) => approved,
                () = context.ct.cancelled() => Err(ToolError::cancelled(tool.name())),
            };
            if let Err(error) = approved {
                record_end(&span, Some(&error), Duration::ZERO);
                return Ok(error_result(&error));
            }
        }

        // rmcp cancels `context.ct` on `notifications/cancelled`. It is this request's
        // alone (a child of the token rmcp keeps), so the call uses it as its own token and
        // a timeout may cancel it.
        let token = context.ct.clone();
        let mut ctx = base
            .with_cancellation(token.clone())
            .with_extensions(self.connection_state(&context));
        if let Some(principal) = crate::auth::principal(&context) {
            ctx = ctx.with_state(principal);
        }
        let reporter = context.meta.get_progress_token().map(|progress_token| {
            let reporter = Arc::new(ProgressReporter {
                tool: tool.clone(),
                last: Mutex::new(None),
                peer: context.peer.clone(),
                token: progress_token,
                runtime: tokio::runtime::Handle::current(),
                forwarding: OnceLock::new(),
            });
            ctx = ctx.clone().with_reporter(reporter.clone());
            reporter
        });
        // The set's own state, if it has any, joins the context (no copy otherwise).
        let with_set_state = match tools.context_for(&ctx) {
            Cow::Owned(ctx) => Some(ctx),
            Cow::Borrowed(_) => None,
        };
        let ctx = with_set_state.unwrap_or(ctx);

        let config = &self.shared.options.tool_config;
        let timeout_ms = tool.timeout_ms().unwrap_or(config.default_tool_timeout_ms);
        let name = tool.name();
        let retries = config.retries_for(tool.as_ref());
        // Wait for the call's permits (the tool's group, its own limit, then the server's
        // limit: the executor's order, so waits never form a cycle); a cancelled request
        // stops waiting.
        let global = &self.shared.global;
        let limits = self.shared.limits.get(name);
        // The common case: no limits of the tool's own, and the server has room. A tool
        // with limits takes the server's permit last, after its own: holding it while
        // waiting for those could wait on itself, or on calls waiting for it.
        let fast = match limits {
            None => global.clone().try_acquire_owned().ok(),
            Some(_) => None,
        };
        let _permits = match fast {
            Some(permit) => (Some(permit), Vec::new()),
            None => tokio::select! {
                permits = acquire(limits, global) => (None, permits),
                () = context.ct.cancelled() => (None, Vec::new()),
            },
        };
        // A request cancelled before its tool started (while it waited for its permits, or
        // for a person) does not start it.
        if context.ct.is_cancelled() {
            let error = ToolError::cancelled(name);
            record_end(&span, Some(&error), Duration::ZERO);
            return Ok(error_result(&error));
        }
        // The tool runs in a task of its own, under its timeout and the request's token; the
        // call is polled first, so a tool that watches its token sees a cancellation and
        // ends cleanly instead of being dropped mid-step. A panic is the call's error.
        let timeout = Duration::from_millis(timeout_ms);
        let started = Instant::now();
        let (runner, cancelled) = (tool.clone(), context.ct.clone());
        // Aborted when its handle drops: nothing a call started outlives its request.
        let mut call = AbortOnDropHandle::new(tokio::spawn(
            CALL_ORIGIN.scope(
                context.id.clone(),
                async move {
                    let mut retries_left = retries;
                    let mut deadline = started + timeout;
                    loop {
                        // An attempt that may be retried has a token of its own, so that its
                        // timeout stops its own work and not the next attempt's.
                        let attempt = (retries_left > 0).then(|| cancelled.child_token());
                        let attempt_ctx = match &attempt {
                            Some(token) => Cow::Owned(ctx.clone().with_cancellation(token.clone())),
                            None => Cow::Borrowed(&ctx),
                        };
                        let mut outcome =
                            run_attempt(&runner, &args, &attempt_ctx, deadline, timeout_ms).await;
                        // A result this late comes from a tool that kept its thread past the
                        // deadline where nothing could answer for it meanwhile (a
                        // current-thread runtime): it is the timeout a second thread would
                        // have answered, as the executor answers it.
                        if outcome.is_ok() && Instant::now() > deadline + STALL_GRACE {
                            outcome = Err(ToolError::timeout(runner.name(), timeout_ms));
                        }
                        if let Some(token) = attempt {
                            token.cancel();
                        }
                        match &outcome {
                            Err(error)
                                if retries_left > 0
                                    && !cancelled.is_cancelled()
                                    && error.kind().is_retryable() =>
                            {
                                retries_left -= 1;
                                deadline = Instant::now() + timeout;
                            }
                            _ => break outcome,
                        }
                    }
                }
                .instrument(span.clone()),
            ),
        ));
        // Every attempt has the full timeout; a sum too far off to reach is no limit.
        let deadline = timeout
            .checked_mul(retries.saturating_add(1))
            .and_then(|all| started.checked_add(all))
            .unwrap_or_else(|| started + FAR_FUTURE);
        // What this request waits for: the task, unless the tool blocks its thread (no
        // timer of the task's can fire then): its timeout is then answered from here, a
        // moment after the task would have, and the task is dropped once the blocking poll
        // returns. (A cancelled request needs no answer, so it waits no more than that.)
        let outcome = match self
            .shared
            .stalls
            .wait(
                &mut call,
                deadline.checked_add(STALL_GRACE).unwrap_or(deadline),
            )
            .await
        {
            Some(joined) => joined.unwrap_or_else(|_aborted| Err(ToolError::cancelled(name))),
            None => Err(ToolError::timeout(name, timeout_ms)),
        };
        let budget = self.shared.options.tool_config.max_output_chars;
        let outcome = outcome
            .and_then(|content| {
                tool.validate_output(&content).map_err(|reason| {
                    ToolError::execution(format!("Invalid tool output: {reason}"))
                })?;
                Ok(match budget {
                    Some(budget) => truncate_output(content, budget),
                    None => content,
                })
            })
            // A failure's message is what the client reads of it: held to the same budget.
            .map_err(|error| match budget {
                Some(budget) => truncate_error(error, budget),
                None => error,
            });
        drop(call);
        // Whatever ended the call, the tool's own work is told to stop.
        token.cancel();
        // Progress goes out before the result: clients stop listening for a request's
        // progress once its response arrives.
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        record_end(&span, outcome.as_ref().err(), started.elapsed());
        Ok(match outcome {
            Ok(content) => success_result(content),
            Err(error) => error_result(&error),
        })
    }
}

/// Records how a call ended (`ok`, or its error's kind) on its span, as the executor
/// records its calls'.
fn record_end(span: &tracing::Span, error: Option<&ToolError>, duration: Duration) {
    if span.is_disabled() {
        return;
    }
    let outcome = error.map_or("ok", |error| error.kind().as_str());
    let duration_ms = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    span.record("outcome", outcome);
    span.record("duration_ms", duration_ms);
    span.in_scope(|| tracing::debug!(outcome, duration_ms, "tool call finished"));
}

/// One attempt at a call: under its deadline and its context's token; a panic is the
/// call's error.
async fn run_attempt(
    tool: &Arc<dyn agent_core::Tool>,
    args: &Value,
    ctx: &ToolContext,
    deadline: Instant,
    timeout_ms: u64,
) -> Result<Vec<agent_core::Content>, ToolError> {
    let name = tool.name();
    let call = AssertUnwindSafe(tool.call(args, ctx)).catch_unwind();
    tokio::select! {
        biased;
        ran = tokio::time::timeout_at(deadline, call) => match ran {
            Ok(Ok(output)) => output.map_err(ToolError::from),
            Ok(Err(_panic)) => Err(ToolError::execution(format!(
                "tool `{name}` failed unexpectedly (it panicked)"
            ))),
            Err(_elapsed) => Err(ToolError::timeout(name, timeout_ms)),
        },
        () = ctx.cancellation().cancelled() => Err(ToolError::cancelled(name)),
    }
}

/// A deadline past any call's life (about 30 years, as tokio's own "never").
const FAR_FUTURE: Duration = Duration::from_secs(86_400 * 365 * 30);

/// How long past a call's deadline the server waits for the call's task before answering
/// without it: the task answers first unless the tool blocks its thread.
const STALL_GRACE: Duration = Duration::from_millis(20);

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("tools", &self.shared.tools)
            .field("options", &self.shared.options)
            .finish()
    }
}

/// The Streamable HTTP session (`Mcp-Session-Id`) a request belongs to; empty over
/// stdio, where the connection is the session.
fn session_id(context: &RequestContext<RoleServer>) -> Arc<str> {
    // Outside HTTP there is no session id; one shared empty id saves an allocation a call.
    static NONE: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from(""));
    match context
        .extensions
        .get::<hyper::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|value| value.to_str().ok())
    {
        Some(id) => Arc::from(id),
        None => NONE.clone(),
    }
}

fn request_id_text(id: &rmcp::model::RequestId) -> Arc<str> {
    match id {
        NumberOrString::String(id) => id.clone(),
        NumberOrString::Number(n) => Arc::from(n.to_string()),
    }
}

/// Cursors name the registration index of the next tool, so a page boundary stays put
/// even if a deferred tool activates between pages. Clients treat them as opaque.
fn encode_cursor(index: usize) -> String {
    format!("tools-{index:x}")
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    usize::from_str_radix(cursor.strip_prefix("tools-")?, 16).ok()
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // the logging capability: see the `SetLevelRequestParams` import.
    fn get_info(&self) -> ServerConfig {
        let options = &self.shared.options;
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        let mut info = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(&options.name, &options.version));
        if let Some(instructions) = &options.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let shared = &self.shared;
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => decode_cursor(&cursor)
                .ok_or_else(|| McpError::invalid_params("invalid cursor", None))?,
        };
        let activation = shared
            .tools
            .activation_context(&ToolContext::new(session_id(&context)));
        let page_size = shared.options.page_size.max(1);
        let mut page = Vec::new();
        let mut next = None;
        for listed in shared.listing.iter().filter(|l| l.index >= start) {
            if !crate::auth::may_use(&context, &listed.tool.name) {
                continue;
            }
            if listed.deferred {
                let Some(tool) = shared.tools.get(&listed.tool.name) else {
                    continue;
                };
                if !tool.should_activate(&activation).await {
                    continue;
                }
            }
            if page.len() == page_size {
                next = Some(encode_cursor(listed.index));
                break;
            }
            page.push(listed.tool.clone());
        }
        let mut result = ListToolsResult::with_all_items(page);
        result.next_cursor = next;
        Ok(result)
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + Send + '_ {
        // Boxed: rmcp's request future holds the handler's future inline and is moved
        // several times on its way into a task; a call's whole state is over a kilobyte,
        // a box is one pointer (callgrind: most of the cost we added to a round trip).
        Box::pin(self.run_call(request, context)).map(|result| result.map(Into::into))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.shared
            .listing
            .iter()
            .find(|l| l.tool.name == name)
            .map(|l| l.tool.clone())
    }

    #[allow(deprecated)] // logging/setLevel: see the `SetLevelRequestParams` import.
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let name = serde_json::to_value(request.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let level = LogLevel::parse(&name)
            .ok_or_else(|| McpError::invalid_params(format!("unknown level `{name}`"), None))?;
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) = level;
        Ok(())
    }
}

/// The permits of a tool's own limits, taken in their order.
async fn acquire(
    limits: Option<&ToolLimits>,
    global: &Arc<Semaphore>,
) -> Vec<OwnedSemaphorePermit> {
    let mut permits = Vec::with_capacity(3);
    let (group, per_tool) =
        limits.map_or((None, None), |l| (l.group.as_ref(), l.per_tool.as_ref()));
    for semaphore in [group, per_tool, Some(global)].into_iter().flatten() {
        // The semaphores are never closed, so acquiring cannot fail.
        if let Ok(permit) = semaphore.clone().acquire_owned().await {
            permits.push(permit);
        }
    }
    permits
}

/// What a call reports, on its way to `notifications/progress`.
struct ProgressReporter {
    tool: Arc<dyn agent_core::Tool>,
    /// The last progress sent: MCP progress must increase with every notification. Held
    /// while an update is queued, so updates queue in the order of their progress.
    last: Mutex<Option<f64>>,
    peer: Peer<RoleServer>,
    token: ProgressToken,
    /// Where the forwarding task runs: a tool may report from a thread of its own.
    runtime: tokio::runtime::Handle,
    /// Set at the first report (rmcp's client asks every call for progress, and most
    /// tools report none, so no task is started for them), or once the call answered.
    forwarding: OnceLock<Forwarding>,
}

/// Progress travels through a channel to one task, so notifications leave in the order
/// the tool emitted them.
enum Forwarding {
    Running {
        tx: mpsc::UnboundedSender<ProgressUpdate>,
        /// Tells the task to send what is queued and end, even if the tool kept a clone
        /// of its context (and so of `tx`).
        call_done: CancellationToken,
        task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    },
    /// The call has answered: later progress has no reader.
    Ended,
}

impl ProgressReporter {
    fn start_forwarding(&self) -> Forwarding {
        let (tx, rx) = mpsc::unbounded_channel();
        let call_done = CancellationToken::new();
        let task = self.runtime.spawn(forward_progress(
            self.peer.clone(),
            self.token.clone(),
            rx,
            call_done.clone(),
        ));
        Forwarding::Running {
            tx,
            call_done,
            task: Mutex::new(Some(task)),
        }
    }

    /// Returns once every report made so far has been sent; drops any later one.
    async fn finish(&self) {
        let Forwarding::Running {
            call_done, task, ..
        } = self.forwarding.get_or_init(|| Forwarding::Ended)
        else {
            return;
        };
        call_done.cancel();
        let task = task.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

struct ProgressUpdate {
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
}

impl CallReporter for ProgressReporter {
    fn progress(&self, _call_id: &str, value: Value) -> Result<(), ToolError> {
        self.tool
            .validate_progress(&value)
            .map_err(|reason| ToolError::execution(format!("Invalid progress: {reason}")))?;
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        // A progress number that does not move forward is not sent: clients may reject
        // the notification, or the whole session.
        let Some(update) = progress_update(value, *last) else {
            return Ok(());
        };
        *last = Some(update.progress);
        if let Forwarding::Running { tx, .. } =
            self.forwarding.get_or_init(|| self.start_forwarding())
        {
            // A closed channel means the call already ended; late progress has no reader.
            let _ = tx.send(update);
        }
        Ok(())
    }

    fn set_context(&self, _call_id: &str, _value: Value) {
        // MCP has no notion of an application context shared across turns.
    }
}

/// MCP progress is a number that increases. A tool's progress value maps as: a number
/// is the progress; `{"progress", "total"?, "message"?}` is taken as is; anything else is
/// the message of an update one step past the `last` progress (the first is 1). `None`
/// when the progress given does not pass `last`.
fn progress_update(value: Value, last: Option<f64>) -> Option<ProgressUpdate> {
    let next_step = last.map_or(1.0, |last| last.floor() + 1.0);
    let update = match value {
        Value::Number(n) => ProgressUpdate {
            progress: n.as_f64().unwrap_or(next_step),
            total: None,
            message: None,
        },
        Value::Object(map) if map.get("progress").is_some_and(Value::is_number) => ProgressUpdate {
            progress: map["progress"].as_f64().unwrap_or(next_step),
            total: map.get("total").and_then(Value::as_f64),
            message: map.get("message").map(|m| match m {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
        },
        Value::String(message) => ProgressUpdate {
            progress: next_step,
            total: None,
            message: Some(message),
        },
        other => ProgressUpdate {
            progress: next_step,
            total: None,
            message: Some(other.to_string()),
        },
    };
    last.is_none_or(|last| update.progress > last)
        .then_some(update)
}

async fn forward_progress(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    mut rx: mpsc::UnboundedReceiver<ProgressUpdate>,
    call_done: CancellationToken,
) {
    loop {
        let update = tokio::select! {
            biased;
            update = rx.recv() => update,
            () = call_done.cancelled() => rx.try_recv().ok(),
        };
        let Some(update) = update else { return };
        let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
        param.total = update.total;
        param.message = update.message;
        // A failed send means the client is gone; the call's result will not reach
        // it either, so there is nothing better to do than to stop.
        if peer.notify_progress(param).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        assert_eq!(decode_cursor(&encode_cursor(300)), Some(300));
        assert_eq!(decode_cursor("nonsense"), None);
        assert_eq!(decode_cursor("tools-zz"), None);
    }

    #[test]
    fn a_clone_does_not_carry_the_first_connections_state() {
        let server = McpServer::new(ToolSet::new());
        let mut state = Extensions::new();
        state.insert("first connection");
        assert!(server.connection_state.set(state).is_ok());
        let clone = server.clone();
        assert!(clone.connection_state.get().is_none());
        assert!(server.for_new_session().connection_state.get().is_none());
        // The original keeps its own.
        assert_eq!(
            server.connection_state.get().and_then(|s| s.get::<&str>()),
            Some(&"first connection")
        );
    }

    #[test]
    fn progress_values_map_to_mcp_progress_that_only_moves_forward() {
        let u = progress_update(json!({"progress": 50, "total": 100}), None).unwrap();
        assert_eq!((u.progress, u.total), (50.0, Some(100.0)));
        let u = progress_update(json!(0.25), None).unwrap();
        assert_eq!(u.progress, 0.25);
        // A message is a step past the last progress: 1 first, then 2, or 11 after 10.5.
        let u = progress_update(json!("starting"), None).unwrap();
        assert_eq!((u.progress, u.message.as_deref()), (1.0, Some("starting")));
        let u = progress_update(json!("halfway"), Some(1.0)).unwrap();
        assert_eq!((u.progress, u.message.as_deref()), (2.0, Some("halfway")));
        let u = progress_update(json!({"rows": 3}), Some(10.5)).unwrap();
        assert_eq!(
            (u.progress, u.message.as_deref()),
            (11.0, Some("{\"rows\":3}"))
        );
        // A number that does not pass the last is not sent.
        assert!(progress_update(json!(10), Some(10.0)).is_none());
        assert!(progress_update(json!({"progress": 3}), Some(5.0)).is_none());
    }
}

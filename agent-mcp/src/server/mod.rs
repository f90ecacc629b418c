//! [`McpServer`]: any [`ToolSet`] served to MCP clients, whatever the transport. The
//! protocol layer: the catalog of tools and the one call entry here, `access` (which
//! tools a request's principal may use), `approval`, `peer` and `input` (asking the
//! caller, by request or, from MCP 2026-07-28, by `InputRequiredResult`),
//! `session` (what names a client session, and the hook a transport's session table
//! implements), `listen` (`subscriptions/listen` streams, protocol 2026-07-28), `tasks`
//! (calls that run as tasks, the `io.modelcontextprotocol/tasks` extension). Beside
//! the tools: `resources` and `uri_template` (what clients read), `prompts`, and
//! `features` (how both are served, with completions and subscriptions). Transports
//! import this module; it imports none of them.

pub(crate) mod access;
pub(crate) mod approval;
pub(crate) mod features;
pub(crate) mod input;
pub(crate) mod listen;
pub(crate) mod peer;
pub(crate) mod prompts;
pub(crate) mod registry;
pub(crate) mod resources;
pub(crate) mod session;
pub(crate) mod tasks;
pub(crate) mod uri_template;

use self::approval::{ApprovalMode, ElicitApproval};
use self::features::{Features, Subscriber};
use self::input::{CallInput, InputOptions, InputSeal};
use self::listen::Listeners;
use self::peer::{CALL_ORIGIN, CallOrigin, LogLevel, McpPeer, RequestClient};
use self::session::{SessionObserver, session_key};
use crate::convert::{error_result, success_result, tool_to_mcp};
use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, NumberOrString, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ReadResourceRequestParams, ReadResourceResponse, RequestId, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use toolwright_core::AgentResult;
use toolwright_core::dialect::MCP_HEADER_KEYWORD;
use toolwright_core::{
    CallRunner, Tool, ToolContext, ToolError, ToolErrorKind, ToolSet,
    exec::{ApproveAll, Approver, CallOptions, CallPermit, CallScope, ScopedFuture},
    llm::ToolCall,
    tool::{CallReporter, Extensions, TaskSupport, ToolCallResult, ToolExposure, ToolOutcome},
    toolset::ToolConfig,
};
// rmcp marks MCP logging deprecated (SEP-2577, protocol 2026-07-28); the 2025 protocol
// versions clients speak today still use it, and the conformance suite tests it.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext};
use serde_json::Value;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

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
    pub approval: ApprovalMode,
    /// How the state of a call waiting on its caller's answers is sealed (MCP
    /// 2026-07-28): the key (give replicas the same one) and how long a state lasts.
    pub input: InputOptions,
    /// How long a client may keep a `tools/list` result before listing again (the
    /// `ttlMs` caching hint of protocol 2026-07-28). Default 0: list again whenever it
    /// needs the tools, since they may change (a listen stream says when).
    pub list_ttl: Duration,
    /// At most this many `subscriptions/listen` streams (protocol 2026-07-28) open at
    /// once per caller, by authenticated principal; callers of a server without
    /// authentication share one allowance. One more is refused. Default 16.
    pub max_listens_per_caller: usize,
    /// Where the tasks of tools that run as tasks (`#[tool(task)]`) are kept, for how
    /// long, and how many per caller: see [`TaskOptions`](tasks::TaskOptions).
    pub tasks: tasks::TaskOptions,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            name: "toolwright-mcp".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            instructions: None,
            tool_config: ToolConfig::default(),
            page_size: 100,
            approval: ApprovalMode::default(),
            input: InputOptions::default(),
            list_ttl: Duration::ZERO,
            max_listens_per_caller: 16,
            tasks: tasks::TaskOptions::default(),
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

/// How long a change of the tools waits for one session to take its notice.
const NOTICE_TIMEOUT: Duration = Duration::from_secs(5);

/// One tool as listed: its MCP form, built once, and whether listing must ask it.
struct Listed {
    tool: rmcp::model::Tool,
    deferred: bool,
    index: usize,
}

/// The tools served at one moment, swapped whole when they change: a call keeps the
/// catalog it started with, so a tool removed meanwhile still finishes its call.
struct Catalog {
    /// The call pipeline: every call of every session runs through it, under one global
    /// limit on calls in flight (`tool_config.max_concurrency`).
    runner: CallRunner,
    /// Every tool a client may ever see (Direct and Deferred), converted once.
    listing: Vec<Listed>,
}

impl Catalog {
    fn new(tools: ToolSet, config: &ToolConfig) -> Self {
        Self::listing(CallRunner::new(Arc::new(tools), config.clone()))
    }

    /// The catalog of a changed set, whose runner keeps this one's limits.
    fn changed(&self, tools: ToolSet) -> Self {
        Self::listing(self.runner.with_tools(Arc::new(tools)))
    }

    fn listing(runner: CallRunner) -> Self {
        let tools = runner.tools();
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
        Self { runner, listing }
    }
}

/// The largest JSON-RPC message a server accepts, on every transport: the same bound
/// rmcp's Streamable HTTP server puts on a request body.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// What every session of a server shares.
struct ServerState {
    catalog: RwLock<Arc<Catalog>>,
    /// Held while a change is made, so each change builds on the one before.
    changing: Mutex<()>,
    /// The peer of every session that has initialized, told when the tools change.
    /// Closed sessions are dropped whenever a session joins or a notice goes out.
    clients: Mutex<Vec<Peer<RoleServer>>>,
    /// Seals the state of calls waiting on answers, and remembers the states taken.
    input: InputSeal,
    /// The open `subscriptions/listen` streams, told when the tools change.
    listeners: Arc<Listeners>,
    /// The resources and prompts served, swapped whole like the catalog.
    features: RwLock<Arc<Features>>,
    /// The 2025 sessions subscribed to resources; closed ones dropped at each use.
    subscribers: Mutex<Vec<Subscriber>>,
    /// The tasks started here, or read from the task store.
    tasks: tasks::Tasks,
    options: ServerOptions,
}

impl ServerState {
    /// The tools served now.
    fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The resources and prompts served now.
    fn features(&self) -> Arc<Features> {
        self.features
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The live sessions' peers, closed ones dropped.
    fn live_clients(&self) -> std::sync::MutexGuard<'_, Vec<Peer<RoleServer>>> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        clients.retain(|peer| !peer.is_transport_closed());
        clients
    }
}

/// An MCP server over a [`ToolSet`]: `tools/list` offers every Direct tool and every
/// active Deferred tool (never Hidden ones), `tools/call` runs them with their timeouts,
/// progress and cancellation. Serve it with [`serve_stdio`](crate::serve_stdio),
/// [`serve_http`](crate::serve_http), or any rmcp transport (it is an rmcp
/// `ServerHandler`).
///
/// Each call runs through the core's call pipeline ([`CallRunner`]), as an agent's calls
/// do: exposure, arguments, approval (asked through MCP elicitation), permits, timeout,
/// retries, output validation and budget, and the `tool_call` span. A call whose tool
/// blocks its thread past its timeout is answered as timed out on time when the runtime
/// has a second thread to answer from; on a current-thread runtime, when the tool
/// returns control.
///
/// The tools can change while it serves ([`update_tools`](Self::update_tools) and the
/// methods beside it): every client connected is told with
/// `notifications/tools/list_changed`.
///
/// ```no_run
/// # async fn demo(tools: toolwright_core::ToolSet, report: toolwright_core::ToolSet) -> std::io::Result<()> {
/// use toolwright_mcp::{McpHttpServer, McpServer};
/// let server = McpServer::new(tools);
/// let http = McpHttpServer::bind(server.clone(), "127.0.0.1:8000").await?;
/// tokio::spawn(http.run());
/// // ... later, for every session at once:
/// server.update_tools(|tools| tools.extend(report)).await.map_err(std::io::Error::other)?;
/// server.remove_tool("old_report").await;
/// # Ok(()) }
/// ```
///
/// Cloning is cheap and shares the tools (and their changes); each clone has its own
/// logging level, so give each client session its own clone.
pub struct McpServer {
    shared: Arc<ServerState>,
    log_level: Arc<Mutex<LogLevel>>,
    /// The state every call of this connection gets (its `McpPeer`), made at the first
    /// call: rmcp serves one connection per handler value.
    connection_state: OnceLock<Extensions>,
    /// The Streamable HTTP endpoint's sessions, told when the MCP session initializes so
    /// that its plain calls can be answered without rmcp's session worker. Weak: the
    /// sessions hold this server.
    http_sessions: Option<Weak<dyn SessionObserver>>,
    /// The resource URIs this connection subscribed to (2025 sessions), registered
    /// with the server at the first subscription.
    subscriptions: OnceLock<Arc<resources::SubscribedUris>>,
}

// A clone serves another connection: it shares the log level, as before, but not the
// first connection's peer.
impl Clone for McpServer {
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            log_level: self.log_level.clone(),
            connection_state: OnceLock::new(),
            http_sessions: self.http_sessions.clone(),
            subscriptions: OnceLock::new(),
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
        let catalog = Catalog::new(tools, &options.tool_config);
        Self {
            shared: Arc::new(ServerState {
                catalog: RwLock::new(Arc::new(catalog)),
                changing: Mutex::new(()),
                clients: Mutex::default(),
                input: InputSeal::new(&options.input),
                listeners: Arc::default(),
                features: RwLock::default(),
                subscribers: Mutex::default(),
                tasks: tasks::Tasks::new(options.tasks.clone()),
                options,
            }),
            log_level: Arc::default(),
            connection_state: OnceLock::new(),
            http_sessions: None,
            subscriptions: OnceLock::new(),
        }
    }

    /// The tools served now (see [`update_tools`](Self::update_tools)).
    pub fn tools(&self) -> Arc<ToolSet> {
        self.shared.catalog().runner.tools().clone()
    }

    /// Adds `tool` to the tools served, and tells every connected client
    /// (`notifications/tools/list_changed`). Fails, changing nothing, if the name is
    /// taken or invalid; see [`update_tools`](Self::update_tools).
    pub async fn add_tool<T: Tool + 'static>(&self, tool: T) -> AgentResult<()> {
        self.update_tools(|tools| tools.register_tool(tool).map(drop))
            .await
    }

    /// Stops serving the tool named `name`, and tells every connected client. `None`,
    /// and no notice, when no tool has that name. A call of it already running
    /// finishes; a later one is answered as a call of an unknown tool.
    pub async fn remove_tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let removed = self.change_tools(|tools| Ok(tools.remove(name))).ok()??;
        self.notify_tools_changed().await;
        Some(removed)
    }

    /// Serves `tools` in place of the tools served so far, and tells every connected
    /// client.
    pub async fn replace_tools(&self, tools: ToolSet) {
        let replaced = self.change_tools(|served| {
            *served = tools;
            Ok(())
        });
        debug_assert!(replaced.is_ok(), "a replacement cannot fail");
        self.notify_tools_changed().await;
    }

    /// Changes the tools served as `change` does to a copy of them (which shares the
    /// tools and their state), then tells every connected client, once, with
    /// `notifications/tools/list_changed`: each lists the tools again and sees the new
    /// set, less what its principal may not use.
    ///
    /// If `change` fails, nothing changes and nobody is told. Changes are made one at a
    /// time. Calls already running finish with the tools they started with; each new
    /// request sees the new set. The limits carry over (see
    /// [`CallRunner::with_tools`]): calls still running on the old set count against
    /// the global limit, their exclusive groups and, for a tool kept, its own limit.
    ///
    /// Returns once every client connected has been sent the notice (a client that does
    /// not take it within a few seconds is not waited for). Clients connected through a
    /// stateless HTTP endpoint have no session to be told through; they see the change
    /// at their next `tools/list`.
    ///
    /// ```no_run
    /// # async fn demo(server: toolwright_mcp::McpServer, more: toolwright_core::ToolSet) -> toolwright_core::AgentResult<()> {
    /// server.update_tools(|tools| tools.extend(more)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_tools<R>(
        &self,
        change: impl FnOnce(&mut ToolSet) -> AgentResult<R>,
    ) -> AgentResult<R> {
        let result = self.change_tools(change)?;
        self.notify_tools_changed().await;
        Ok(result)
    }

    /// How many client sessions are connected and initialized: those a change of the
    /// tools is announced to.
    pub fn connected_clients(&self) -> usize {
        self.shared.live_clients().len()
    }

    /// Applies `change` to a copy of the served set and serves the result.
    fn change_tools<R>(
        &self,
        change: impl FnOnce(&mut ToolSet) -> AgentResult<R>,
    ) -> AgentResult<R> {
        let _one_at_a_time = self
            .shared
            .changing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let current = self.shared.catalog();
        let mut tools = ToolSet::clone(current.runner.tools());
        let result = change(&mut tools)?;
        let catalog = Arc::new(current.changed(tools));
        *self
            .shared
            .catalog
            .write()
            .unwrap_or_else(PoisonError::into_inner) = catalog;
        Ok(result)
    }

    /// Sends `notifications/tools/list_changed` to every live session and every open
    /// listen stream that asked for it, all at once.
    async fn notify_tools_changed(&self) {
        let clients = self.shared.live_clients().clone();
        let notices = clients.iter().map(|peer| {
            // A session whose client stopped reading must not hold up the change.
            tokio::time::timeout(NOTICE_TIMEOUT, peer.notify_tool_list_changed())
        });
        let listeners = self.shared.listeners.sinks();
        // A stream whose filter left tool changes out refuses the notice itself.
        let streamed = listeners
            .iter()
            .map(|sink| tokio::time::timeout(NOTICE_TIMEOUT, sink.notify_tool_list_changed()));
        // A client that is gone is dropped at the next change (a stream, when it
        // closes); nothing else to do.
        let _ = futures::future::join(
            futures::future::join_all(notices),
            futures::future::join_all(streamed),
        )
        .await;
    }

    /// How many `subscriptions/listen` streams are open (protocol 2026-07-28): those,
    /// besides [`connected_clients`](Self::connected_clients), a change of the tools is
    /// announced to.
    pub fn open_listen_streams(&self) -> usize {
        self.shared.listeners.len()
    }

    /// A clone for a new client session: same tools, fresh session state.
    pub fn for_new_session(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            log_level: Arc::default(),
            connection_state: OnceLock::new(),
            http_sessions: None,
            subscriptions: OnceLock::new(),
        }
    }

    /// A clone for a new session of a stateful HTTP endpoint, which registers with
    /// `sessions` once its client has initialized.
    pub(crate) fn for_http_session(&self, sessions: Weak<dyn SessionObserver>) -> Self {
        Self {
            http_sessions: Some(sessions),
            ..self.for_new_session()
        }
    }

    /// Whether a call of `params` can run without its client: its tool exists, cannot
    /// reach its client (no `ToolContext`, state or progress), and needs no approval
    /// that would be asked of the client's user.
    pub(crate) fn runs_without_client(&self, params: &mut CallToolRequestParams) -> bool {
        let catalog = self.shared.catalog();
        let Some(tool) = catalog.runner.tools().get(&params.name) else {
            return false;
        };
        // A task tool's call may become a task, which this path does not start.
        if tool.uses_context() || tool.task_support() != TaskSupport::Forbidden {
            return false;
        }
        match self.shared.options.approval {
            ApprovalMode::TrustClient => true,
            ApprovalMode::Elicit => {
                // The rule reads a call; the arguments go into it and back, uncopied.
                let arguments = Value::Object(params.arguments.take().unwrap_or_default());
                let call = ToolCall::new(String::new(), params.name.to_string(), arguments);
                let needs = catalog.runner.needs_approval(&call, tool.as_ref());
                if let Value::Object(arguments) = call.arguments {
                    params.arguments = Some(arguments);
                }
                !needs
            }
        }
    }

    /// Whether the input schema `name` is listed with names an argument a request
    /// must repeat in a header (`x-mcp-header`, SEP-2243); `false` for a tool not listed.
    pub(crate) fn declares_header_params(&self, name: &str) -> bool {
        fn names(value: &Value) -> bool {
            match value {
                Value::Object(map) => map
                    .iter()
                    .any(|(key, value)| key == MCP_HEADER_KEYWORD || names(value)),
                Value::Array(items) => items.iter().any(names),
                _ => false,
            }
        }
        self.shared
            .catalog()
            .listing
            .iter()
            .find(|l| l.tool.name == name)
            .is_some_and(|l| {
                l.tool
                    .input_schema
                    .iter()
                    .any(|(key, value)| key == MCP_HEADER_KEYWORD || names(value))
            })
    }

    /// The peer a tool of a self-contained request (protocol 2026-07-28) gets.
    fn request_peer(
        &self,
        context: &RequestContext<RoleServer>,
        client: &Arc<RequestClient>,
    ) -> McpPeer {
        McpPeer::new(context.peer.clone(), self.log_level.clone()).for_request(client.clone())
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

    /// A `tools/call` request, run through the call pipeline.
    pub(crate) async fn run_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResult, McpError> {
        self.run_call_with(request, context, None).await
    }

    /// A `tools/call` request, run through the call pipeline; with `input`, one round of
    /// a call that asks its caller by `InputRequiredResult`.
    pub(crate) async fn run_call_with(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        input: Option<Arc<CallInput>>,
    ) -> Result<rmcp::model::CallToolResult, McpError> {
        // A tool the caller lacks the scopes for does not exist for them.
        let catalog = self.shared.catalog();
        if !access::may_use(&context, &request.name) {
            let tools = catalog.runner.tools();
            return Err(access::unknown_tool(tools, &request.name, &context));
        }
        let call = ToolCall::new(
            request_id_text(&context.id),
            request.name,
            Value::Object(request.arguments.unwrap_or_default()),
        );
        // rmcp cancels `context.ct` on `notifications/cancelled`. It is this request's
        // alone (a child of the token rmcp keeps), so the call uses it as its own token and
        // a timeout may cancel it.
        // A request of protocol 2026-07-28 says itself what its client can do and which
        // log messages it wants; a 2025 session's requests share what `initialize` said.
        let request_client = RequestClient::of(&context);
        let extensions = match &request_client {
            Some(client) => {
                let mut state = Extensions::new();
                state.insert(self.request_peer(&context, client));
                state
            }
            None => self.connection_state(&context),
        };
        let mut ctx = ToolContext::new(session_key(&context))
            .with_cancellation(context.ct.clone())
            .with_extensions(extensions);
        if let Some(principal) = access::principal(&context) {
            ctx = ctx.with_state(principal);
        }
        // This call's own peer, holding its answers and questions, in place of the
        // connection's.
        let call_peer = input.map(|input| {
            let peer = match &request_client {
                Some(client) => self.request_peer(&context, client),
                None => McpPeer::new(context.peer.clone(), self.log_level.clone()),
            };
            peer.with_input(input)
        });
        if let Some(peer) = &call_peer {
            ctx = ctx.with_state(peer.clone());
        }
        let tools = catalog.runner.tools();
        let tool = tools.get(&call.name);
        let reporter = match (context.meta.get_progress_token(), tool) {
            (Some(progress_token), Some(tool)) => {
                let reporter = Arc::new(ProgressReporter {
                    tool: tool.clone(),
                    last: Mutex::new(None),
                    peer: context.peer.clone(),
                    token: progress_token,
                    runtime: tokio::runtime::Handle::current(),
                    forwarding: OnceLock::new(),
                });
                ctx = ctx.with_reporter(reporter.clone());
                Some(reporter)
            }
            _ => None,
        };
        let elicit;
        let approver: &dyn Approver = match self.shared.options.approval {
            ApprovalMode::Elicit => {
                elicit =
                    ElicitApproval(call_peer.clone().unwrap_or_else(|| match &request_client {
                        Some(client) => self.request_peer(&context, client),
                        None => McpPeer::new(context.peer.clone(), self.log_level.clone()),
                    }));
                &elicit
            }
            ApprovalMode::TrustClient => &ApproveAll,
        };
        // The tool runs in the pipeline's own task; a request it makes of its client
        // belongs to this call (see `CALL_ORIGIN`). A tool that does not read its context
        // has no client to ask, and is spared the scope's allocations.
        let mut options = CallOptions::new();
        if tool.is_some_and(|tool| tool.uses_context()) {
            options = options.with_scope(Arc::new(RequestScope(context.id.clone())));
        }
        let result = catalog.runner.run_with(call, ctx, approver, options).await;
        // Whatever ended the call, the tool's own work is told to stop.
        context.ct.cancel();
        // Progress goes out before the result: clients stop listening for a request's
        // progress once its response arrives.
        if let Some(reporter) = reporter {
            reporter.finish().await;
        }
        // The tool needed what the client did not declare: the request is refused as
        // the protocol says, rather than answered with the tool's failure.
        if let Some(refusal) = request_client.and_then(|client| client.missing_capability()) {
            return Err(refusal);
        }
        call_result(result)
    }
}

/// A finished call as MCP answers it: a tool result (an error result included), or a
/// protocol error for an unknown tool.
fn call_result(result: ToolCallResult) -> Result<rmcp::model::CallToolResult, McpError> {
    match result.outcome {
        ToolOutcome::Ok(content) => Ok(success_result(content)),
        // MCP: an unknown tool is a protocol error (-32602), not a tool result.
        ToolOutcome::Err(error) if error.kind() == ToolErrorKind::UnknownTool => {
            Err(McpError::invalid_params(error.message().to_owned(), None))
        }
        ToolOutcome::Err(error) => Ok(error_result(&error)),
        // Nothing answers an external tool's call (or a paused one) over MCP.
        ToolOutcome::PendingApproval | ToolOutcome::PendingExternal | ToolOutcome::PendingInput => {
            Ok(error_result(&ToolError::execution(format!(
                "tool `{}` is external: its output must be supplied by the application, \
                 which an MCP server cannot wait for",
                result.call.name
            ))))
        }
    }
}

/// Marks the request a call answers while its tool runs, so that what the tool asks of
/// its client travels with the call, and the call waits for the answer without holding
/// its place under the limit (see [`CALL_ORIGIN`]).
struct RequestScope(RequestId);

impl CallScope for RequestScope {
    fn scope<'a>(&'a self, call: ScopedFuture<'a>, permit: &CallPermit) -> ScopedFuture<'a> {
        let origin = CallOrigin {
            request: self.0.clone(),
            permit: permit.clone(),
        };
        Box::pin(CALL_ORIGIN.scope(origin, call))
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("tools", &self.tools())
            .field("options", &self.shared.options)
            .finish()
    }
}

fn request_id_text(id: &RequestId) -> String {
    match id {
        NumberOrString::String(id) => id.to_string(),
        NumberOrString::Number(n) => n.to_string(),
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
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .enable_tasks()
            .build();
        self.feature_capabilities(&mut capabilities);
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
        let catalog = shared.catalog();
        let tools = catalog.runner.tools();
        let activation = tools.activation_context(&ToolContext::new(session_key(&context)));
        let page_size = shared.options.page_size.max(1);
        let mut page = Vec::new();
        let mut next = None;
        for listed in catalog.listing.iter().filter(|l| l.index >= start) {
            if !access::may_use(&context, &listed.tool.name) {
                continue;
            }
            if listed.deferred {
                let Some(tool) = tools.get(&listed.tool.name) else {
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
        // Caching hints (protocol 2026-07-28). Private: what a caller sees depends on
        // its scopes and its session's activations.
        if RequestClient::of(&context).is_some() {
            let ttl = u64::try_from(shared.options.list_ttl.as_millis()).unwrap_or(u64::MAX);
            result.ttl_ms = Some(ttl);
            result.cache_scope = Some(CacheScope::Private);
        }
        Ok(result)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp narrows this to what the client asked. Resource updates are accepted for
        // the URIs asked about: a stream only hears of those `resource_updated` names.
        let features = self.shared.features();
        let mut accepted = SubscriptionFilter::builder().tools_list_changed();
        if features.prompts.is_some() {
            accepted = accepted.prompts_list_changed();
        }
        if features.resources.is_some() {
            accepted = accepted.resources_list_changed();
            if let Some(uris) = &requested.resource_subscriptions {
                accepted = accepted.resource_subscriptions(uris.iter().cloned());
            }
        }
        Some(accepted.build())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.serve_list_resources(request, &context)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        self.serve_list_resource_templates(request, &context)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.serve_read_resource(request, &context)
            .await
            .map(Into::into)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serve_subscribe(request, &context)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.serve_unsubscribe(request);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.serve_list_prompts(request, &context)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.serve_get_prompt(request, context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        self.serve_complete(request, &context).await
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let _open = self.shared.listeners.open(
            access::principal(context.request_context()),
            context.sink().clone(),
            self.shared.options.max_listens_per_caller,
        )?;
        // Open until the client ends the request (or goes away).
        context.cancelled().await;
        Ok(())
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + Send + '_ {
        // Boxed: rmcp's request future holds the handler's future inline and is moved
        // several times on its way into a task; a call's whole state is over a kilobyte,
        // a box is one pointer (callgrind: most of the cost we added to a round trip).
        // From MCP 2026-07-28 a call asks its caller by `InputRequiredResult`.
        Box::pin(async move {
            // A tool that runs as a task, called by a client that supports tasks.
            let support = self
                .shared
                .catalog()
                .runner
                .tools()
                .get(&request.name)
                .map(|tool| tool.task_support());
            match support.and_then(|support| tasks::plan(support, &context)) {
                Some(tasks::TaskCall::Task) => {
                    return self.start_task(request, context).await.map(Into::into);
                }
                // Its task would run on a task runner, where nobody can answer what it
                // asks on the call: starting it is refused, before the tool runs.
                Some(tasks::TaskCall::OnDemand) if self.hands_tasks_off() => {
                    return self.start_task(request, context).await.map(Into::into);
                }
                Some(tasks::TaskCall::Refused(error)) => return Err(error),
                Some(tasks::TaskCall::OnDemand) => {
                    return input::call(self, request, context, input::TaskTurn::Offered).await;
                }
                None => {}
            }
            if input::asks_by_result(&context) {
                input::call(self, request, context, input::TaskTurn::Never).await
            } else {
                self.run_call(request, context).await.map(Into::into)
            }
        })
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.get_task_state(request, &context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.update_task_state(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.cancel_task_state(request, &context).await
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.shared
            .catalog()
            .listing
            .iter()
            .find(|l| l.tool.name == name)
            .map(|l| l.tool.clone())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Over HTTP, the endpoint may now answer the MCP session's plain calls itself.
        if let Some(sessions) = self.http_sessions.as_ref().and_then(Weak::upgrade)
            && let Some(parts) = context.extensions.get::<hyper::http::request::Parts>()
        {
            sessions.initialized(parts, self.clone(), context.peer.clone());
        }
        // From now on the session hears of changes to the tools.
        self.shared.live_clients().push(context.peer);
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

/// What a call reports, on its way to `notifications/progress`.
struct ProgressReporter {
    tool: Arc<dyn toolwright_core::Tool>,
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

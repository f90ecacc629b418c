//! [`McpClient`]: an MCP server's tools as a [`ToolSet`], and (in `features`) its
//! resources, prompts and completions.

pub(crate) mod features;
pub(crate) mod http;
#[cfg(feature = "oauth")]
pub(crate) mod oauth;
pub(crate) mod tasks;

use self::http::{Elicit, HttpClientOptions};
use crate::convert::{annotations_from_mcp, result_from_mcp};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, ClientResult, DEFAULT_MRTR_MAX_ROUNDS, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode, FormElicitationCapability,
    Implementation, InputRequest, InputRequiredResult, InputResponses, NumberOrString,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestId, ServerNotification,
    ServerRequest, ServerResult, SubscriptionFilter,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, NotificationContext,
    PeerRequestOptions, RequestContext, RoleClient, RunningService, ServiceError, Subscription,
};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Service};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use tokio::process::Command;
use tokio::sync::watch;
use toolwright_core::{
    AgentError, AgentResult, Content, Tool, ToolContext, ToolError, ToolErrorKind, ToolSet,
    async_trait,
    tool::{ToolAnnotations, ToolMetadata},
};

/// A connection to an MCP server. [`toolset`](Self::toolset) turns the server's tools
/// into [`Tool`]s that call it, so an agent can mix local and remote tools.
///
/// The connection stays open while the client or any tool made from it is alive;
/// [`close`](Self::close) ends it at once (and, for stdio, the child process).
///
/// # When the server's tools change
///
/// A server that adds or removes tools while connected sends
/// `notifications/tools/list_changed` (on protocol 2026-07-28, on the
/// `subscriptions/listen` stream the client opens when the server announces tool
/// changes); the client then lists the tools again, so
/// [`toolset`](Self::toolset) and [`tool_names`](Self::tool_names) give the server's
/// current tools. A [`ToolSet`] made earlier, and an agent built with it, keeps the
/// tools it was made with: one the server no longer offers answers with an
/// [`UnknownTool`](ToolErrorKind::UnknownTool) error saying so, which the model reads
/// like any tool error. To offer the new tools, build the agent again from a fresh
/// `toolset()` when [`tool_changes`](Self::tool_changes) says the list changed; runs are
/// values ([`RunState`](toolwright_core::RunState)), so a run goes on with the new agent:
///
/// ```no_run
/// # async fn demo(
/// #     client: toolwright_mcp::McpClient,
/// #     build: impl Fn(toolwright_core::ToolSet) -> toolwright_core::AgentResult<toolwright_core::Agent>,
/// # ) -> toolwright_core::AgentResult<()> {
/// let mut agent = build(client.toolset()?)?;
/// let mut changes = client.tool_changes();
/// let mut run = agent.start("What is on my calendar?");
/// loop {
///     agent.run(&mut run).await?;
///     // ... read the answer, add the user's next message to `run` ...
///     if changes.has_changed().unwrap_or(false) {
///         changes.mark_unchanged();
///         agent = build(client.toolset()?)?;
///     }
/// }
/// # }
/// ```
pub struct McpClient {
    service: Arc<RunningService<RoleClient, ClientState>>,
    origin: String,
    version: String,
}

impl McpClient {
    /// Starts `command` and speaks MCP over its stdin/stdout. Its stderr is inherited.
    pub async fn connect_stdio(mut command: Command) -> AgentResult<Self> {
        command.kill_on_drop(true);
        let (transport, _stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                AgentError::InvalidState(format!("could not start the MCP server: {e}"))
            })?;
        let service = ClientState::default()
            .serve_with_lifecycle(transport, lifecycle())
            .await
            .map_err(|e| {
                AgentError::InvalidState(format!("MCP initialization with the child failed: {e}"))
            })?;
        Self::from_service(service).await
    }

    /// Connects to a Streamable HTTP endpoint such as `http://127.0.0.1:8000/mcp`
    /// (`https` works too).
    ///
    /// A response stream that breaks mid-call is resumed up to five times, over about six
    /// seconds; then the call fails, rather than waiting forever for a server that is
    /// gone.
    pub async fn connect_http(url: &str) -> AgentResult<Self> {
        Self::connect_http_with(url, &HttpClientOptions::new()).await
    }

    /// [`connect_http`](Self::connect_http), sending the headers and bearer token of
    /// `options` with every request:
    ///
    /// ```no_run
    /// # async fn demo() -> toolwright_core::AgentResult<()> {
    /// use toolwright_mcp::{HttpClientOptions, McpClient};
    /// let options = HttpClientOptions::new().with_bearer_token("s3cret");
    /// let client = McpClient::connect_http_with("https://tools.example.com/mcp", &options).await?;
    /// # Ok(()) }
    /// ```
    ///
    /// TLS is rustls with the `ring` provider, configured for this client alone: the
    /// process's default provider is neither needed nor installed.
    pub async fn connect_http_with(url: &str, options: &HttpClientOptions) -> AgentResult<Self> {
        // rmcp's default resumes a broken stream forever; a call would then never end, so
        // the options always set a bounded policy.
        let connect = async |lifecycle, version| {
            let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
            let transport = options
                .transport(config)
                .map_err(|e| AgentError::InvalidState(format!("cannot connect to {url}: {e}")))?;
            let state = ClientState {
                elicit: options.elicit.clone(),
                initialize_version: version,
                ..ClientState::default()
            };
            Ok::<_, AgentError>(state.serve_with_lifecycle(transport, lifecycle).await)
        };
        let legacy = ProtocolVersion::LATEST_WITH_INITIALIZE;
        let first = match &options.protocol {
            Some(version) => {
                let (lifecycle, version) = pinned_lifecycle(version)?;
                connect(lifecycle, version).await?
            }
            None => connect(lifecycle(), legacy.clone()).await?,
        };
        let service = match first {
            // A server that knows discovery but none of its versions, or that answers
            // an unknown method with an empty result instead of an error, speaks an
            // older protocol, which opens with `initialize` (over a fresh connection:
            // the first one saw a failed negotiation).
            Err(ClientInitializeError::NoCompatibleProtocolVersion {
                server_supported, ..
            }) if options.protocol.is_none()
                && server_supported.iter().any(ProtocolVersion::has_initialize) =>
            {
                connect(ClientLifecycleMode::Initialize, legacy).await?
            }
            Err(ClientInitializeError::ExpectedInitResult(_)) if options.protocol.is_none() => {
                connect(ClientLifecycleMode::Initialize, legacy).await?
            }
            service => service,
        }
        .map_err(|e| {
            AgentError::InvalidState(format!("MCP initialization with {url} failed: {e}"))
        })?;
        Self::from_service(service).await
    }

    async fn from_service(service: RunningService<RoleClient, ClientState>) -> AgentResult<Self> {
        // Listening before the first listing, so that no change falls between the two.
        if let Some(subscription) = listen_for_tool_changes(service.peer()).await {
            let listing = service.service().listing.clone();
            let peer = service.peer().clone();
            // Ends with the connection: closing it ends the subscription's stream.
            tokio::spawn(async move { follow_tool_changes(subscription, &listing, &peer).await });
        }
        service
            .service()
            .listing
            .refresh(service.peer())
            .await
            .map_err(|e| AgentError::InvalidState(format!("MCP tools/list failed: {e}")))?;
        let (origin, version) = service
            .peer()
            .peer_info()
            .and_then(|info| {
                info.server_info
                    .as_ref()
                    .map(|s| (s.name.clone(), s.version.clone()))
            })
            .unwrap_or_else(|| ("mcp".to_owned(), "unknown".to_owned()));
        Ok(Self {
            service: Arc::new(service),
            origin,
            version,
        })
    }

    /// The server's `serverInfo.name`.
    pub fn server_name(&self) -> &str {
        &self.origin
    }

    /// The MCP protocol version spoken with the server, such as `2026-07-28` (found by
    /// `server/discover`) or `2025-11-25` (agreed by `initialize`, for servers that
    /// predate discovery).
    pub fn protocol_version(&self) -> String {
        self.service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_default()
    }

    /// Names of the server's tools, as it last listed them.
    pub fn tool_names(&self) -> Vec<String> {
        self.listing()
            .current()
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// The server's tools as a [`ToolSet`], as it last listed them. Fails if a remote
    /// tool cannot be registered (a name outside `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, a
    /// schema whose root is not an object); the error names it.
    pub fn toolset(&self) -> AgentResult<ToolSet> {
        let mut set = ToolSet::new();
        for tool in self.listing().current().iter() {
            set.register_tool(RemoteTool::new(
                self.service.clone(),
                tool,
                &self.origin,
                &self.version,
            ))?;
        }
        Ok(set)
    }

    /// Watches the server's tool list: the value is how many times the list has been
    /// read again since the client connected, and
    /// [`changed`](tokio::sync::watch::Receiver::changed) wakes after each new reading
    /// (on `notifications/tools/list_changed`, or [`refresh_tools`](Self::refresh_tools)).
    /// Then [`toolset`](Self::toolset) gives the new tools.
    pub fn tool_changes(&self) -> watch::Receiver<u64> {
        self.listing().version.subscribe()
    }

    /// Lists the server's tools again now, as the client does on its own when the server
    /// announces a change; for servers that change their tools without announcing it.
    pub async fn refresh_tools(&self) -> AgentResult<()> {
        self.listing()
            .refresh(self.service.peer())
            .await
            .map_err(|e| AgentError::InvalidState(format!("MCP tools/list failed: {e}")))
    }

    fn listing(&self) -> &Listing {
        &self.service.service().listing
    }

    /// Ends the session, also for tools made from this client (their calls then fail);
    /// a stdio child is shut down.
    pub async fn close(self) {
        match Arc::try_unwrap(self.service) {
            Ok(service) => {
                let _ = service.cancel().await;
            }
            Err(shared) => shared.cancellation_token().cancel(),
        }
    }
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.origin)
            .field("tools", &self.tool_names())
            .finish()
    }
}

/// How the client opens a connection: `server/discover` first (MCP 2026-07-28, which
/// has no handshake), and the `initialize` handshake of 2025-11-25 when the server
/// answers that it does not know discovery (or does not answer it within ten seconds).
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

/// How the client opens a connection that speaks `version` only: by discovery or by
/// `initialize`, as the version has it. An unknown version is an error naming the
/// known ones.
fn pinned_lifecycle(version: &str) -> AgentResult<(ClientLifecycleMode, ProtocolVersion)> {
    let known = ProtocolVersion::KNOWN_VERSIONS;
    let Some(version) = known.iter().find(|known| known.as_str() == version) else {
        let names: Vec<&str> = known.iter().map(ProtocolVersion::as_str).collect();
        return Err(AgentError::InvalidState(format!(
            "unknown MCP protocol version `{version}`; this client speaks {}",
            names.join(", ")
        )));
    };
    let lifecycle = if version.has_initialize() {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        }
    };
    Ok((lifecycle, version.clone()))
}

/// How long a 2026-07-28 server may take to acknowledge the client's
/// `subscriptions/listen` before the client goes on without tool-change notices.
const LISTEN_ACKNOWLEDGEMENT: Duration = Duration::from_secs(10);

/// Opens the `subscriptions/listen` stream that carries a 2026-07-28 server's tool
/// changes, when the server announces such changes. `None` on older protocols (their
/// notices reach [`ClientHandler::on_tool_list_changed`]) and when the server refuses or
/// does not acknowledge: the client then works with the tools as first listed, and
/// [`McpClient::refresh_tools`] still lists them again on demand.
async fn listen_for_tool_changes(peer: &rmcp::Peer<RoleClient>) -> Option<Subscription> {
    let info = peer.peer_info()?;
    let announces_changes = info
        .capabilities
        .tools
        .as_ref()
        .and_then(|tools| tools.list_changed)
        .unwrap_or(false);
    if info.protocol_version.has_initialize() || !announces_changes {
        return None;
    }
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    match tokio::time::timeout(LISTEN_ACKNOWLEDGEMENT, peer.listen(filter)).await {
        Ok(Ok(subscription)) => Some(subscription),
        Ok(Err(error)) => {
            tracing::warn!(%error, "the MCP server refused to announce its tool changes");
            None
        }
        Err(_) => {
            tracing::warn!("the MCP server did not acknowledge the tool-change subscription");
            None
        }
    }
}

/// Lists the tools again on each change the subscription announces, until it ends.
async fn follow_tool_changes(
    mut subscription: Subscription,
    listing: &Listing,
    peer: &rmcp::Peer<RoleClient>,
) {
    loop {
        match subscription.next().await {
            Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                // A failed listing keeps the last one; the next notice tries again.
                if let Err(error) = listing.refresh(peer).await {
                    tracing::warn!(%error, "listing the MCP server's tools again failed");
                }
            }
            Ok(Some(_)) => {}
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(%error, "the MCP server's tool-change subscription failed");
                return;
            }
        }
    }
}

/// What the client side of a connection keeps: the calls in flight that want the
/// server's progress, by the progress token rmcp put on their request, and the server's
/// tools as last listed.
pub(crate) struct ClientState {
    in_flight: Mutex<HashMap<ProgressToken, ToolContext>>,
    /// The application's answer to form elicitations, if it gives any.
    elicit: Option<Arc<Elicit>>,
    /// Shared with the task that follows a 2026-07-28 server's tool changes.
    listing: Arc<Listing>,
    /// The version `initialize` offers, when the connection opens with it.
    initialize_version: ProtocolVersion,
}

/// The server's tools as last listed.
struct Listing {
    tools: RwLock<Arc<[rmcp::model::Tool]>>,
    /// How many times the list was read again since the first listing.
    version: watch::Sender<u64>,
    /// One listing at a time: two notices in a row must not let an older answer
    /// overwrite a newer one.
    refreshing: tokio::sync::Mutex<()>,
    /// Whether the first listing is done.
    listed: AtomicBool,
}

impl Default for Listing {
    fn default() -> Self {
        Self {
            tools: RwLock::new(Arc::from([])),
            version: watch::Sender::new(0),
            refreshing: tokio::sync::Mutex::new(()),
            listed: AtomicBool::new(false),
        }
    }
}

impl Listing {
    fn current(&self) -> Arc<[rmcp::model::Tool]> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Lists the server's tools and keeps the answer. The first listing is the
    /// connection's own; each later one bumps the version.
    async fn refresh(&self, peer: &rmcp::Peer<RoleClient>) -> Result<(), ServiceError> {
        let _one_at_a_time = self.refreshing.lock().await;
        let tools = peer.list_all_tools().await?;
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = tools.into();
        if self.listed.swap(true, Ordering::Relaxed) {
            self.version.send_modify(|version| *version += 1);
        }
        Ok(())
    }

    /// Whether the server listed a tool named `name` last time.
    fn offers(&self, name: &str) -> bool {
        self.current().iter().any(|tool| tool.name == name)
    }
}

impl Default for ClientState {
    fn default() -> Self {
        Self {
            in_flight: Mutex::default(),
            elicit: None,
            listing: Arc::default(),
            initialize_version: ProtocolVersion::LATEST_WITH_INITIALIZE,
        }
    }
}

impl ClientState {
    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ToolContext>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ClientHandler for ClientState {
    fn get_info(&self) -> ClientConfig {
        // When the client opens with `initialize`, it offers the newest protocol that
        // has it (2026-07-28 dropped the handshake), or the version the application
        // pinned; discovery sends the capabilities and names its own version.
        let mut capabilities = ClientCapabilities::default();
        if self.elicit.is_some() {
            let mut elicitation = ElicitationCapability::new();
            elicitation.form = Some(FormElicitationCapability::default());
            capabilities.elicitation = Some(elicitation);
        }
        // Calls of task tools may answer with a task, which the client awaits.
        capabilities.extensions = ClientCapabilities::builder()
            .enable_tasks()
            .build()
            .extensions;
        ClientConfig::new(
            capabilities,
            Implementation::new("toolwright-mcp", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.initialize_version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let (
            Some(elicit),
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            },
        ) = (&self.elicit, request)
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(requested_schema).unwrap_or_default();
        Ok(match elicit(message, schema).await {
            Some(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content))
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        })
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        // Spawned by rmcp apart from its message loop, so waiting for the answer here is
        // fine. A failed listing keeps the last one; the next notice tries again.
        if let Err(error) = self.listing.refresh(&context.peer).await {
            tracing::warn!(%error, "listing the MCP server's tools again failed");
        }
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let ctx = self.in_flight().get(&params.progress_token).cloned();
        if let Some(ctx) = ctx {
            let mut value = json!({"progress": params.progress});
            if let Some(total) = params.total {
                value["total"] = json!(total);
            }
            if let Some(message) = params.message {
                value["message"] = json!(message);
            }
            // A value the local progress validator rejects is the remote server's
            // doing; the call itself goes on.
            let _ = ctx.emit_progress(value);
        }
    }
}

/// Removes a call from the progress routing however the call ends.
struct InFlight<'a> {
    state: &'a ClientState,
    token: ProgressToken,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.state.in_flight().remove(&self.token);
    }
}

/// Tells the server a call is cancelled when the caller stops waiting for it before its
/// answer, whether by cancelling the call's token or by dropping the call (as an executor
/// does at a timeout): the server's tool then stops too, instead of running on for
/// nobody.
struct CancelUnanswered {
    peer: rmcp::Peer<RoleClient>,
    /// The call's request id while it waits for its answer.
    waiting: Option<RequestId>,
}

impl CancelUnanswered {
    /// The notice for the server, once: `None` after the call's answer, or a notice.
    fn notice(&mut self) -> Option<CancelledNotificationParam> {
        let id = self.waiting.take()?;
        Some(CancelledNotificationParam::new(
            Some(id),
            Some("cancelled by the caller".to_owned()),
        ))
    }
}

impl Drop for CancelUnanswered {
    fn drop(&mut self) {
        let Some(notice) = self.notice() else {
            return;
        };
        // Dropped outside a runtime, the notice cannot be sent; the server's own timeout
        // then ends its call.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let peer = self.peer.clone();
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(notice).await;
            });
        }
    }
}

/// One tool of an MCP server, callable like a local tool.
struct RemoteTool {
    /// Shared with the client: the session lives while any of its tools does.
    service: Arc<RunningService<RoleClient, ClientState>>,
    name: Arc<str>,
    description: Arc<str>,
    schema: Value,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
    origin: String,
    version: String,
}

impl RemoteTool {
    fn new(
        service: Arc<RunningService<RoleClient, ClientState>>,
        tool: &rmcp::model::Tool,
        origin: &str,
        version: &str,
    ) -> Self {
        Self {
            service,
            name: Arc::from(tool.name.as_ref()),
            description: Arc::from(tool.description.as_deref().unwrap_or_default()),
            schema: Value::Object((*tool.input_schema).clone()),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|s| Value::Object((**s).clone())),
            annotations: annotations_from_mcp(tool),
            origin: origin.to_owned(),
            version: version.to_owned(),
        }
    }
}

impl RemoteTool {
    /// The error for a call of this tool that failed with `answer` after the server
    /// stopped offering it.
    fn removed(&self, answer: &ToolError) -> ToolError {
        let offered = self.service.service().listing.current();
        let unknown = ToolError::unknown_tool(&self.name, offered.iter().map(|t| t.name.as_ref()));
        let mut message = format!(
            "{} (the MCP server `{}` changed its tools and no longer offers `{}`",
            unknown.message(),
            self.origin,
            self.name
        );
        if answer.message() != unknown.message() {
            message.push_str("; it answered: ");
            message.push_str(answer.message());
        }
        message.push(')');
        ToolError::new(ToolErrorKind::UnknownTool, message)
    }
}

#[async_trait]
impl Tool for RemoteTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn schema(&self) -> Value {
        self.schema.clone()
    }

    fn output_schema(&self) -> Option<Value> {
        self.output_schema.clone()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations.clone()
    }

    fn metadata(&self) -> ToolMetadata {
        ToolMetadata {
            origin: self.origin.clone(),
            version: self.version.clone(),
            requirements: vec!["mcp".to_owned()],
            ..ToolMetadata::custom(&self.name, &self.description)
        }
    }

    async fn call(&self, args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let Value::Object(arguments) = args else {
            return Err(
                ToolError::invalid_arguments("Invalid arguments: expected a JSON object").into(),
            );
        };
        let mut params =
            CallToolRequestParams::new(self.name.to_string()).with_arguments(arguments.clone());
        // A 2026-07-28 server that needs input answers `input_required`; the call is then
        // sent again with the answers and the server's state, each time as a new request.
        let mut state_only_rounds = 0u32;
        for _round in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let asked = match self.call_once(params.clone(), ctx).await {
                Ok(Round::InputRequired(asked)) => asked,
                Ok(Round::Complete(result)) => {
                    return Ok(self.unless_removed(result_from_mcp(result))?);
                }
                Err(error) if error.kind() == ToolErrorKind::Cancelled => return Err(error.into()),
                Err(error) => return Ok(self.unless_removed(Err(error))?),
            };
            let retry = tokio::select! {
                retry = self.answer(asked, &mut state_only_rounds) => retry,
                () = ctx.cancellation().cancelled() => {
                    return Err(ToolError::cancelled(&self.name).into());
                }
            };
            (params.input_responses, params.request_state) = retry?;
        }
        Err(ToolError::execution(format!(
            "the MCP server still asked for input after {DEFAULT_MRTR_MAX_ROUNDS} rounds of \
             answers to `{}`, so the call was given up",
            self.name
        ))
        .into())
    }
}

/// What one round of a call brought: the result, or the server's questions.
enum Round {
    Complete(rmcp::model::CallToolResult),
    InputRequired(InputRequiredResult),
}

impl RemoteTool {
    /// Sends `params` once, with the server's progress routed to `ctx` and the server
    /// told if the caller stops waiting.
    async fn call_once(
        &self,
        params: CallToolRequestParams,
        ctx: &ToolContext,
    ) -> Result<Round, ToolError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = self.service.peer();
        let handle = peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.failed(e))?;
        let mut unanswered = CancelUnanswered {
            peer: peer.clone(),
            waiting: Some(handle.id.clone()),
        };
        // The server's progress for this call reaches the caller's context (and from
        // there its reporter), as a local tool's would.
        let state = self.service.service();
        state
            .in_flight()
            .insert(handle.progress_token.clone(), ctx.clone());
        let _in_flight = InFlight {
            state,
            token: handle.progress_token.clone(),
        };
        let result = tokio::select! {
            result = handle.await_response() => result,
            () = ctx.cancellation().cancelled() => {
                // Awaited here, so the notice is on its way before the caller moves on.
                if let Some(notice) = unanswered.notice() {
                    let _ = peer.notify_cancelled(notice).await;
                }
                return Err(ToolError::cancelled(&self.name));
            }
        };
        unanswered.waiting = None;
        match result {
            Ok(ServerResult::CallToolResult(result)) => Ok(Round::Complete(result)),
            Ok(ServerResult::InputRequiredResult(asked)) => Ok(Round::InputRequired(asked)),
            Ok(ServerResult::CreateTaskResult(created)) => {
                let task = tasks::McpTask::new(self.service.clone(), self.name.clone(), created);
                tokio::select! {
                    result = task.settle() => result.map(Round::Complete),
                    () = ctx.cancellation().cancelled() => {
                        let _ = task.cancel().await;
                        Err(ToolError::cancelled(&self.name))
                    }
                }
            }
            Ok(_) => Err(self.failed(ServiceError::UnexpectedResponse)),
            Err(error) => Err(self.failed(error)),
        }
    }

    /// The answers to the server's questions, and its state echoed unchanged, for the
    /// call's next round. Each question goes to the handler that answers the same
    /// question sent as a server-to-client request on older protocols (so an
    /// application's elicitation handler answers both).
    async fn answer(
        &self,
        asked: InputRequiredResult,
        state_only_rounds: &mut u32,
    ) -> Result<(Option<InputResponses>, Option<String>), ToolError> {
        let requests = asked.input_requests.unwrap_or_default();
        if requests.is_empty() {
            let Some(state) = asked.request_state else {
                return Err(ToolError::execution(format!(
                    "the MCP server answered `{}` with `input_required` but asked nothing \
                     and sent no request state, so there is nothing to send again",
                    self.name
                )));
            };
            // Only state: the server is not ready yet. Asking again at once would
            // hammer it, so the wait grows, to at most a quarter second.
            let wait = 50u64 << (*state_only_rounds).min(2);
            *state_only_rounds += 1;
            tokio::time::sleep(Duration::from_millis(wait.min(250))).await;
            return Ok((None, Some(state)));
        }
        *state_only_rounds = 0;
        let answers = futures::future::try_join_all(
            requests
                .into_iter()
                .map(|(key, request)| self.answer_one(key, request)),
        )
        .await?;
        Ok((Some(answers.into_iter().collect()), asked.request_state))
    }

    /// One question's answer, under its key.
    async fn answer_one(
        &self,
        key: String,
        request: InputRequest,
    ) -> Result<(String, Value), ToolError> {
        answer_question(&self.service, &self.name, key, request).await
    }
    /// `error` as the model should see it.
    fn failed(&self, error: ServiceError) -> ToolError {
        service_error(&self.name, error)
    }

    /// Servers answer a call of a tool they dropped as a protocol error (ours) or as an
    /// error result (others); either way, once the listing lacks it, say so.
    fn unless_removed(
        &self,
        outcome: Result<Vec<Content>, ToolError>,
    ) -> Result<Vec<Content>, ToolError> {
        match outcome {
            Err(error) if !self.service.service().listing.offers(&self.name) => {
                Err(self.removed(&error))
            }
            outcome => outcome,
        }
    }
}

/// The answer to one question a server asked while calling `name` (in a call's
/// `InputRequiredResult`, or a task's `inputRequests`), by the handler that answers the
/// same question sent as a server-to-client request.
pub(crate) async fn answer_question(
    service: &RunningService<RoleClient, ClientState>,
    name: &str,
    key: String,
    request: InputRequest,
) -> Result<(String, Value), ToolError> {
    let (request, what) = match request {
        InputRequest::Elicitation(request) => (ServerRequest::ElicitRequest(request), "input"),
        InputRequest::CreateMessage(request) => (
            ServerRequest::CreateMessageRequest(request),
            "a model completion (sampling)",
        ),
        InputRequest::ListRoots(request) => (
            ServerRequest::ListRootsRequest(request),
            "the client's roots",
        ),
        other => {
            return Err(ToolError::execution(format!(
                "the MCP server asked a question this client does not know to go on \
                     with `{}`: {}",
                name,
                serde_json::to_string(&other).unwrap_or_default()
            )));
        }
    };
    let peer = service.peer().clone();
    let context = RequestContext::new(NumberOrString::String(key.as_str().into()), peer);
    let answer = service
        .service()
        .handle_request(request, context)
        .await
        .map_err(|error| {
            ToolError::execution(format!(
                "the MCP server asked for {what} to go on with `{}`, and this client \
                     could not give it: {}",
                name, error.message
            ))
        })?;
    let value = match answer {
        ClientResult::ElicitResult(result) => serde_json::to_value(result),
        ClientResult::CreateMessageResult(result) => serde_json::to_value(result),
        ClientResult::ListRootsResult(result) => serde_json::to_value(result),
        _ => Ok(Value::Null),
    }
    .map_err(|e| ToolError::execution(format!("an answer could not be encoded: {e}")))?;
    Ok((key, value))
}

/// A protocol-level failure as the model should see it.
fn service_error(tool: &str, error: ServiceError) -> ToolError {
    match error {
        ServiceError::McpError(data) if data.code == ErrorCode::INVALID_PARAMS => {
            let kind = if data.message.starts_with("Unknown tool") {
                ToolErrorKind::UnknownTool
            } else {
                ToolErrorKind::InvalidArguments
            };
            ToolError::new(kind, data.message.into_owned())
        }
        ServiceError::McpError(data) if data.code == ErrorCode::METHOD_NOT_FOUND => {
            ToolError::new(ToolErrorKind::UnknownTool, data.message.into_owned())
        }
        ServiceError::McpError(data) => ToolError::execution(format!(
            "MCP server error calling `{tool}`: {}",
            data.message
        )),
        ServiceError::Timeout { timeout } => ToolError::new(
            ToolErrorKind::Timeout,
            format!("MCP server did not answer `{tool}` within {timeout:?}"),
        ),
        other => ToolError::execution(format!(
            "calling `{tool}` on the MCP server failed: {other}"
        )),
    }
}

//! The [`Tool`] trait and the policies a tool declares.

use crate::model::content::Content;
use crate::model::context::{ActivationContext, ToolContext};
use crate::model::error::{AgentResult, ToolError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// Whether the model sees a tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolExposure {
    /// Always offered to the model.
    #[default]
    Direct,
    /// Offered, and callable, only while [`Tool::should_activate`] (`activate_when` in
    /// `#[tool]`) says so for the session and workspace asking; a call made while it
    /// says no is refused at dispatch as an unknown tool, whatever name the model
    /// guesses.
    ///
    /// Whether the tool is offered at all is the question here, and the runtime
    /// enforces the answer. An agent with [`ToolSearch`](crate::search::ToolSearch) on also
    /// loads an offered Deferred tool lazily, as other frameworks' "deferred tools" are:
    /// its schema reaches the model once a tool search found it.
    Deferred,
    /// Never offered and never callable by the model; the application may still call it
    /// directly.
    Hidden,
}

/// Machine-readable facts about a tool, for introspection and registries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolMetadata {
    /// The tool's name.
    pub name: String,
    /// The tool's description.
    pub description: String,
    /// Who provides the tool (a crate, a server).
    pub origin: String,
    /// The provider's version.
    pub version: String,
    /// Capabilities the tool needs, such as `"network"`.
    pub requirements: Vec<String>,
}

impl ToolMetadata {
    /// Metadata with the trait's defaults: origin `"custom"`, version `"unknown"`.
    pub fn custom(name: &str, description: &str) -> Self {
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            origin: "custom".to_owned(),
            version: "unknown".to_owned(),
            requirements: Vec::new(),
        }
    }
}

/// What happens to the run when a call fails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorPolicy {
    /// The error becomes the tool's result, so the model can try something else.
    #[default]
    ReturnToModel,
    /// The error ends the run.
    FailRun,
}

/// Whether one call must wait for a person before it runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// The tool does not say; the runtime decides (destructive tools need approval by
    /// default).
    #[default]
    Unspecified,
    /// The call waits for approval.
    Required,
    /// The call runs without approval.
    NotRequired,
}

impl From<bool> for ApprovalPolicy {
    fn from(required: bool) -> Self {
        if required {
            Self::Required
        } else {
            Self::NotRequired
        }
    }
}

/// Hints about a tool's effects (MCP's tool annotations). `None` means "not stated".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool reaches outside the application (the web, other services).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// Whether the tool is stated to be read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only == Some(true)
    }

    /// Whether the tool is stated to be destructive.
    pub fn is_destructive(&self) -> bool {
        self.destructive == Some(true)
    }

    /// Whether the tool is stated to be idempotent.
    pub fn is_idempotent(&self) -> bool {
        self.idempotent == Some(true)
    }
}

/// Whether a tool's calls may run as tasks: started now, answered later. An MCP server
/// (the `io.modelcontextprotocol/tasks` extension) answers the call of such a tool with a
/// task its client polls, when the client supports tasks; elsewhere the call runs as any
/// other. `#[tool(task)]` says [`Optional`](Self::Optional), `#[tool(task = "required")]`
/// [`Required`](Self::Required), `#[tool(task = "on_demand")]` [`OnDemand`](Self::OnDemand).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskSupport {
    /// Calls run and answer in one request.
    #[default]
    Forbidden,
    /// A call runs as a task for a caller that supports tasks, and as a plain call for
    /// one that does not.
    Optional,
    /// A call runs only as a task: a caller that does not support tasks is refused.
    Required,
    /// A call starts as a plain call, where the tool may ask its caller first, and
    /// becomes a task when the tool says so (`toolwright_mcp::McpPeer::continue_as_task`),
    /// for a caller that supports tasks; for one that does not, it stays a plain call.
    OnDemand,
}

/// How calls of one tool may overlap.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolConcurrency {
    /// At most this many calls of this tool run at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<usize>,
    /// Calls of tools in the same group never overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusive_group: Option<String>,
    /// `Some(true)`: the call runs alone, after the calls before it and before the calls
    /// after it. `Some(false)`: it may run in parallel with its neighbours. `None`:
    /// [`ToolConfig::parallel`](crate::model::config::ToolConfig::parallel) decides; by default
    /// read-only and idempotent tools run in parallel, others run alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<bool>,
}

/// A tool an LLM agent can call.
///
/// Four methods are required; everything else has a default, so the smallest tool is a
/// name, a description, a schema and a `call`. Most tools are written with `#[tool]` on an
/// `async fn`, or through [`TypedTool`](crate::model::typed::TypedTool), which derive all of this.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Unique identifier the model uses to call this tool. An implementation may return
    /// a `&'static str` literal, or a name it owns (one read at run time).
    fn name(&self) -> &str;

    /// What the tool does, written for the model.
    fn description(&self) -> &str;

    /// JSON Schema of the arguments; its root is `{"type": "object", ...}`.
    fn schema(&self) -> Value;

    /// Runs the tool.
    async fn call(&self, args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>>;

    /// Per-tool timeout; `None` uses `ToolConfig::default_tool_timeout_ms`.
    fn timeout_ms(&self) -> Option<u64> {
        None
    }

    /// Origin and version, for introspection.
    fn metadata(&self) -> ToolMetadata {
        ToolMetadata::custom(self.name(), self.description())
    }

    /// Whether the model sees the tool.
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    /// For [`ToolExposure::Deferred`] tools: whether the tool is offered now.
    async fn should_activate(&self, _ctx: &ActivationContext) -> bool {
        true
    }

    /// Whether the call with these arguments needs a person's approval first.
    fn approval(&self, _args: &Value) -> ApprovalPolicy {
        ApprovalPolicy::Unspecified
    }

    /// What a failure of this tool does to the run.
    fn on_error(&self) -> ErrorPolicy {
        ErrorPolicy::ReturnToModel
    }

    /// JSON Schema of the structured result, for tools that return JSON.
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// Hints about the tool's effects.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// How calls of this tool may overlap.
    fn concurrency(&self) -> ToolConcurrency {
        ToolConcurrency::default()
    }

    /// Whether the work is done outside the process: the run pauses until the
    /// application supplies the output, and [`call`](Self::call) is never invoked.
    fn is_external(&self) -> bool {
        false
    }

    /// Checks a result before it reaches the model; an `Err` fails the call with
    /// `Invalid tool output: ...`.
    fn validate_output(&self, _output: &[Content]) -> Result<(), String> {
        Ok(())
    }

    /// Checks a progress value before it is published; an `Err` is returned to the tool.
    fn validate_progress(&self, _progress: &Value) -> Result<(), String> {
        Ok(())
    }

    /// Whether a call may read its [`ToolContext`]: its state, its reporter, the client
    /// it came from. `false` promises the call needs nothing but its arguments, so a
    /// transport may answer it on a path that cannot carry requests to the client or
    /// progress (an MCP server over HTTP answers it with one JSON response). `#[tool]`
    /// says `false` for a fn with neither a `&ToolContext` nor a `State<T>` parameter.
    fn uses_context(&self) -> bool {
        true
    }

    /// Whether a call may run as a task (see [`TaskSupport`]); no, by default.
    fn task_support(&self) -> TaskSupport {
        TaskSupport::Forbidden
    }

    /// Example inputs: each an object of arguments, as the model would send them. A
    /// provider with a field for them (Anthropic's `input_examples`) shows them to the
    /// model beside the schema; the others leave them out.
    /// [`assert_dialects`](crate::dialect::assert_dialects) checks each against
    /// [`schema`](Self::schema). None, by default.
    fn input_examples(&self) -> Vec<Value> {
        Vec::new()
    }

    /// Whether the tool is sent in its provider's strict mode (`strict: true`, the
    /// schema in the strict dialect): `Some(true)` or `Some(false)` overrides the
    /// client's own setting for this tool, `None` (the default) keeps it. OpenAI (Chat
    /// Completions and Responses) and Anthropic honour it per tool; Gemini has no
    /// strict mode and ignores it.
    fn strict(&self) -> Option<bool> {
        None
    }
}

/// A tool whose work is done by the application, a queue or another service: the run
/// pauses at each call until the output is supplied for its call id.
#[derive(Debug, Clone)]
pub struct ExternalTool {
    name: Arc<str>,
    description: Arc<str>,
    schema: Value,
}

impl ExternalTool {
    /// An external tool: literals, or names and descriptions made at run time.
    pub fn new(name: impl Into<Arc<str>>, description: impl Into<Arc<str>>, schema: Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            schema,
        }
    }
}

#[async_trait]
impl Tool for ExternalTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn schema(&self) -> Value {
        self.schema.clone()
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        Err(ToolError::execution(format!(
            "tool `{}` is external: its output must be supplied by the application",
            self.name
        ))
        .into())
    }

    fn is_external(&self) -> bool {
        true
    }
}

/// The boxed future of [`Tool`]'s `async` methods, as `#[async_trait]` writes them.
pub(crate) type BoxFuture<'a, T> =
    std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// How a type is a [`Tool`] without an impl of its own: [`Route`](Self::Route) names the
/// [`ToolVia`] impl that answers for it. [`TypedTool`](crate::model::typed::TypedTool)s take theirs,
/// and the types `#[tool]` and `#[toolbox]` generate take the one reading the declaration
/// their runner holds, so no `#[tool]` fn writes out (and compiles) a `Tool` impl of its
/// own. Not a public API.
#[doc(hidden)]
pub trait ToolRoute {
    /// A marker type naming the route.
    type Route;
}

/// [`Tool`]'s methods, answered one way (`Route`) for every type taking that route. Not
/// a public API: see [`ToolRoute`].
#[doc(hidden)]
#[allow(missing_docs)]
pub trait ToolVia<Route>: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn schema(&self) -> Value;
    fn call<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, AgentResult<Vec<Content>>>;
    fn timeout_ms(&self) -> Option<u64>;
    fn metadata(&self) -> ToolMetadata;
    fn exposure(&self) -> ToolExposure;
    fn should_activate<'a>(&'a self, ctx: &'a ActivationContext) -> BoxFuture<'a, bool>;
    fn approval(&self, args: &Value) -> ApprovalPolicy;
    fn on_error(&self) -> ErrorPolicy;
    fn output_schema(&self) -> Option<Value>;
    fn annotations(&self) -> ToolAnnotations;
    fn concurrency(&self) -> ToolConcurrency;
    fn validate_output(&self, output: &[Content]) -> Result<(), String>;
    fn validate_progress(&self, progress: &Value) -> Result<(), String>;
    fn uses_context(&self) -> bool;
    fn task_support(&self) -> TaskSupport;
    fn input_examples(&self) -> Vec<Value>;
    fn strict(&self) -> Option<bool>;
}

impl<T> Tool for T
where
    T: ToolRoute + ToolVia<T::Route>,
{
    fn name(&self) -> &str {
        ToolVia::name(self)
    }

    fn description(&self) -> &str {
        ToolVia::description(self)
    }

    fn schema(&self) -> Value {
        ToolVia::schema(self)
    }

    fn call<'life0, 'life1, 'life2, 'async_trait>(
        &'life0 self,
        args: &'life1 Value,
        ctx: &'life2 ToolContext,
    ) -> BoxFuture<'async_trait, AgentResult<Vec<Content>>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        'life2: 'async_trait,
        Self: 'async_trait,
    {
        ToolVia::call(self, args, ctx)
    }

    fn timeout_ms(&self) -> Option<u64> {
        ToolVia::timeout_ms(self)
    }

    fn metadata(&self) -> ToolMetadata {
        ToolVia::metadata(self)
    }

    fn exposure(&self) -> ToolExposure {
        ToolVia::exposure(self)
    }

    fn should_activate<'life0, 'life1, 'async_trait>(
        &'life0 self,
        ctx: &'life1 ActivationContext,
    ) -> BoxFuture<'async_trait, bool>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        ToolVia::should_activate(self, ctx)
    }

    fn approval(&self, args: &Value) -> ApprovalPolicy {
        ToolVia::approval(self, args)
    }

    fn on_error(&self) -> ErrorPolicy {
        ToolVia::on_error(self)
    }

    fn output_schema(&self) -> Option<Value> {
        ToolVia::output_schema(self)
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolVia::annotations(self)
    }

    fn concurrency(&self) -> ToolConcurrency {
        ToolVia::concurrency(self)
    }

    fn validate_output(&self, output: &[Content]) -> Result<(), String> {
        ToolVia::validate_output(self, output)
    }

    fn validate_progress(&self, progress: &Value) -> Result<(), String> {
        ToolVia::validate_progress(self, progress)
    }

    fn uses_context(&self) -> bool {
        ToolVia::uses_context(self)
    }

    fn task_support(&self) -> TaskSupport {
        ToolVia::task_support(self)
    }

    fn input_examples(&self) -> Vec<Value> {
        ToolVia::input_examples(self)
    }

    fn strict(&self) -> Option<bool> {
        ToolVia::strict(self)
    }
}

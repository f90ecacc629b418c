#![doc = include_str!("../README.md")]
//!
//! # This crate
//!
//! The tool model and its runtime; the crate your tools depend on.
//!
//! ```
//! use toolwright_core::{ToolContext, tool, tools};
//!
//! /// Add two numbers.
//! #[tool(read_only)]
//! async fn add(
//!     /// The first addend
//!     a: f64,
//!     /// The second addend
//!     b: f64,
//! ) -> f64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let set = tools![add];
//! let out = set
//!     .call("add", &serde_json::json!({"a": 2, "b": 3}), &ToolContext::default())
//!     .await
//!     .unwrap();
//! assert_eq!(out[0].as_text(), Some("5.0"));
//! # }
//! ```
//!
//! A tool is anything implementing [`Tool`]. [`TypedTool`] derives the
//! schema and argument decoding from types; `#[tool]` derives everything from an
//! `async fn`. A [`ToolSet`] holds tools by name and enforces their exposure. A
//! [`CallRunner`] runs one call with every policy (exposure, approval, concurrency limits,
//! timeouts, retries, output budget); an [`Executor`](exec::Executor) runs one model
//! turn's calls through it; an [`Agent`] loops model → tools → model over an
//! [`LlmClient`], with a serializable [`RunState`] and an event stream. An MCP server runs
//! its calls through the same [`CallRunner`].
//!
//! # Modules
//!
//! The root holds what a first program needs, and [`prelude`] imports it in one line.
//! The rest is grouped by concept:
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`tool`](mod@tool) | the [`Tool`] trait, its metadata and policies, what a call receives and returns |
//! | [`toolset`] | [`ToolSet`], tool definitions, the binary's registry, per-set tool config |
//! | [`schema`] | argument schemas and decoding |
//! | [`dialect`] | each provider's JSON Schema subset, and checks that a set fits them |
//! | [`search`] | tool search: deferred tools found by the model instead of all sent |
//! | [`exec`] | running calls: [`CallRunner`], the executor, hooks, retries, run control |
//! | [`agent`] | the agent loop, its builder, events, usage limits |
//! | [`run`] | a run's state, its outcome, pending calls and reviews, stores and checkpoints |
//! | [`llm`] | the model client trait, requests, messages, usage |
//! | [`testing`] | model clients that need no network |
//!
//! # Approval, in one vocabulary
//!
//! A call may have to wait for a person. Every name for that starts from *approve* and
//! *deny*:
//!
//! | name | what it is |
//! | --- | --- |
//! | [`ApprovalPolicy`](tool::ApprovalPolicy) | whether a tool's calls need approval (`#[tool(require_approval)]`) |
//! | [`ApprovalRule`](exec::ApprovalRule) | an application-wide rule, asked before the tool's policy |
//! | [`Approver`](exec::Approver) | decides a call that needs approval while it runs: an agent pauses ([`ApprovalDecision::Waiting`](exec::ApprovalDecision)), an MCP server asks its client |
//! | [`ApproveAll`](exec::ApproveAll) | the approver that approves every call |
//! | [`PendingKind::Approval`](run::PendingKind) | a paused run's call waiting for a person |
//! | [`RunState::approve_by`] / [`deny_by`](RunState::deny_by), [`Agent::approve_with`] | the person's decision, by a [`Decider`](run::Decider) (who, why) |
//! | [`ApprovalRecord`](run::ApprovalRecord) | the decision as the run keeps it: its [`ApprovalVerdict`](run::ApprovalVerdict), who, when, why, corrected arguments |
//!
//! # Layers
//!
//! The source is in three folders, one per layer; a module imports only from its own
//! layer or below (a test checks it, and that no modules import each other in a cycle):
//! `model` (what a tool is, what a call carries), then `execution` (running calls),
//! then `agent_loop` (the agent, runs, stores).
//!
//! Where the model must reach up (a [`ToolContext`] reporting its call's progress to the
//! running turn), it holds a trait object of its own layer that the layer above
//! implements.

#![forbid(unsafe_code)]

// The source tree is in the three layers (a test checks that imports only point down);
// the public modules below present the same items by concept.
mod agent_loop;
mod execution;
mod model;

pub use agent_loop::testing;

pub use agent_loop::agent::Agent;
pub use agent_loop::llm::LlmClient;
pub use agent_loop::run::RunState;
pub use agent_loop::store::RunStore;
pub use execution::pipeline::CallRunner;
pub use model::config::ToolConfig;
pub use model::content::Content;
pub use model::context::{ActivationContext, ToolContext};
pub use model::error::{AgentError, AgentResult, ToolError, ToolErrorKind};
pub use model::extract::{Progress, State};
pub use model::message::{Message, ModelSettings};
pub use model::pending::RunOutcome;
pub use model::principal::Principal;
pub use model::set::ToolSet;
pub use model::tool::{Tool, ToolExposure, ToolMetadata};
pub use model::typed::TypedTool;

pub mod tool {
    //! What a tool is: the [`Tool`] trait and its metadata, what a call receives
    //! ([`ToolContext`], [`State`], [`Progress`]) and returns ([`Content`], [`ToolError`]).
    pub use crate::model::content::Content;
    pub use crate::model::context::{
        ActivationContext, CallReporter, Extensions, NextTurn, ToolContext,
    };
    pub use crate::model::error::{ToolError, ToolErrorKind};
    pub use crate::model::extract::{FromToolContext, Progress, State};
    pub use crate::model::outcome::{ToolCallResult, ToolOutcome};
    pub use crate::model::principal::Principal;
    pub use crate::model::tool::{
        ApprovalPolicy, ErrorPolicy, ExternalTool, TaskSupport, Tool, ToolAnnotations,
        ToolConcurrency, ToolExposure, ToolMetadata,
    };
    pub use crate::model::truncate::{truncate_error, truncate_output, truncate_text};
    pub use crate::model::typed::{TypedTool, into_content};
}

pub mod toolset {
    //! Tools collected by name: [`ToolSet`], what a model is shown of each
    //! ([`ToolDefinition`]), the binary's registry ([`RegisteredTool`]) and per-set
    //! overrides of a tool's policies ([`ToolConfig`]).
    pub use crate::model::config::{ParallelRule, ToolConfig};
    pub use crate::model::registry::RegisteredTool;
    pub use crate::model::set::{ToolDefinition, ToolSet, is_valid_tool_name};
}

pub mod schema {
    //! A tool's arguments: their JSON Schema and how a model's arguments are decoded.
    pub use crate::model::args::{MAX_ARGUMENT_DEPTH, decode_args};
    pub use crate::model::schema::ArgsSchema;
}

pub mod dialect {
    //! Provider schema dialects: one tool definition rendered for each provider's subset
    //! of JSON Schema, and checks that a set's schemas fit each of them.
    pub use crate::model::dialect::{
        Dialect, DialectError, MCP_HEADER_KEYWORD, UnknownDialect, Violation, assert_dialects,
        assert_dialects_for, check, dialect_report,
    };
}

pub mod search {
    //! Tool search: a model that carries hundreds of tools is shown a search instead of
    //! every schema ([`ToolSearch`]), through the provider's own tool search where it has
    //! one and otherwise through [`SearchTool`], a ranked search over names,
    //! descriptions and parameter docs ([`ToolIndex`]).
    pub use crate::model::search::{
        DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, SEARCH_TOOL, SearchHit, SearchTool, ToolIndex,
        ToolSearch, TurnTools,
    };
}

pub mod exec {
    //! Running calls: [`CallRunner`] runs one call with every policy (exposure,
    //! approval, limits, timeouts, retries, output budget), [`Executor`] one model turn's
    //! calls, with hooks and a [`RunControl`] to stop them.
    //!
    //! [`CallPermit`], [`CallScope`] and [`ScopedFuture`] are for servers that run calls
    //! on their own tasks (the MCP server does).
    pub use crate::execution::control::RunControl;
    pub use crate::execution::executor::{
        AppContext, CallHookFn, Executor, HookDecision, ResponseHookFn, TurnContext,
    };
    pub use crate::execution::pipeline::{
        ApprovalDecision, ApprovalRule, ApproveAll, Approver, CallOptions, CallPermit, CallRunner,
        CallScope, ScopedFuture,
    };
    pub use crate::model::retry::{RetryDecision, RetryPolicy};
}

pub mod agent {
    //! The agent loop: [`Agent`] calls a model, runs the tools it asks for, and loops,
    //! within [`UsageLimits`], reporting [`AgentEvent`]s as it goes.
    pub use crate::agent_loop::agent::{
        Agent, AgentBuilder, DEFAULT_MAX_TURNS, DEFAULT_OUTPUT_RETRIES, TypedOutcome,
    };
    pub use crate::agent_loop::stream::RunStream;
    pub use crate::execution::events::{AgentEvent, EventSink};
    pub use crate::model::error::{AgentError, AgentResult};
    pub use crate::model::usage::{RunUsage, UsageLimit, UsageLimits};
}

pub mod run {
    //! A run and its storage: the serializable [`RunState`], how it ended
    //! ([`RunOutcome`]), the calls waiting on a person and their review, and the
    //! [`RunStore`]s and checkpoints that keep runs across processes.
    pub use crate::agent_loop::checkpoint::{Checkpoint, CheckpointStep, Checkpointer};
    pub use crate::agent_loop::journal::{Journal, JournalStep};
    pub use crate::agent_loop::run::{
        ApprovalRecord, ApprovalVerdict, Decider, RunState, RunStatus,
    };
    pub use crate::agent_loop::seal::{MIN_STATE_KEY_LEN, STATE_FORMAT_VERSION};
    pub use crate::agent_loop::store::{RunRecord, RunStore, StoreError, WaitingRun};
    pub use crate::model::pending::{PendingCall, PendingKind, RunOutcome};
}

pub mod llm {
    //! Talking to a model: the [`LlmClient`] trait the provider clients implement, the
    //! request and the streamed answer, and the conversation's [`Message`]s.
    pub use crate::agent_loop::llm::{LlmClient, LlmRequest, LlmStream, collect_stream};
    pub use crate::model::llm_error::LlmError;
    pub use crate::model::message::{
        AssistantMessage, FinishReason, LlmEvent, Message, ModelSettings, OutputSchema, ToolCall,
        ToolChoice, ToolResultMessage, Usage,
    };
}

pub mod prelude {
    //! What most programs import: `use toolwright_core::prelude::*;`.
    pub use crate::{
        Agent, AgentError, AgentResult, Content, LlmClient, Message, Progress, RunOutcome,
        RunState, State, Tool, ToolContext, ToolError, ToolSet, tool, toolbox, tools,
    };
}

/// Turns an `async fn` into a tool.
///
/// ```
/// use toolwright_core::{Tool, ToolContext, ToolError, tool};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "lowercase")]
/// enum Unit { Celsius, Fahrenheit }
///
/// #[derive(Serialize, JsonSchema)]
/// struct Forecast { city: String, days: u8 }
///
/// /// Get current weather for a city.
/// ///
/// /// Uses the national weather service; results are cached for ten minutes.
/// #[tool(timeout = "5s", read_only)]
/// async fn get_weather(
///     /// City name, e.g. "Beijing"
///     city: String,
///     /// Temperature unit
///     unit: Option<Unit>,
///     #[arg(default = 1)] days: u8,
///     ctx: &ToolContext,
/// ) -> Result<Forecast, ToolError> {
///     Ok(Forecast { city, days })
/// }
///
/// // The fn stays callable as written; `get_weather {}` is the tool.
/// assert_eq!(get_weather {}.name(), "get_weather");
/// assert_eq!(get_weather {}.timeout_ms(), Some(5000));
/// ```
///
/// # What it generates
///
/// The fn is kept as written (less the `///` and `#[arg]` on its parameters). Beside it
/// comes a braced struct **with the fn's name and visibility**, `struct get_weather {}`,
/// which implements [`Tool`]. A braced struct lives only in the type namespace, so
/// `get_weather(...)` still calls the fn while `get_weather {}` is the tool: register one
/// with `set.register_tool(get_weather {})`, or list fns in [`tools!`]. The arguments
/// are decoded straight into the fn's parameters; what the tool needs beyond that lives
/// in `const _: () = {}`, so no other name is added to your module.
///
/// # Name and description
///
/// The name is the fn's, or `name = "..."`; it must match `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
/// The description is the doc comment, or `description = "..."`; a tool with neither does
/// not compile. Paragraphs are kept and common indentation removed; rustdoc sections
/// (`# Examples`, `# Errors`, `# Panics`, `# Safety`) are dropped, and the items of an
/// `# Arguments` (or `# Parameters`) section, ``* `city` - City name``, describe the
/// parameters they name (an item naming no parameter does not compile). A doc attribute that is not a literal
/// (`#[doc = include_str!("tool.md")]`) is sent as written.
///
/// # Parameters
///
/// Every parameter is a property of the argument schema's root object, except the
/// injected ones: `&ToolContext`, [`State<T>`] and [`Progress`], recognised by their
/// written type and supplied by the runtime. Model parameters are owned types
/// implementing `Deserialize` and `JsonSchema` (`&str` does not compile: write `String`).
/// Unknown properties are rejected; `null` for an optional one means absent.
/// Arguments nest at most [`MAX_ARGUMENT_DEPTH`](schema::MAX_ARGUMENT_DEPTH) deep. Prefer tagged enums to
/// `#[serde(untagged)]` ones for recursive types: serde tries an untagged enum's variants
/// one after another at every level, so its time to reject a model's wrong value doubles
/// with each level of nesting (some 0.4 s at 18 levels), and it blocks its thread
/// meanwhile.
///
/// | on a parameter | effect |
/// | --- | --- |
/// | `/// text` or `#[arg(description = "...")]` | the property's description |
/// | `Option<T>` | optional |
/// | `#[arg(default)]` | optional, `Default::default()` when absent |
/// | `#[arg(default = expr)]` | optional, `expr` when absent (and in the schema) |
/// | `#[arg(rename = "...")]` | the property's name |
///
/// # Return type
///
/// `T` or `Result<T, E>` (also `AgentResult<T>`, `io::Result<T>`, any `...Result<T>`).
/// `String` and `&'static str` become text, [`Content`] and `Vec<Content>` pass through,
/// `()` is empty, other `Serialize` types become JSON, with an output schema when they
/// implement `JsonSchema` with an object root. A [`ToolError`] or [`AgentError`] keeps its
/// kind (so does any `E: Into<ToolError>`); any other `E: Display` becomes an execution
/// error with its message.
///
/// # Keys
///
/// | key | meaning |
/// | --- | --- |
/// | `name = "..."`, `description = "..."`, `title = "..."` | name, description, annotations title |
/// | `timeout = "30s"` (`"500ms"`, `"2m"`, `"1h"`) or `timeout_ms = N` | per-tool timeout, at most a day |
/// | `exposure = "direct" \| "deferred" \| "hidden"` | [`ToolExposure`] |
/// | `activate_when = path` | `async fn(&ActivationContext) -> bool`; required for deferred |
/// | `origin = "..."`, `version = "..."` | metadata; default: the defining crate's name and version |
/// | `requirements = ["network"]` | metadata requirements |
/// | `require_approval` or `require_approval = path` | every call, or `fn(&serde_json::Value) -> bool` per call |
/// | `on_error = "return_to_model" \| "fail_run"` | [`ErrorPolicy`](tool::ErrorPolicy) |
/// | `read_only`, `destructive`, `idempotent`, `open_world` | [`ToolAnnotations`](tool::ToolAnnotations) hints |
/// | `max_in_flight = N`, `exclusive = "group"`, `sequential` | [`ToolConcurrency`](tool::ToolConcurrency) |
/// | `task`, `task = "required"` or `task = "on_demand"` | [`TaskSupport`](tool::TaskSupport): an MCP server runs calls as tasks its client polls |
/// | `validate_output = path` | `fn(&[Content]) -> Result<(), String>` |
/// | `validate_progress = path` | `fn(&serde_json::Value) -> Result<(), String>` |
/// | `register` | adds the tool to the binary's registry: see [`ToolSet::registered`] |
/// | `tags = ["billing"]` | labels of a registered tool, for [`RegisteredTool::has_tag`](toolset::RegisteredTool::has_tag) filters |
/// | `example(name = value, ...)`, repeatable | an example input: see [Examples](#input-examples) |
/// | `strict` or `strict = false` | this tool in its provider's strict mode, or not: see [Strict mode](#strict-mode) |
/// | `crate = path` | where `toolwright_core` is, for crates that re-export it |
///
/// Mistakes are compile errors at the offending tokens that say what to write instead.
///
/// # Input examples
///
/// `example(...)` gives the model an example of a call: one `name = value` per
/// parameter, named as the fn names it (a renamed one is sent under its schema name).
/// Write as many as help; each is one [`Tool::input_examples`] entry.
///
/// ```
/// use toolwright_core::{Tool, tool};
/// use serde_json::json;
///
/// /// Forecast for a city.
/// #[tool(
///     example(city = "Paris", days = 3, unit = "celsius"),
///     example(city = "Oslo"),
///     example(city = "Lima", days = 1, hours = [6, 12, 18]),
/// )]
/// async fn forecast(
///     city: String,
///     #[arg(default = 1)] days: u8,
///     unit: Option<String>,
///     #[arg(default)] hours: Vec<u8>,
/// ) -> String {
///     format!("{city}: sunny for {days} days")
/// }
///
/// assert_eq!(
///     forecast {}.input_examples(),
///     [
///         json!({"city": "Paris", "days": 3, "unit": "celsius"}),
///         json!({"city": "Oslo"}),
///         json!({"city": "Lima", "days": 1, "hours": [6, 12, 18]}),
///     ]
/// );
/// ```
///
/// The values are JSON literals, not Rust expressions: strings, numbers, `true`,
/// `false`, `null`, `[...]` and `{"key": value}`. An example shows the model what to
/// *send*, so it is written the way the model writes it: an enum variant by its name in
/// the schema (`unit = "celsius"`, not `Unit::Celsius`), a struct as an object, an
/// absent optional left out. That also keeps what a reader checks in one place: the
/// example beside the schema, as the provider will show both. (Rust values would need
/// `Serialize` run at start-up and would hide the wire form behind the type's serde
/// attributes.)
///
/// What the macro can check, it does, at compile time: every name is a parameter the
/// model fills, none is given twice, every required parameter (neither `Option` nor
/// `#[arg(default)]`) is given, and every value is a JSON literal. Whether each value
/// fits its parameter's schema (a string where a number is expected, a value outside
/// an enum) is checked by [`assert_dialects`](dialect::assert_dialects), which a test of
/// yours calls once for the whole set:
///
/// ```should_panic
/// use toolwright_core::{dialect::assert_dialects, tool, tools};
///
/// /// Forecast for a city.
/// #[tool(example(city = "Paris", days = "three"))]
/// async fn forecast(city: String, days: u8) -> String {
///     format!("{city}: sunny for {days} days")
/// }
///
/// // Panics: tool `forecast` has an example that does not match its schema:
/// // example 1 {"city":"Paris","days":"three"}: at `/days`: expected integer, found "three"
/// assert_dialects(&tools![forecast]);
/// ```
///
/// Anthropic shows examples to the model (the tool's `input_examples`); the other
/// providers have no such field, and their requests leave examples out. (The field is an
/// Anthropic beta: toolwright-llm's client adds its `anthropic-beta` header to each
/// request that sends examples.) A tool written by hand gives examples by implementing [`Tool::input_examples`].
///
/// # Strict mode
///
/// A client sends its tools in the provider's strict mode or not, as a whole
/// (`strict_tools(...)` on the OpenAI and Anthropic clients; OpenAI's default is
/// strict, Anthropic's is not). `strict` puts one tool in strict mode whatever the
/// client says: `strict: true` on its definition and its schema in the strict dialect
/// (every object closed, optionals required and nullable), with the model's `null` for
/// an optional mapped back to absent. `strict = false` keeps one tool out of it, for a
/// schema strict mode cannot express. A tool that says neither follows the client.
/// OpenAI (Chat Completions and Responses) and Anthropic honour it per tool; Gemini has
/// no strict mode and ignores it.
///
/// ```
/// use toolwright_core::{Tool, tool};
///
/// /// Transfer money between two accounts.
/// #[tool(strict)]
/// async fn transfer(from: String, to: String, cents: u64, memo: Option<String>) -> String {
///     format!("moved {cents} from {from} to {to}")
/// }
///
/// assert_eq!(transfer {}.strict(), Some(true));
/// ```
pub use toolwright_macros::tool;

pub use async_trait::async_trait;
/// Makes the `#[tool]` methods of an impl block tools that share `&self`, so a tool can
/// hold a database pool or an HTTP client.
///
/// ```
/// use toolwright_core::{ToolContext, tool, toolbox};
/// use std::sync::Arc;
///
/// struct Library { books: Vec<String> }
///
/// #[toolbox]
/// impl Library {
///     /// Find books whose title contains the words.
///     #[tool(read_only)]
///     async fn search(&self, /** Words to find */ query: String) -> Vec<String> {
///         self.books.iter().filter(|b| b.contains(&query)).cloned().collect()
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let library = Arc::new(Library { books: vec!["Dune".into()] });
/// let set = library.clone().into_toolset();
/// let out = set.call("search", &serde_json::json!({"query": "Du"}), &ToolContext::default()).await.unwrap();
/// assert_eq!(out[0].as_text(), Some(r#"["Dune"]"#));
/// // Each tool type is named after the type and the method:
/// let _tool = LibrarySearchTool(library);
/// # }
/// ```
///
/// Each `#[tool]` method takes `&self` and accepts every key and parameter form of
/// [`macro@tool`]. For method `search` of `impl Library`, the tool type is
/// `LibrarySearchTool` (the type's name, the method's in UpperCamelCase, then `Tool`), a
/// tuple struct holding an `Arc<Library>`, with the method's visibility. The impl gains
/// `fn into_toolset(self: Arc<Self>) -> ToolSet` with all of them; two methods with the
/// same tool name do not compile. `#[toolbox(crate = path)]` sets the crate path for all.
///
/// `#[toolbox(register)]` adds every tool of the impl to the binary's registry (see
/// [`ToolSet::registered`]), over one value of the type made by its `Default` on first
/// use; `#[toolbox(register = path::to::constructor)]` makes it with a `fn() -> Self`
/// instead. `tags = [...]` on the toolbox labels all its tools, on a method that one.
/// A method cannot be registered alone: its tool needs the value the impl makes.
///
/// With toolwright-mcp, methods marked `#[resource]` or `#[prompt]` share the value the
/// same way (`LibraryTitlesResource`, `LibraryReviewPrompt`): the impl gains
/// `into_resources` and `into_prompts`, and `#[toolbox(register)]` registers them too.
/// See toolwright-mcp's `resource` macro.
pub use toolwright_macros::toolbox;

/// Collects tools written with `#[tool]` into a [`ToolSet`]: `tools![add, math::divide]`,
/// the fns' paths as written (a trailing comma and an empty list are fine).
///
/// Two tools with the same name do not compile: the names are constants, compared in a
/// constant assertion whose error points at the repeated path and names the tool.
#[macro_export]
macro_rules! tools {
    ($($tools:tt)*) => {
        $crate::__private::tools_impl!(($crate) $($tools)*)
    };
}

/// What the macros expand to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private;

//! Serve any [`ToolSet`](toolwright_core::ToolSet) to MCP clients, and use an MCP server's
//! tools as a `ToolSet`. The protocol and transports are the official Rust SDK's (rmcp).
//!
//! Serving:
//!
//! ```no_run
//! # async fn demo(tools: toolwright_core::ToolSet) -> std::io::Result<()> {
//! // stdio, for hosts that start the server as a child process:
//! toolwright_mcp::serve_stdio(tools).await?;
//! # Ok(()) }
//! # async fn demo_http(tools: toolwright_core::ToolSet) -> std::io::Result<()> {
//! // or Streamable HTTP at http://127.0.0.1:8000/mcp:
//! toolwright_mcp::serve_http(tools, "127.0.0.1:8000").await?;
//! # Ok(()) }
//! ```
//!
//! Over HTTP the endpoint is an axum `Router` ([`McpServer::router`]) that an
//! application mounts beside its own routes, or that [`McpHttpServer`] serves alone
//! with a graceful shutdown. [`HttpOptions`] holds its limits, each on by default:
//! `Host` and `Origin` allow-lists (loopback only), a body size and JSON value limit
//! (413), caps on requests in flight and live sessions (503 with `Retry-After`), a
//! per-request deadline, and header-read and idle timeouts that close slow and idle
//! connections. With [`HttpAuth`] it is an OAuth 2.1 resource server: a bearer token
//! checked by a [`TokenValidator`] ([`StaticTokens`], [`JwtValidator`] against the
//! issuer's JWKS) on every request, 401 with a `WWW-Authenticate` challenge pointing
//! at the protected-resource metadata it serves (RFC 9728), the caller's
//! [`Principal`](toolwright_core::Principal) in each call's `ToolContext`
//! (`ctx.principal()`), tools that need scopes hidden from callers without them, and
//! sessions usable only by the principal that opened them.
//!
//! What clients see: `tools/list` offers Direct tools and active Deferred tools (never
//! Hidden ones) with their input schema (JSON Schema 2020-12), output schema and effect
//! hints; `tools/call` runs the call through toolwright-core's call pipeline
//! ([`CallRunner`](toolwright_core::CallRunner)), the one an agent's calls take: arguments are
//! validated as the tool does, the tool runs under its timeout (which holds even when it
//! blocks its thread), its progress becomes `notifications/progress`, and
//! `notifications/cancelled` stops it. A tool error, invalid arguments or a timeout is a
//! result with `isError: true`; an unknown tool is a JSON-RPC error. The tool's
//! concurrency limits (`max_in_flight`, exclusion groups), its output validator, and the
//! configured limit on calls in flight, retries and output budget apply as in the
//! executor, and each call has the `tool_call` tracing span. A call waiting for its
//! client (a request through [`McpPeer`]) gives back its place under the limit on calls
//! in flight meanwhile. A call that needs a person's approval (by the
//! executor's rule) asks the client's user through MCP elicitation and runs only if they
//! accept; a client that cannot ask gets an error result and nothing runs
//! ([`ApprovalMode`] has the alternative, for hosts that confirm every call themselves).
//!
//! The tools served may change while clients are connected: [`McpServer::add_tool`],
//! [`remove_tool`](McpServer::remove_tool), [`replace_tools`](McpServer::replace_tools)
//! and [`update_tools`](McpServer::update_tools) swap the served set for every session
//! at once (calls already running finish with the tools they started with) and send
//! `notifications/tools/list_changed` to every connected client, over stdio and over
//! each Streamable HTTP session; the server advertises `tools.listChanged`. Clients then
//! list the tools again, and see only those their principal may use.
//!
//! Beside the tools, a server offers what clients read and what their users pick:
//! [`resources`](mod@resources) (fixed URIs, and URI templates whose variables are parsed from the URI
//! read, RFC 6570 `{name}` and `{+name}`) with [`McpServer::with_resources`], and
//! [`prompts`](mod@prompts) with [`McpServer::with_prompts`]; both complete their arguments
//! (`completion/complete`). Write them as async fns with [`macro@resource`] and
//! [`macro@prompt`], and collect them with [`resources!`] and [`prompts!`] (or register
//! them with `register` and build [`ResourceSet::registered`](resources::ResourceSet::registered)
//! and [`PromptSet::registered`](prompts::PromptSet::registered)). A 2025
//! session may subscribe to a resource, and a
//! 2026-07-28 client names resources on its `subscriptions/listen` stream; either hears
//! `notifications/resources/updated` when the application calls
//! [`McpServer::resource_updated`]. [`McpServer::replace_resources`] and
//! [`replace_prompts`](McpServer::replace_prompts) announce `list_changed`. Lists carry
//! caching hints on 2026-07-28, an unknown URI is the spec's not-found error, items
//! that need scopes do not exist for callers without them, and a prompt asks its caller
//! through [`McpPeer::ask`] as a tool does.
//!
//! A served tool that needs what only MCP has (log messages to the client, sampling,
//! elicitation) finds the calling client as [`McpPeer`] state in its
//! [`ToolContext`](toolwright_core::ToolContext): `ctx.state::<McpPeer>()`, or a
//! `State<McpPeer>` parameter. Over stdio, lines that are not JSON-RPC are answered with
//! parse errors and the session goes on ([`serve_io`]).
//!
//! Using a server's tools:
//!
//! ```no_run
//! # async fn demo() -> toolwright_core::AgentResult<()> {
//! let client = toolwright_mcp::McpClient::connect_http("http://127.0.0.1:8000/mcp").await?;
//! let remote = client.toolset()?; // each tool a `dyn Tool` calling the server
//! # Ok(()) }
//! ```
//!
//! When the server announces that its tools changed, the client lists them again:
//! [`McpClient::toolset`] then gives the current tools, [`McpClient::tool_changes`]
//! wakes whoever rebuilds an agent with them, and a remote tool made earlier that the
//! server no longer offers fails with an `UnknownTool` error that says so.
//!
//! [`McpClient::connect_http_with`] sends headers and a bearer token (fixed, or from a
//! provider asked before every request). Two servers whose tools share names are used
//! together through [`ToolSet::prefixed`](toolwright_core::ToolSet::prefixed).
//!
//! Remote tools keep their schema, output schema and hints; a call's `isError` result
//! becomes a [`ToolError`](toolwright_core::ToolError) (with its original kind when the
//! server is built on this crate), the server's progress reaches the caller's
//! reporter, and a call the caller stops waiting for (its token cancelled, or the call
//! dropped, as at an executor's timeout) sends `notifications/cancelled`.

// The protocol, whatever carries it: the catalog, one call entry, access by principal,
// asking the caller. Imports only `convert` and `tls` of this crate.
mod server;
// MCP messages <-> toolwright-core's types, both ways (server and client use it).
mod convert;
// The HTTP client the crate's own requests use (JWKS, OAuth), with its TLS settings.
mod tls;
// The transports, on top of `server` (never imported by it): Streamable HTTP, stdio, and
// the client side of both.
mod client;
mod http;
mod stdio;

pub use client::McpClient;
pub use client::http::HttpClientOptions;
#[cfg(feature = "oauth")]
pub use client::oauth::{EnterpriseIdentity, OAuthOptions, WorkloadToken};
pub use http::auth::{
    AuthError, HttpAuth, JwtValidator, StaticTokens, TokenValidator, UnknownScopedTool,
};
pub use http::{HttpOptions, McpHttpServer, serve_http, shutdown_signal};
pub use server::approval::ApprovalMode;
pub use server::input::{InputOptions, InputRequest};
pub use server::peer::{LogLevel, McpPeer};
pub use server::{MAX_MESSAGE_BYTES, McpServer, ServerOptions};

pub mod tasks {
    //! Tools that run as tasks (`#[tool(task)]`, the MCP `io.modelcontextprotocol/tasks`
    //! extension), served and called.
    //!
    //! # Serving
    //!
    //! A task tool is written as any other tool, with the `task` key:
    //!
    //! ```no_run
    //! use toolwright_core::tool;
    //!
    //! /// Builds the yearly report.
    //! #[tool(task)]
    //! async fn yearly_report(year: u16) -> String {
    //!     format!("report for {year}")
    //! }
    //! ```
    //!
    //! When a client that declared the extension calls it, [`McpServer`](crate::McpServer)
    //! stores a task, answers `CreateTaskResult`, and runs the call in the background; a
    //! client that did not declare it gets a plain call (or, for
    //! `#[tool(task = "required")]`, the `-32021` error naming the extension). The client
    //! polls `tasks/get`, answers with `tasks/update`, and may `tasks/cancel`.
    //!
    //! A task tool asks its caller as every tool does, with
    //! [`McpPeer::ask`](crate::McpPeer::ask). Inside a task the question waits on the
    //! task: `tasks/get` reports `input_required` with the questions not yet answered,
    //! the client answers them (all at once or one at a time), and once every question
    //! has its answer **the tool runs again from the start** with the answers on its
    //! context, as a multi-round-trip call does (see [`InputRequest`](crate::InputRequest)).
    //! So what a tool does before its last question must be safe to repeat.
    //!
    //! # Asking on the call first
    //!
    //! A tool that needs its caller's answers before its long work can ask on the call
    //! itself and become a task only once it has them: write `task = "on_demand"`, ask
    //! with [`McpPeer::ask`](crate::McpPeer::ask), and say where the task begins with
    //! [`McpPeer::continue_as_task`](crate::McpPeer::continue_as_task):
    //!
    //! ```no_run
    //! use serde_json::json;
    //! use toolwright_core::{State, ToolError, tool};
    //! use toolwright_mcp::{InputRequest, McpPeer};
    //!
    //! /// Exports the archive of a year, once the user has chosen the format.
    //! #[tool(task = "on_demand")]
    //! async fn export_archive(year: u16, peer: State<McpPeer>) -> Result<String, ToolError> {
    //!     let schema = json!({
    //!         "type": "object",
    //!         "properties": {"format": {"type": "string", "enum": ["zip", "tar"]}},
    //!         "required": ["format"],
    //!     });
    //!     let answer = peer
    //!         .ask(InputRequest::elicit("format", "Which format?", schema))
    //!         .await?;
    //!     // From here on, the call runs as a task.
    //!     peer.continue_as_task().await?;
    //!     let format = answer["content"]["format"].as_str().unwrap_or("zip");
    //!     Ok(format!("archive-{year}.{format}"))
    //! }
    //! ```
    //!
    //! For a client of MCP 2026-07-28 that declared the extension, the first call is
    //! answered with the question (`InputRequiredResult`) and no task; the client calls
    //! again with its answer, the tool reaches `continue_as_task`, and that call is
    //! answered with a task (`CreateTaskResult`), in which **the tool runs again from
    //! the start** with the answers given on the call (they are not asked again), and
    //! `continue_as_task` returns `Ok`. So, as with every question, what a tool does
    //! before `continue_as_task` must be safe to repeat. Sending that round again (the
    //! same `requestState`) is answered with the same task: the call becomes one task,
    //! however often its last round is retried. The tool may go on asking inside the
    //! task, as above. For a client that does not support tasks the call stays a plain
    //! call (`continue_as_task` returns `Ok` and the tool goes on); on a session of an
    //! older protocol, which has no questions on the call, the call is a task from the
    //! start and the tool asks inside it.
    //!
    //! A tool result, an error result included, completes the task (`completed`); a call
    //! that fails at the protocol level (a capability the client lacks, an internal error)
    //! fails it (`failed`, with the JSON-RPC error); `tasks/cancel` cancels the running
    //! call (`cancelled`).
    //!
    //! Every change of a task is saved to a [`TaskStore`] before anyone can see it: in
    //! memory by default, or in a core `RunStore` (the SQLite and Postgres stores of
    //! `toolwright-store`) with [`TaskOptions::run_store`], or in Restate
    //! (`toolwright-restate`'s `RestateTaskStore`, feature `mcp`) with
    //! [`TaskOptions::store`], so that a task outlives its server. A task's call runs in the process that started it: when that process stops,
    //! a task it was running reads as `failed` (call the tool again), while one waiting on
    //! its client's answers, and every finished one, are served by whichever server opens
    //! the store next. With [`TaskOptions::runner`] the call runs elsewhere instead, on a
    //! [`TaskRunner`] (toolwright-restate's runs it as a journaled Restate step), and
    //! survives the server that started it; its tool cannot ask its caller there. At shutdown ([`McpServer::shutdown_tasks`](crate::McpServer::shutdown_tasks),
    //! which [`McpHttpServer`](crate::McpHttpServer) calls with its shutdown grace) the
    //! server lets the tasks it runs finish for up to the grace, then stops the rest and
    //! records them `failed`, saying so, and starts or resumes no task meanwhile. A task belongs to the principal that started it; to anyone else it
    //! does not exist. Each caller has at most [`TaskOptions::max_per_caller`] unfinished
    //! tasks.
    //!
    //! # Calling
    //!
    //! [`McpClient`](crate::McpClient) declares the extension. A tool of its
    //! [`toolset`](crate::McpClient::toolset) awaits a task for its caller, answering the
    //! task's questions with the client's handlers; [`McpClient::start_task`](crate::McpClient::start_task)
    //! hands the task ([`McpTask`]) to the application instead.
    pub use crate::client::tasks::{McpTask, TaskStart};
    pub use crate::server::tasks::{
        MemoryTaskStore, TaskOptions, TaskOutcome, TaskRecord, TaskRunner, TaskStore,
    };
}

/// Resources: what a server offers clients to read by URI, fixed ([`Resource`](resources::Resource))
/// or by URI template ([`ResourceTemplate`](resources::ResourceTemplate)), collected in a
/// [`ResourceSet`](resources::ResourceSet) and served with [`McpServer::with_resources`].
pub mod resources {
    pub use crate::client::features::{RemoteResource, RemoteTemplate};
    pub use crate::server::registry::RegisteredResource;
    pub use crate::server::resources::{
        Audience, FeatureError, FeatureErrorKind, FnResource, FnTemplate, Icon, Resource,
        ResourceAnnotations, ResourceBody, ResourceContent, ResourceInfo, ResourceSet,
        ResourceTemplate,
    };
    pub use crate::server::uri_template::{UriParams, UriTemplate, UriTemplateError};
}

/// Prompts: message templates filled in with arguments, collected in a
/// [`PromptSet`](prompts::PromptSet) and served with [`McpServer::with_prompts`].
pub mod prompts {
    pub use crate::client::features::RemotePrompt;
    pub use crate::server::prompts::{
        FnPrompt, Prompt, PromptArgument, PromptArguments, PromptMessage, PromptRole, PromptSet,
    };
    pub use crate::server::registry::RegisteredPrompt;
    pub use crate::server::resources::FeatureError;
}
pub use stdio::{serve_io, serve_stdio, serve_stdio_with};

/// Turns an `async fn` into a resource: `uri = "..."` for one fixed URI (a
/// [`Resource`](resources::Resource)), `template = "..."` for every URI an RFC 6570
/// template matches (a [`ResourceTemplate`](resources::ResourceTemplate)). Beside the fn
/// it puts a type of the same name, which [`resources!`] collects.
///
/// ```
/// use serde::Serialize;
/// use toolwright_mcp::resources::FeatureError;
/// use toolwright_mcp::{resource, resources};
///
/// #[derive(Serialize)]
/// struct Settings {
///     debug: bool,
/// }
///
/// /// The app's settings, served as JSON.
/// #[resource(uri = "config://app", title = "App settings")]
/// async fn settings() -> Settings {
///     Settings { debug: false }
/// }
///
/// /// One line of a file: `{name}` and `{line}` are read from the URI into the
/// /// parameters of the same names.
/// #[resource(template = "files://{name}/lines/{line}", mime_type = "text/plain")]
/// async fn line(name: String, line: u32) -> Result<String, FeatureError> {
///     if name != "readme" {
///         return Err(FeatureError::not_found(format!("no file `{name}`")));
///     }
///     Ok(format!("line {line} of {name}"))
/// }
///
/// let set = resources![settings, line];
/// assert_eq!(set.templates()[0].info().name, "line");
/// ```
///
/// The description is the fn's doc comment. The fn returns its contents: text (`String`,
/// `&'static str`), bytes (`Vec<u8>`, `&'static [u8]`, `[u8; N]`, served base64 with
/// `mime_type`), one or more [`ResourceContent`](resources::ResourceContent)s, or any
/// `serde::Serialize` value (served as JSON) — or a `Result` of one of those, whose
/// error is a [`FeatureError`](resources::FeatureError) (its kind kept: not found,
/// invalid arguments) or anything `Display` (a failure with its message). A parameter
/// `&ToolContext` receives the read's context.
///
/// A template's variables (`{name}`, and `{+name}`, which may span `/`) and the fn's
/// other parameters must match one to one; each is parsed with `FromStr`, and a URI
/// whose segment does not parse is refused with a message naming it.
///
/// | key | |
/// |---|---|
/// | `uri = "..."` | the resource's one URI |
/// | `template = "..."` | a URI template, checked at compile time |
/// | `name = "..."` | the listed name (default: the fn's) |
/// | `title = "..."` | a human-readable title |
/// | `mime_type = "..."` | its MIME type (default: `application/json` for values, `application/octet-stream` for bytes) |
/// | `size = 1024` | its size in bytes (a resource at one URI only) |
/// | `audience = ["user", "assistant"]` | whom it is meant for: the person, the model, or both |
/// | `priority = 0.8` | how much it matters, from `0.0` (optional) to `1.0` (required) |
/// | `icons = ["https://..."]` | icons a client may show beside it |
/// | `scopes = ["files:read"]` | what a caller's principal needs to see and read it (on an authenticating transport, as for tools) |
/// | `register` | adds it to the binary's registry: see [`ResourceSet::registered`](resources::ResourceSet::registered) |
/// | `tags = ["docs"]` | labels of a registered resource, for [`ResourceSet::registered_where`](resources::ResourceSet::registered_where) (`entry.has_tag("docs")`); a `#[toolbox(register, tags = [...])]` labels its methods' |
/// | `crate = path` | where `toolwright_mcp` is, for crates that re-export it |
///
/// Mistakes are compile errors at the offending tokens that say what to write instead.
///
/// # Methods that share state
///
/// In an impl block marked `#[toolbox]` (of toolwright-core), `#[resource]` and
/// [`macro@prompt`] methods take `&self`, so they can hold a database pool or a cache,
/// as toolbox tools do. For method `titles` of `impl Library` the item type is
/// `LibraryTitlesResource` (a prompt's: `LibraryReviewPrompt`), a tuple struct holding an
/// `Arc<Library>`; the impl gains `fn into_resources(self: Arc<Self>) -> ResourceSet`
/// and `fn into_prompts(self: Arc<Self>) -> PromptSet` for the kinds it has. Two methods
/// at one URI, or two prompts with one name, do not compile.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use toolwright_core::toolbox;
/// use toolwright_mcp::{prompt, resource};
///
/// struct Library {
///     books: Vec<&'static str>,
///     reads: AtomicU64,
/// }
///
/// #[toolbox]
/// impl Library {
///     /// Every title.
///     #[resource(uri = "library://titles")]
///     async fn titles(&self) -> Vec<&'static str> {
///         self.reads.fetch_add(1, Ordering::Relaxed);
///         self.books.clone()
///     }
///
///     /// Asks for a review of a book.
///     #[prompt]
///     async fn review(
///         &self,
///         /// The book's number.
///         n: usize,
///     ) -> String {
///         format!("Review {}.", self.books.get(n).unwrap_or(&"nothing"))
///     }
/// }
///
/// let library = Arc::new(Library { books: vec!["Dune"], reads: AtomicU64::new(0) });
/// let resources = library.clone().into_resources();
/// assert!(resources.resource("library://titles").is_some());
/// let prompts = library.clone().into_prompts();
/// assert!(prompts.get("review").is_some());
/// // Each item type is named after the type and the method:
/// let _titles = LibraryTitlesResource(library);
/// ```
///
/// `#[toolbox(register)]` registers them with its tools, over the one value it makes; a
/// method cannot be registered alone.
pub use toolwright_macros::resource;

/// Turns an `async fn` into a [`Prompt`](prompts::Prompt). Its parameters are the
/// prompt's arguments, each described by its own doc comment: an `Option<T>` is
/// optional, anything else required. Arguments arrive as strings: `String` takes them
/// as they are, any other `serde::Deserialize` type reads them (numbers, booleans, enums
/// of unit variants, JSON objects), and an argument that does not read is refused with
/// a message naming it. A parameter `&ToolContext` receives the request's context.
///
/// ```
/// use toolwright_mcp::prompts::PromptMessage;
/// use toolwright_mcp::{prompt, prompts};
///
/// /// Asks for a code review.
/// #[prompt(title = "Code review")]
/// async fn review(
///     /// The code to review.
///     code: String,
///     /// How many findings at most.
///     limit: Option<u32>,
/// ) -> Vec<PromptMessage> {
///     vec![
///         PromptMessage::user(format!("Review, at most {} findings:\n{code}", limit.unwrap_or(3))),
///         PromptMessage::assistant("Send it over."),
///     ]
/// }
///
/// let set = prompts![review];
/// assert_eq!(set.get("review").unwrap().arguments().len(), 2);
/// ```
///
/// The description is the fn's doc comment. The fn returns `String` (one user message),
/// a [`PromptMessage`](prompts::PromptMessage), a `Vec` of them, or a `Result` of one of
/// those (errors as for [`resource`]). Keys: `name = "..."` (default: the fn's name),
/// `title = "..."`, `icons = ["https://..."]` (icons a client may show beside it),
/// `scopes = ["..."]` (what a caller's principal needs to see and get it), `tags = [...]`
/// (labels of a registered prompt, as for resources), `register` (adds it to the binary's registry: see
/// [`PromptSet::registered`](prompts::PromptSet::registered)), `crate = path`. In a
/// `#[toolbox]` impl a prompt may be a `&self` method: see [`resource`].
pub use toolwright_macros::prompt;

/// The set of the named `#[resource]` fns, fixed and templated, as a
/// [`ResourceSet`](resources::ResourceSet); two at one URI (or one template) are a
/// compile error.
///
/// ```
/// use toolwright_mcp::{resource, resources};
///
/// /// The app's settings.
/// #[resource(uri = "config://app")]
/// async fn settings() -> String {
///     "debug = false".into()
/// }
///
/// /// A user's profile.
/// #[resource(template = "users://{id}/profile")]
/// async fn profile(id: u64) -> String {
///     format!("user {id}")
/// }
///
/// let set = resources![settings, profile];
/// assert_eq!(set.resources().len(), 1);
/// assert_eq!(set.templates().len(), 1);
/// ```
#[macro_export]
macro_rules! resources {
    ($($items:tt)*) => {
        $crate::__private::resources_impl!(($crate) $($items)*)
    };
}

/// The set of the named `#[prompt]` fns, as a [`PromptSet`](prompts::PromptSet); two
/// with one name are a compile error.
///
/// ```
/// use toolwright_mcp::{prompt, prompts};
///
/// /// Asks for a code review.
/// #[prompt]
/// async fn review(
///     /// The code to review.
///     code: String,
/// ) -> String {
///     format!("Review this code:\n{code}")
/// }
///
/// let set = prompts![review];
/// assert_eq!(set.get("review").unwrap().arguments()[0].name, "code");
/// ```
#[macro_export]
macro_rules! prompts {
    ($($items:tt)*) => {
        $crate::__private::prompts_impl!(($crate) $($items)*)
    };
}

/// What the macros expand to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private;

/// The rmcp version this crate speaks through, for applications that use rmcp directly
/// alongside it (an [`McpServer`] is an rmcp `ServerHandler`).
pub use rmcp;

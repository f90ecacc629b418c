//! Write the tools LLM agents call as ordinary `async fn`s.
//!
//! ```
//! use agent_core::{ToolContext, tool, tools};
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
//! A tool is anything implementing [`Tool`] (the trait, method for method, of the
//! phi-agent "Custom Tools" chapter). [`TypedTool`] derives the schema and argument
//! decoding from types; `#[tool]` derives everything from an `async fn`. A [`ToolSet`]
//! holds tools by name and enforces their exposure.

#![forbid(unsafe_code)]

mod args;
mod config;
mod content;
mod context;
mod dialect;
mod error;
mod extract;
mod schema;
mod set;
mod tool;
mod typed;

pub use args::{MAX_ARGUMENT_DEPTH, decode_args};
pub use config::ToolConfig;
pub use content::Content;
pub use context::{ActivationContext, CallReporter, Extensions, ToolContext};
pub use dialect::{
    Dialect, DialectError, UnknownDialect, Violation, assert_dialects, assert_dialects_for, check,
    dialect_report,
};
pub use error::{AgentError, AgentResult, ToolError, ToolErrorKind};
pub use extract::{FromToolContext, Progress, State};
pub use schema::{ArgsSchema, normalize_root};
pub use set::{ToolDefinition, ToolSet, is_valid_tool_name};
pub use tool::{
    Approval, ErrorPolicy, ExternalTool, Tool, ToolAnnotations, ToolConcurrency, ToolExposure,
    ToolMetadata,
};
pub use typed::{TypedTool, into_content};

pub use agent_macros::{tool, toolbox};
pub use async_trait::async_trait;

/// Collects tools written with `#[tool]` into a [`ToolSet`]: `tools![add, math::divide]`.
/// Two tools with the same name do not compile.
#[macro_export]
macro_rules! tools {
    ($($tools:tt)*) => {
        $crate::__private::tools_impl!(($crate) $($tools)*)
    };
}

/// Makes a tool name or description built at run time `'static`, as [`Tool`] requires.
/// Each distinct string is stored once, so calling it again with an equal string does
/// not grow memory.
pub fn intern(text: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static STRINGS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut strings = STRINGS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(found) = strings.get(text) {
        return found;
    }
    let leaked: &'static str = Box::leak(text.into());
    strings.insert(leaked);
    leaked
}

/// What the macros expand to. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private;

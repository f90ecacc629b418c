//! The application's hooks into the executor, and what it hands to tools besides
//! their arguments.

use crate::model::content::Content;
use crate::model::message::ToolCall;
use crate::model::tool::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// What an [`on_tool_called`](crate::agent_loop::agent::AgentBuilder::on_tool_called) hook decides for a
/// call that is about to run.
#[derive(Debug, Clone, PartialEq)]
pub enum HookDecision {
    /// Run the tool.
    Run,
    /// Pause the run: the call waits until the application supplies its output (a
    /// person answers, say), as an external tool's would.
    Pause,
    /// Do not run the tool: this is its result.
    Respond(Vec<Content>),
}

/// Decides, before a call runs, whether it runs, pauses for a person, or is answered
/// by the application. Called after approval.
pub type CallHookFn = Arc<dyn Fn(&ToolCall, &dyn Tool) -> HookDecision + Send + Sync>;

/// Validates or transforms output the application supplied (for an external tool or a
/// paused interactive call) before the tool's output validator sees it. An `Err`
/// fails the call with `Invalid tool output: ...`.
pub type ResponseHookFn =
    Arc<dyn Fn(&ToolCall, Vec<Content>) -> Result<Vec<Content>, String> + Send + Sync>;

/// The application context a tool sees, as the last `set_context` of an earlier turn
/// left it (`null` before any). Read it with `ctx.state::<AppContext>()` or a
/// `State<AppContext>` parameter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppContext(pub Value);

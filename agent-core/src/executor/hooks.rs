//! The application's hooks into the executor, and what it hands to tools besides
//! their arguments.

use crate::content::Content;
use crate::llm::ToolCall;
use crate::tool::{Approval, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, PoisonError};

/// An application-wide approval rule: called for every call before the tool's own
/// [`Tool::approval`]. `Required` or `NotRequired` decides; `Unspecified` defers to the
/// tool.
pub type ApprovalFn = Arc<dyn Fn(&ToolCall, &dyn Tool) -> Approval + Send + Sync>;

/// What an [`on_tool_called`](crate::AgentBuilder::on_tool_called) hook decides for a
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

/// Parameters a tool sets for the next model request only (a different model, a
/// temperature, a tool choice...): what they mean is up to the [`LlmClient`](crate::LlmClient)
/// adapter, which reads them in [`LlmRequest::params`](crate::LlmRequest::params).
/// Tools reach it with `ctx.state::<NextTurn>()`; when several calls set the same key,
/// the last in call order wins.
#[derive(Debug, Clone, Default)]
pub struct NextTurn(Arc<Mutex<Map<String, Value>>>);

impl NextTurn {
    /// Sets `key` for the next model request.
    pub fn set(&self, key: impl Into<String>, value: Value) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.into(), value);
    }

    pub(crate) fn take(&self) -> Option<Map<String, Value>> {
        let params = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        (!params.is_empty()).then_some(params)
    }
}

/// The application context a tool sees, as the last `set_context` of an earlier turn
/// left it (`null` before any). Read it with `ctx.state::<AppContext>()` or a
/// `State<AppContext>` parameter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppContext(pub Value);

//! Approval over MCP: a call that needs a person's approval asks the client's user
//! through elicitation, and runs only if they accept. On protocol 2026-07-28 and later
//! the question travels in the call's `InputRequiredResult` (see `input`), and the call
//! runs only on a retry whose sealed state asked it and whose answer accepts.

use super::input::verdict;
use super::peer::McpPeer;
use serde_json::{Value, json};
use toolwright_core::{
    Tool, ToolError, async_trait,
    exec::{ApprovalDecision, Approver},
    llm::ToolCall,
    tool::truncate_text,
};

/// What an [`McpServer`](crate::McpServer) does with a call that needs a person's
/// approval: one its tool's [`approval`](toolwright_core::Tool::approval) requires, or a
/// destructive tool's while [`ToolConfig::destructive_requires_approval`](toolwright_core::toolset::ToolConfig)
/// holds ([`ToolConfig::needs_approval`](toolwright_core::toolset::ToolConfig::needs_approval), the rule
/// the executor applies).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalMode {
    /// Ask the client's user (MCP elicitation: the tool, its arguments, accept or
    /// decline) and run the call only if they accept. A client that cannot ask its user
    /// (it does not declare elicitation) gets an error result, and the call does not run.
    /// From MCP 2026-07-28 the question goes back in the call's `InputRequiredResult`,
    /// and the approval, once given, is carried sealed in the retry's `requestState`,
    /// bound to the caller and to this tool and these arguments.
    #[default]
    Elicit,
    /// Run the call without asking: the MCP host confirms every tool call with its user
    /// itself. Choose this only for hosts known to do so.
    TrustClient,
}

/// The most of a call's arguments the approval request shows, in characters.
const SHOWN_ARGUMENTS: usize = 2_000;

/// The server's [`Approver`] under [`ApprovalMode::Elicit`]: asks the client that
/// made the call.
pub(crate) struct ElicitApproval(pub(crate) McpPeer);

#[async_trait]
impl Approver for ElicitApproval {
    async fn approve(&self, call: &ToolCall, tool: &dyn Tool) -> ApprovalDecision {
        match ask(&self.0, tool, &call.arguments).await {
            Ok(()) => ApprovalDecision::Approved,
            Err(error) => ApprovalDecision::Denied(error),
        }
    }
}

/// Asks the client's user whether `tool` may run with `arguments`. `Ok` only when they
/// accepted; every other answer, or none, is a `Denied` error saying the call did not run.
async fn ask(peer: &McpPeer, tool: &dyn Tool, arguments: &Value) -> Result<(), ToolError> {
    let name = tool.name();
    if !peer.client_supports("elicitation") {
        return Err(ToolError::denied(format!(
            "`{name}` needs a person's approval before it runs, and this MCP client cannot \
             ask its user (it does not support elicitation); the call did not run"
        )));
    }
    let shown = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
    let message = format!(
        "Allow the tool `{name}` to run?\n\n{}\n\nArguments:\n{}",
        tool.description(),
        truncate_text(&shown, SHOWN_ARGUMENTS)
    );
    // No fields to fill in: accepting the request is the approval.
    let params = json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": {}},
    });
    if let Some(input) = peer.input() {
        return input.approve(name, params);
    }
    let answer = peer
        .request("elicitation/create", params)
        .await
        .map_err(|error| {
            ToolError::denied(format!(
                "`{name}` needs a person's approval, which could not be asked for ({}); \
                 the call did not run",
                error.message()
            ))
        })?;
    verdict(name, &answer)
}

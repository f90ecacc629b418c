#![allow(dead_code)] // each test binary uses its own part of this helper.

//! Two tools that run as MCP tasks, for the tests of tasks here and in toolwright-restate
//! (its Restate task store): one that finishes at once, one that waits on its caller.

use serde_json::json;
use toolwright_core::{State, ToolError, tool};
use toolwright_mcp::{InputRequest, McpPeer};

/// Doubles `n`, as a task.
#[tool(task)]
pub async fn double(n: i64) -> i64 {
    n * 2
}

/// Asks the user to confirm, then says what they chose, as a task.
#[tool(task)]
pub async fn confirm(peer: State<McpPeer>) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    let answer = peer
        .ask(InputRequest::elicit("ok", "Go ahead?", schema))
        .await?;
    Ok(format!("confirmed: {}", answer["content"]["ok"]))
}

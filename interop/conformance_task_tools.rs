//! The conformance suite's task tools (the `io.modelcontextprotocol/tasks` extension,
//! SEP-2663, the `tasks-*` scenarios): each is an ordinary `#[tool]` with the `task` key,
//! run as a task for clients that declare the extension (from the start, or, for
//! `task = "on_demand"`, from where the tool says `continue_as_task`).

use serde_json::json;
use std::time::Duration;
use toolwright_core::{State, ToolError, ToolSet, tool, tools};
use toolwright_mcp::{InputRequest, McpPeer};

/// Greets `name`; never a task.
#[tool]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Computes for `seconds` seconds, then answers; a task for clients that support tasks.
#[tool(task)]
async fn slow_compute(
    /// How long the computation takes.
    seconds: u64,
    /// A label echoed in the answer.
    label: Option<String>,
) -> String {
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    format!(
        "computed `{}` in {seconds}s",
        label.as_deref().unwrap_or("unlabelled")
    )
}

/// Works for a second, then fails as a tool does; only ever a task.
#[tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::execution("the job failed, as it always does"))
}

/// Reads the client's roots, which the suite's clients do not offer: the call fails
/// at the protocol level (`-32021`), and so does its task.
#[tool(task)]
async fn protocol_error_job(peer: State<McpPeer>) -> Result<String, ToolError> {
    let roots = peer.request("roots/list", json!({})).await?;
    Ok(roots.to_string())
}

/// A yes-or-no form.
fn confirm(key: &str, message: String) -> InputRequest {
    InputRequest::elicit(
        key,
        message,
        json!({
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
            "required": ["confirm"],
        }),
    )
}

/// Deletes `filename` once the user confirms.
#[tool(task)]
async fn confirm_delete(
    /// The file to delete.
    filename: String,
    peer: State<McpPeer>,
) -> Result<String, ToolError> {
    let answer = peer
        .ask(confirm("confirm", format!("Delete `{filename}`?")))
        .await?;
    Ok(if answer["content"]["confirm"] == true {
        format!("deleted `{filename}`")
    } else {
        format!("kept `{filename}`")
    })
}

/// Asks two questions at once, then answers with both.
#[tool(task)]
async fn multi_input(peer: State<McpPeer>) -> Result<String, ToolError> {
    let answers = peer
        .ask_all([
            confirm("first", "First question?".to_owned()),
            confirm("second", "Second question?".to_owned()),
        ])
        .await?;
    Ok(format!("answered: {}", json!(answers)))
}

/// Asks the user's name on the call itself, then greets them as a task: the call is
/// answered with its question first, and becomes a task only once it has the answer.
#[tool(task = "on_demand")]
async fn test_tool_with_task(peer: State<McpPeer>) -> Result<String, ToolError> {
    let answer = peer
        .ask(InputRequest::elicit(
            "user_name",
            "What is your name?",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            }),
        ))
        .await?;
    peer.continue_as_task().await?;
    let name = answer["content"]["name"].as_str().unwrap_or("stranger");
    Ok(format!("Hello, {name}, from a task!"))
}

/// The task tools.
pub fn tools() -> ToolSet {
    tools![
        greet,
        slow_compute,
        failing_job,
        protocol_error_job,
        confirm_delete,
        multi_input,
        test_tool_with_task
    ]
}

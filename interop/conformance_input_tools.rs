//! The conformance suite's multi-round-trip tools (SEP-2322, the `input-required-result-*`
//! scenarios of MCP 2026-07-28). Each asks its caller through `McpPeer::ask`, the same
//! call on every protocol version: on a 2025 session the question is a request to the
//! client; from 2026-07-28 it comes back as an `InputRequiredResult`, and the tool runs
//! again with the answers. A prompt asks the same way.

use serde_json::{Value, json};
use toolwright_core::{State, ToolError, ToolSet, tool};
use toolwright_mcp::prompts::{FeatureError, FnPrompt, PromptMessage, PromptSet};
use toolwright_mcp::{InputRequest, McpPeer};

/// A one-field elicitation form.
fn form(key: &str, message: &str, field: &str, kind: &str) -> InputRequest {
    let schema = json!({
        "type": "object",
        "properties": {field: {"type": kind}},
        "required": [field],
    });
    InputRequest::elicit(key, message, schema)
}

/// The suite's sampling question.
fn capital_question(key: &str, text: &str, max_tokens: u32) -> InputRequest {
    InputRequest::sample(
        key,
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens,
        }),
    )
}

/// A text field of an elicitation's accepted content, or `-`.
fn field(answer: &Value, name: &str) -> String {
    answer.pointer(&format!("/content/{name}")).map_or_else(
        || "-".to_owned(),
        |v| v.as_str().map_or_else(|| v.to_string(), str::to_owned),
    )
}

/// Asks the user's name, then greets them.
#[tool]
async fn test_input_required_result_elicitation(peer: State<McpPeer>) -> Result<String, ToolError> {
    let answer = peer
        .ask(form("user_name", "What is your name?", "name", "string"))
        .await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// Asks the client's model a question, and returns its answer.
#[tool]
async fn test_input_required_result_sampling(peer: State<McpPeer>) -> Result<String, ToolError> {
    let question = capital_question("capital_question", "What is the capital of France?", 100);
    let answer = peer.ask(question).await?;
    let text = answer
        .pointer("/content/text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(format!("The model answered: {text}"))
}

/// Lists the client's roots.
#[tool]
async fn test_input_required_result_list_roots(peer: State<McpPeer>) -> Result<String, ToolError> {
    let answer = peer.ask(InputRequest::list_roots("client_roots")).await?;
    let roots: Vec<&str> = answer["roots"]
        .as_array()
        .map(|roots| roots.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    Ok(format!("The client's roots: {}", roots.join(", ")))
}

/// Asks for a confirmation; its answer arrives with the sealed request state, which the
/// server checked before the tool ran again.
#[tool]
async fn test_input_required_result_request_state(
    peer: State<McpPeer>,
) -> Result<String, ToolError> {
    let answer = peer
        .ask(form("confirm", "Please confirm", "ok", "boolean"))
        .await?;
    Ok(format!("state-ok: confirmed={}", field(&answer, "ok")))
}

/// Asks a form, the client's model and its roots, all in one round.
#[tool]
async fn test_input_required_result_multiple_inputs(
    peer: State<McpPeer>,
) -> Result<String, ToolError> {
    let answers = peer
        .ask_all([
            form("user_name", "What is your name?", "name", "string"),
            capital_question("greeting", "Generate a greeting", 50),
            InputRequest::list_roots("client_roots"),
        ])
        .await?;
    let greeting = answers[1]
        .pointer("/content/text")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let roots = answers[2]["roots"].as_array().map_or(0, Vec::len);
    Ok(format!(
        "{greeting} {} ({roots} roots)",
        field(&answers[0], "name")
    ))
}

/// Asks two questions, one round after the other.
#[tool]
async fn test_input_required_result_multi_round(peer: State<McpPeer>) -> Result<String, ToolError> {
    let name = peer
        .ask(form(
            "step1",
            "Step 1: What is your name?",
            "name",
            "string",
        ))
        .await?;
    let color = peer
        .ask(form(
            "step2",
            "Step 2: What is your favorite color?",
            "color",
            "string",
        ))
        .await?;
    Ok(format!(
        "{} likes {}",
        field(&name, "name"),
        field(&color, "color")
    ))
}

/// Asks for a confirmation; a retry whose request state was changed is refused.
#[tool]
async fn test_input_required_result_tampered_state(
    peer: State<McpPeer>,
) -> Result<String, ToolError> {
    let answer = peer
        .ask(form("confirm", "Please confirm", "ok", "boolean"))
        .await?;
    Ok(format!("confirmed={}", field(&answer, "ok")))
}

/// Asks only what the client declared it can answer.
#[tool]
async fn test_input_required_result_capabilities(
    peer: State<McpPeer>,
) -> Result<String, ToolError> {
    let mut questions = Vec::new();
    if peer.client_supports("elicitation") {
        questions.push(form("user_name", "What is your name?", "name", "string"));
    }
    if peer.client_supports("sampling") {
        questions.push(capital_question(
            "capital_question",
            "What is the capital of France?",
            100,
        ));
    }
    if peer.client_supports("roots") {
        questions.push(InputRequest::list_roots("client_roots"));
    }
    let answered = peer.ask_all(questions).await?.len();
    Ok(format!("{answered} questions answered"))
}

/// The tools above, as a set.
pub fn tools() -> ToolSet {
    toolwright_core::tools![
        test_input_required_result_elicitation,
        test_input_required_result_sampling,
        test_input_required_result_list_roots,
        test_input_required_result_request_state,
        test_input_required_result_multiple_inputs,
        test_input_required_result_multi_round,
        test_input_required_result_tampered_state,
        test_input_required_result_capabilities,
    ]
}

/// The suite's prompt that asks its caller (`input-required-result-non-tool-request`):
/// `prompts/get` asks for context through `McpPeer::ask`, as the tools do, and makes its
/// message of the answer.
pub fn add_prompts(set: &mut PromptSet) {
    let prompt = FnPrompt::new(
        "test_input_required_result_prompt",
        "A prompt that asks its caller for context",
        Vec::new(),
        |_args, ctx| async move {
            let peer = ctx.state::<McpPeer>().ok_or_else(|| {
                FeatureError::failed("the prompt was got without an MCP client to ask")
            })?;
            let question = form(
                "user_context",
                "What context should the prompt use?",
                "context",
                "string",
            );
            let answer = peer.ask(question).await?;
            let context = field(&answer, "context");
            Ok(vec![PromptMessage::user(format!(
                "Use this context: {context}"
            ))])
        },
    );
    set.add(prompt)
        .expect("the suite's prompts have distinct names");
}

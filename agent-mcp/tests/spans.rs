//! A call served over MCP is traced as the executor traces one: a `tool_call` span with
//! the tool, the request's id, the outcome and the duration.

#[path = "../../tests/span_recorder.rs"]
mod span_recorder;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use toolwright_core::{AgentResult, Content, Tool, ToolContext, ToolError, ToolSet, async_trait};
use toolwright_mcp::McpServer;

/// Answers, or fails when asked to.
struct Answers;

#[async_trait]
impl Tool for Answers {
    fn name(&self) -> &'static str {
        "answers"
    }

    fn description(&self) -> &'static str {
        "Answers, or fails when asked to."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"fail": {"type": "boolean"}}})
    }

    async fn call(&self, args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        if args["fail"] == true {
            return Err(ToolError::execution("asked to fail").into());
        }
        Ok(vec![Content::text("answered")])
    }
}

#[test]
fn every_call_has_a_span_recording_tool_request_id_outcome_and_duration() {
    let recorder = span_recorder::Recorder::default();
    // The subscriber is this thread's, so everything runs on it.
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut tools = ToolSet::new();
        tools.register_tool(Answers).unwrap();
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            let running = McpServer::new(tools).serve(server_end).await.unwrap();
            let _ = running.waiting().await;
        });
        let client = ().serve(client_end).await.unwrap();
        let call = |name: &'static str, fail: bool| {
            let Value::Object(args) = json!({"fail": fail}) else {
                unreachable!("an object literal")
            };
            client.call_tool(CallToolRequestParams::new(name).with_arguments(args))
        };
        assert_eq!(call("answers", false).await.unwrap().is_error, Some(false));
        assert_eq!(call("answers", true).await.unwrap().is_error, Some(true));
        assert!(
            call("missing", false).await.is_err(),
            "an unknown tool is a protocol error"
        );
        client.cancel().await.unwrap();
    });

    let calls = recorder.tool_calls();
    assert_eq!(calls.len(), 3, "{calls:?}");
    let fields = |at: usize, key: &str| calls[at].get(key).cloned().unwrap_or_default();
    // rmcp's client numbers its requests from 0, initialization first.
    assert_eq!(fields(0, "call_id"), "1");
    assert_eq!(fields(0, "tool"), "answers");
    assert_eq!(fields(0, "outcome"), "\"ok\"");
    assert!(calls[0].contains_key("duration_ms"));
    assert_eq!(fields(1, "outcome"), "\"execution\"");
    assert_eq!(fields(2, "tool"), "missing");
    assert_eq!(fields(2, "outcome"), "\"unknown_tool\"");
}

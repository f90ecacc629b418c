//! The spans of runs and model calls carry the OpenTelemetry GenAI attributes. One test
//! in its own binary: tracing caches whether a callsite is enabled, and tests running
//! alongside without a subscriber could leave a callsite cached as disabled.

#[path = "runtime_tools.rs"]
mod runtime_tools;
#[path = "span_recorder.rs"]
#[allow(dead_code)]
mod spans;

use futures::StreamExt;
use runtime_tools::FnTool;
use serde_json::json;
use std::collections::HashMap;
use toolwright_core::{
    Agent, AgentError, AgentResult, LlmClient, ModelSettings, async_trait,
    llm::{AssistantMessage, LlmError, LlmRequest, ToolCall, Usage},
    run::RunStatus,
    testing::{FnLlm, ScriptedLlm},
};

/// A scripted model that names itself, as the HTTP clients do.
struct Named(ScriptedLlm);

#[async_trait]
impl LlmClient for Named {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        self.0.complete(request).await
    }

    fn model_name(&self) -> Option<&str> {
        Some("m-1")
    }

    fn provider_name(&self) -> Option<&str> {
        Some("openai")
    }
}

fn with_usage(mut message: AssistantMessage, input: u64, output: u64) -> AssistantMessage {
    message.usage = Some(Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    });
    message
}

fn spans_named(recorder: &spans::Recorder, name: &str) -> Vec<HashMap<String, String>> {
    let mut found: Vec<_> = recorder
        .spans
        .lock()
        .unwrap()
        .values()
        .filter(|(n, _)| n == name)
        .map(|(_, f)| f.clone())
        .collect();
    found.sort_by_key(|f| f.get("turn").cloned());
    found
}

#[tokio::test(flavor = "current_thread")]
async fn run_and_model_call_spans_carry_the_gen_ai_attributes() {
    let recorder = spans::Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let llm = Named(ScriptedLlm::new([
        with_usage(
            AssistantMessage::tool_calls([
                ToolCall::new("c1", "echo", json!({})),
                ToolCall::new("c2", "no_such_tool", json!({})),
            ]),
            10,
            5,
        ),
        with_usage(AssistantMessage::text("done"), 40, 2),
    ]));
    let agent = Agent::builder(llm)
        .register_tool(FnTool::text("echo", "ok"))
        .settings(ModelSettings::new().temperature(0.5).max_output_tokens(64))
        .build()
        .unwrap();
    let mut run = agent.start("go");
    // Streamed or not, the spans are the same.
    let mut events = agent.run_stream(&mut run);
    while let Some(event) = events.next().await {
        event.unwrap();
    }
    drop(events);
    assert_eq!(run.status, RunStatus::Finished);

    let runs = spans_named(&recorder, "agent_run");
    assert_eq!(runs.len(), 1);
    let run_span = &runs[0];
    assert_eq!(run_span["gen_ai.operation.name"], "\"invoke_agent\"");
    assert_eq!(run_span["gen_ai.request.model"], "\"m-1\"");
    assert_eq!(run_span["gen_ai.provider.name"], "\"openai\"");
    assert_eq!(run_span["gen_ai.usage.input_tokens"], "50");
    assert_eq!(run_span["gen_ai.usage.output_tokens"], "7");
    assert_eq!(run_span["gen_ai.conversation.id"], run.session_id);

    let calls = spans_named(&recorder, "model_call");
    assert_eq!(calls.len(), 2);
    for call in &calls {
        assert_eq!(call["gen_ai.operation.name"], "\"chat\"");
        assert_eq!(call["otel.name"], "chat m-1");
        assert_eq!(call["gen_ai.request.model"], "\"m-1\"");
        assert_eq!(call["gen_ai.request.temperature"], "0.5");
        assert_eq!(call["gen_ai.request.max_tokens"], "64");
    }
    assert_eq!(calls[0]["turn"], "1");
    assert_eq!(
        calls[0]["gen_ai.response.finish_reasons"],
        "[\"tool_calls\"]"
    );
    assert_eq!(calls[0]["gen_ai.usage.input_tokens"], "10");
    assert_eq!(calls[0]["gen_ai.usage.output_tokens"], "5");
    assert_eq!(calls[1]["gen_ai.response.finish_reasons"], "[\"stop\"]");
    assert_eq!(calls[1]["gen_ai.usage.input_tokens"], "40");

    // Each tool call has an `execute_tool` span named after its tool and call id; a
    // failed one says how it failed.
    let mut tools = spans_named(&recorder, "tool_call");
    tools.sort_by_key(|f| f["gen_ai.tool.call.id"].clone());
    assert_eq!(tools.len(), 2);
    for (tool, (name, id)) in tools.iter().zip([("echo", "c1"), ("no_such_tool", "c2")]) {
        assert_eq!(tool["gen_ai.operation.name"], "\"execute_tool\"");
        assert_eq!(tool["otel.name"], format!("execute_tool {name}"));
        assert_eq!(tool["gen_ai.tool.name"], name);
        assert_eq!(tool["gen_ai.tool.call.id"], id);
        assert_eq!(tool["gen_ai.tool.type"], "\"function\"");
    }
    assert_eq!(tools[0]["outcome"], "\"ok\"");
    assert!(!tools[0].contains_key("error.type"));
    assert_eq!(tools[1]["error.type"], tools[1]["outcome"]);
    assert_ne!(tools[1]["outcome"], "\"ok\"");

    // A failed model call says how it failed, and reports no tokens.
    recorder.spans.lock().unwrap().clear();
    let failing = FnLlm(|_: &LlmRequest<'_>| {
        Err(AgentError::Model(LlmError::RateLimited {
            message: "slow down".into(),
            retry_after: None,
        }))
    });
    let agent = Agent::builder(failing).build().unwrap();
    let mut run = agent.start("Hi");
    assert!(agent.run(&mut run).await.is_err());
    let calls = spans_named(&recorder, "model_call");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["error.type"], "rate_limited");
    assert!(!calls[0].contains_key("gen_ai.usage.input_tokens"));
    assert!(!calls[0].contains_key("gen_ai.request.model"));
}

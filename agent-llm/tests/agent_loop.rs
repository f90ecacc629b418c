//! An agent over a real client against a local server: the agent's and the run's model
//! settings reach the provider's own fields, and streamed runs yield the provider's
//! deltas as they arrive.

mod common;

use agent_core::{Agent, AgentEvent, LlmEvent, ModelSettings, ToolChoice};
use agent_llm::OpenAiClient;
use common::{MockServer, Reply, fast_retry};
use futures::StreamExt;
use serde_json::json;

fn openai(server: &MockServer) -> OpenAiClient {
    OpenAiClient::builder("local-model")
        .base_url(format!("{}/v1", server.url))
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

fn answer(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "local-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
        }),
    )
}

#[tokio::test]
async fn agent_and_run_settings_reach_the_providers_fields() {
    let server = MockServer::start([answer("Hello.")]).await;
    let client = openai(&server).with_settings(ModelSettings::new().seed(1).temperature(1.0));
    let agent = Agent::builder(client)
        .register_tool(common::GetWeather)
        .settings(ModelSettings::new().temperature(0.3).max_output_tokens(50))
        .build()
        .unwrap();
    let mut run = agent.start("Hi").with_settings(
        ModelSettings::new()
            .max_output_tokens(20)
            .tool_choice(ToolChoice::Tool("get_weather".into())),
    );
    agent.run(&mut run).await.unwrap();
    let body = server.only_request().body;
    assert_eq!(body["seed"], 1, "the client's own layer is under all");
    assert_eq!(body["temperature"], 0.3, "the agent's over the client's");
    assert_eq!(body["max_tokens"], 20, "the run's over the agent's");
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": "get_weather"}})
    );
}

fn chunk(delta: serde_json::Value, finish_reason: serde_json::Value) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    })
    .to_string()
}

#[tokio::test]
async fn a_streamed_run_over_sse_calls_a_tool_and_streams_the_answer() {
    let call = [
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":"}}]}),
            serde_json::Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"Paris\"}"}}]}),
            serde_json::Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        "[DONE]".to_owned(),
    ];
    let answer = [
        chunk(
            json!({"role": "assistant", "content": "It is "}),
            serde_json::Value::Null,
        ),
        chunk(json!({"content": "sunny ☀."}), serde_json::Value::Null),
        chunk(json!({}), json!("stop")),
        "[DONE]".to_owned(),
    ];
    let server = MockServer::start([
        Reply::sse(&common::sse_events(call.map(|d| (None, d))), 7),
        Reply::sse(&common::sse_events(answer.map(|d| (None, d))), 5),
    ])
    .await;
    let agent = Agent::builder(openai(&server))
        .register_tool(common::GetWeather)
        .build()
        .unwrap();
    let mut run = agent.start("Weather in Paris?");
    let mut events = agent.run_stream(&mut run);
    let (mut text, mut arguments, mut finished) = (String::new(), String::new(), Vec::new());
    while let Some(event) = events.next().await {
        match event.unwrap() {
            AgentEvent::ModelDelta {
                event: LlmEvent::TextDelta { text: delta },
                turn,
            } => {
                assert_eq!(turn, 2);
                text.push_str(&delta);
            }
            AgentEvent::ModelDelta {
                event:
                    LlmEvent::ToolCallDelta {
                        arguments: delta, ..
                    },
                ..
            } => arguments.push_str(&delta),
            AgentEvent::ToolFinished { name, .. } => finished.push(name),
            _ => {}
        }
    }
    assert_eq!(text, "It is sunny ☀.");
    assert_eq!(arguments, "{\"city\": \"Paris\"}");
    assert_eq!(finished, ["get_weather"]);
    drop(events);
    assert_eq!(run.answer(), Some("It is sunny ☀."));
    let second = &server.requests()[1].body;
    assert_eq!(second["stream"], true);
    // The tool's result went back to the model after its call.
    assert_eq!(second["messages"][2]["role"], "tool");
}

#[tokio::test]
async fn clients_name_their_model_and_provider_for_traces() {
    use agent_core::LlmClient;
    let server = MockServer::start([]).await;
    let client = openai(&server);
    assert_eq!(client.model_name(), Some("local-model"));
    assert_eq!(client.provider_name(), Some("openai"));
    let anthropic = agent_llm::AnthropicClient::builder("k", "claude-x")
        .build()
        .unwrap();
    assert_eq!(anthropic.model_name(), Some("claude-x"));
    assert_eq!(anthropic.provider_name(), Some("anthropic"));
}

//! An agent over a real client against a local server: the agent's and the run's model
//! settings reach the provider's own fields, and streamed runs yield the provider's
//! deltas as they arrive.

mod common;

use agent_core::{Agent, ModelSettings, ToolChoice};
use agent_llm::OpenAiClient;
use common::{MockServer, Reply, fast_retry};
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

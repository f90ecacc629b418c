//! An agent over a real client against a local server: the agent's and the run's model
//! settings reach the provider's own fields, and streamed runs yield the provider's
//! deltas as they arrive.

mod common;

use common::{MockServer, Reply, chat_chunk, fast_retry};
use futures::StreamExt;
use serde_json::json;
use toolwright_core::{
    Agent, ModelSettings,
    agent::AgentEvent,
    llm::{LlmEvent, ToolChoice},
};
use toolwright_llm::OpenAiClient;

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

#[tokio::test]
async fn a_streamed_run_over_sse_calls_a_tool_and_streams_the_answer() {
    let call = [
        chat_chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":"}}]}),
            serde_json::Value::Null,
        ),
        chat_chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"Paris\"}"}}]}),
            serde_json::Value::Null,
        ),
        chat_chunk(json!({}), json!("tool_calls")),
        "[DONE]".to_owned(),
    ];
    let answer = [
        chat_chunk(
            json!({"role": "assistant", "content": "It is "}),
            serde_json::Value::Null,
        ),
        chat_chunk(json!({"content": "sunny ☀."}), serde_json::Value::Null),
        chat_chunk(json!({}), json!("stop")),
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
    use toolwright_core::LlmClient;
    let server = MockServer::start([]).await;
    let client = openai(&server);
    assert_eq!(client.model_name(), Some("local-model"));
    assert_eq!(client.provider_name(), Some("openai"));
    let anthropic = toolwright_llm::AnthropicClient::builder("claude-x")
        .api_key("k")
        .build()
        .unwrap();
    assert_eq!(anthropic.model_name(), Some("claude-x"));
    assert_eq!(anthropic.provider_name(), Some("anthropic"));
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    celsius: i32,
    /// Only when it rains.
    rain_mm: Option<u32>,
}

fn with_output(
    client: &dyn Fn(&toolwright_core::llm::LlmRequest<'_>) -> serde_json::Value,
) -> serde_json::Value {
    let tools = common::definitions();
    let messages = [toolwright_core::Message::user("Weather?")];
    let output = toolwright_core::llm::OutputSchema::of::<Forecast>();
    client(&toolwright_core::llm::LlmRequest::new(&messages, &tools).with_output(&output))
}

#[test]
fn the_output_schema_goes_through_each_providers_structured_output_mode() {
    // OpenAI Chat: `response_format` json_schema, strict, in the strict dialect (every
    // property required, optionals nullable, closed).
    let official = OpenAiClient::builder("m").build().unwrap();
    let body = with_output(&|r| official.request_body(r).unwrap());
    let format = &body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "Forecast");
    assert_eq!(format["json_schema"]["strict"], true);
    let schema = &format["json_schema"]["schema"];
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["city", "celsius", "rain_mm"]));
    assert_eq!(body["tools"].as_array().unwrap().len(), 2, "no answer tool");

    // Without strict tools: the schema as it is, not strict.
    let local = OpenAiClient::builder("m")
        .base_url("http://127.0.0.1:1/v1")
        .strict_tools(false)
        .build()
        .unwrap();
    let body = with_output(&|r| local.request_body(r).unwrap());
    assert_eq!(body["response_format"]["json_schema"]["strict"], false);

    // Responses: `text.format`.
    let responses = toolwright_llm::OpenAiResponsesClient::builder("m")
        .build()
        .unwrap();
    let body = with_output(&|r| responses.request_body(r).unwrap());
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(body["text"]["format"]["name"], "Forecast");
    assert_eq!(body["text"]["format"]["strict"], true);
    assert_eq!(
        body["text"]["format"]["schema"]["required"],
        json!(["city", "celsius", "rain_mm"])
    );

    // Gemini: `responseSchema` in its OpenAPI subset, and a JSON MIME type.
    let gemini = toolwright_llm::GeminiClient::builder("g")
        .api_key("k")
        .build()
        .unwrap();
    let body = with_output(&|r| gemini.request_body(r).unwrap());
    let generation = &body["generationConfig"];
    assert_eq!(generation["responseMimeType"], "application/json");
    assert_eq!(generation["responseSchema"]["type"], "object");
    assert_eq!(
        generation["responseSchema"]["properties"]["rain_mm"]["nullable"],
        true
    );
    assert!(
        generation["responseSchema"]
            .get("additionalProperties")
            .is_none()
    );

    // Anthropic has no such mode: the schema is a final-answer tool beside the others.
    let anthropic = toolwright_llm::AnthropicClient::builder("c")
        .api_key("k")
        .build()
        .unwrap();
    let body = with_output(&|r| anthropic.request_body(r).unwrap());
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3);
    assert_eq!(tools[2]["name"], "final_result");
    assert_eq!(
        tools[2]["input_schema"]["properties"]["celsius"]["type"],
        "integer"
    );
    assert!(
        body.get("tool_choice").is_none(),
        "the model may still call tools"
    );
}

fn anthropic_message(content: serde_json::Value, stop_reason: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop_reason, "stop_sequence": null,
            "usage": {"input_tokens": 20, "output_tokens": 9}
        }),
    )
}

#[tokio::test]
async fn anthropic_typed_output_through_the_answer_tool_with_a_repair() {
    let server = MockServer::start([
        // First a wrong type, then a valid answer; both as calls of the answer tool.
        anthropic_message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "final_result",
                "input": {"city": "Paris", "celsius": "mild"}}]),
            "tool_use",
        ),
        anthropic_message(
            json!([{"type": "tool_use", "id": "toolu_2", "name": "final_result",
                "input": {"city": "Paris", "celsius": 18}}]),
            "tool_use",
        ),
    ])
    .await;
    let client = toolwright_llm::AnthropicClient::builder("claude-test")
        .api_key("k")
        .base_url(&server.url)
        .retry(fast_retry(1))
        .build()
        .unwrap();
    let agent = Agent::builder(client).build().unwrap();
    let mut run = agent.start("Weather in Paris?");
    let out = agent.run_typed::<Forecast>(&mut run).await.unwrap();
    assert_eq!(
        out,
        toolwright_core::agent::TypedOutcome::Finished(Forecast {
            city: "Paris".into(),
            celsius: 18,
            rain_mm: None
        })
    );
    let requests = server.requests();
    // No other tool: the answer tool is forced.
    assert_eq!(
        requests[0].body["tool_choice"],
        json!({"type": "tool", "name": "final_result"})
    );
    // The first answer went back as text (it ended the turn), then the reason it failed.
    let messages = requests[1].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        last.to_string().contains("expected i32"),
        "the repair names the problem: {last}"
    );
    assert_eq!(run.usage.requests, 2);
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Trip {
    city: String,
    #[serde(default)]
    nights: u32,
}

#[tokio::test]
async fn a_strict_answers_null_for_an_optional_field_reaches_the_type_as_absent() {
    // The strict dialect makes `nights` required and nullable; the model sends null.
    let reply = |text: &str| {
        let chunks = [
            chat_chunk(
                json!({"role": "assistant", "content": text}),
                serde_json::Value::Null,
            ),
            chat_chunk(json!({}), json!("stop")),
            "[DONE]".to_owned(),
        ];
        Reply::sse(&common::sse_events(chunks.map(|d| (None, d))), 9)
    };
    let server = MockServer::start([reply(r#"{"city": "Oslo", "nights": null}"#)]).await;
    let agent = Agent::builder(openai(&server)).build().unwrap();
    let mut run = agent.start("Plan a trip");
    // Without an output type, the answer is the model's text as it wrote it.
    let mut events = agent.run_stream(&mut run);
    while let Some(event) = events.next().await {
        event.unwrap();
    }
    drop(events);
    assert_eq!(run.answer(), Some(r#"{"city": "Oslo", "nights": null}"#));

    let server = MockServer::start([Reply::json(
        200,
        json!({
            "id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "{\"city\": \"Oslo\", \"nights\": null}"}}]
        }),
    )])
    .await;
    let agent = Agent::builder(openai(&server)).build().unwrap();
    let mut run = agent.start("Plan a trip");
    let out = agent.run_typed::<Trip>(&mut run).await.unwrap();
    assert_eq!(
        out,
        toolwright_core::agent::TypedOutcome::Finished(Trip {
            city: "Oslo".into(),
            nights: 0
        })
    );
    let body = &server.only_request().body;
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["required"],
        json!(["city", "nights"])
    );
}

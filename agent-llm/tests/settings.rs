//! Typed model settings, images and whole answers, as each provider's request body and
//! response format have them.

mod common;

use common::{MockServer, Reply, assert_fields, definitions, usage};
use serde_json::{Value, json};
use toolwright_core::{
    Content, LlmClient, Message, ModelSettings,
    llm::{AssistantMessage, LlmRequest, ToolCall, ToolChoice, ToolResultMessage},
};
use toolwright_llm::{AnthropicClient, GeminiClient, OpenAiClient, OpenAiResponsesClient};

fn all_settings() -> ModelSettings {
    ModelSettings::new()
        .temperature(0.25)
        .max_output_tokens(300)
        .tool_choice(ToolChoice::Tool("get_weather".into()))
        .parallel_tool_calls(false)
        .stop_sequences(["END"])
        .seed(7)
}

fn body_with(settings: &ModelSettings, client: &dyn Fn(&LlmRequest<'_>) -> Value) -> Value {
    let tools = definitions();
    let messages = [Message::user("Weather?")];
    client(&LlmRequest::new(&messages, &tools).with_settings(settings))
}

#[test]
fn openai_chat_fields() {
    let official = OpenAiClient::builder("m").build().unwrap();
    let body = body_with(&all_settings(), &|r| official.request_body(r).unwrap());
    assert_fields(
        &body,
        json!({
            "temperature": 0.25,
            "max_completion_tokens": 300,
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "parallel_tool_calls": false,
            "stop": ["END"],
            "seed": 7,
        }),
    );
    // Compatible servers mostly know only `max_tokens`.
    let local = OpenAiClient::builder("m")
        .base_url("http://127.0.0.1:8080/v1")
        .build()
        .unwrap();
    let body = body_with(&all_settings(), &|r| local.request_body(r).unwrap());
    assert_eq!(body["max_tokens"], 300);
    assert!(body.get("max_completion_tokens").is_none());
    for (choice, wire) in [
        (ToolChoice::Auto, json!("auto")),
        (ToolChoice::Required, json!("required")),
        (ToolChoice::None, json!("none")),
    ] {
        let settings = ModelSettings::new().tool_choice(choice);
        assert_eq!(
            body_with(&settings, &|r| local.request_body(r).unwrap())["tool_choice"],
            wire
        );
    }
}

#[test]
fn anthropic_fields() {
    let client = AnthropicClient::builder("m")
        .api_key("k")
        .max_tokens(1000)
        .build()
        .unwrap();
    let body = body_with(&all_settings(), &|r| client.request_body(r).unwrap());
    assert_fields(
        &body,
        json!({
            "temperature": 0.25,
            "max_tokens": 300,
            "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
            "stop_sequences": ["END"],
        }),
    );
    // The API has no seed and no top-level parallel switch.
    assert!(body.get("seed").is_none() && body.get("parallel_tool_calls").is_none());
    let required = ModelSettings::new().tool_choice(ToolChoice::Required);
    assert_eq!(
        body_with(&required, &|r| client.request_body(r).unwrap())["tool_choice"],
        json!({"type": "any"})
    );
    // Without settings the builder's limit holds.
    let body = body_with(&ModelSettings::new(), &|r| client.request_body(r).unwrap());
    assert_eq!(body["max_tokens"], 1000);
    assert!(body.get("tool_choice").is_none());
}

#[test]
fn gemini_fields() {
    let client = GeminiClient::builder("m").api_key("k").build().unwrap();
    let body = body_with(&all_settings(), &|r| client.request_body(r).unwrap());
    assert_eq!(
        body["generationConfig"],
        json!({"temperature": 0.25, "maxOutputTokens": 300, "stopSequences": ["END"], "seed": 7})
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}})
    );
    assert_eq!(
        body["tools"][0]["functionDeclarations"][0]["name"],
        "get_weather"
    );
}

#[test]
fn responses_fields() {
    let client = OpenAiResponsesClient::builder("m").build().unwrap();
    let body = body_with(&all_settings(), &|r| client.request_body(r).unwrap());
    assert_fields(
        &body,
        json!({
            "temperature": 0.25,
            "max_output_tokens": 300,
            "tool_choice": {"type": "function", "name": "get_weather"},
            "parallel_tool_calls": false,
        }),
    );
    assert!(body.get("stop").is_none() && body.get("seed").is_none());
}

#[test]
fn layers_merge_and_extra_fields_pass_through() {
    let client = OpenAiClient::builder("m")
        .settings(ModelSettings::new().temperature(0.9).max_output_tokens(50))
        .build()
        .unwrap();
    let request = ModelSettings::new()
        .temperature(0.1)
        .extra("top_p", 0.5)
        .extra("temperature", 0.3);
    let body = body_with(&request, &|r| client.request_body(r).unwrap());
    // The request's extra field beats its typed one, which beats the client's.
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["max_completion_tokens"], 50);
    assert_eq!(body["top_p"], 0.5);
}

#[test]
fn images_in_user_messages() {
    let messages = [Message::user_content([
        Content::text("What is this?"),
        Content::image("iVBORw0KGgo=", "image/png"),
    ])];
    let request = LlmRequest::new(&messages, &[]);
    let openai = OpenAiClient::builder("m").build().unwrap();
    assert_eq!(
        openai.request_body(&request).unwrap()["messages"][0],
        json!({"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        ]})
    );
    let anthropic = AnthropicClient::builder("m").api_key("k").build().unwrap();
    assert_eq!(
        anthropic.request_body(&request).unwrap()["messages"][0],
        json!({"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
        ]})
    );
    let gemini = GeminiClient::builder("m").api_key("k").build().unwrap();
    assert_eq!(
        gemini.request_body(&request).unwrap()["contents"][0],
        json!({"role": "user", "parts": [
            {"text": "What is this?"},
            {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
        ]})
    );
    let responses = OpenAiResponsesClient::builder("m").build().unwrap();
    assert_eq!(
        responses.request_body(&request).unwrap()["input"][0],
        json!({"role": "user", "content": [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
        ]})
    );
}

fn turn_with_tool_result() -> Vec<Message> {
    vec![
        Message::user("Weather in Paris?"),
        Message::Assistant(AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            json!({"city": "Paris"}),
        )])),
        Message::Tool(ToolResultMessage {
            call_id: "call_1".into(),
            name: "get_weather".into(),
            content: vec![Content::text("Paris: 21°C, sunny")],
            is_error: false,
        }),
    ]
}

#[tokio::test]
async fn gemini_whole_answer_and_tool_results() {
    let server = MockServer::start([Reply::json(
        200,
        json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Sunny, 21°C."}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 6, "totalTokenCount": 36},
            "modelVersion": "gemini-test"
        }),
    )])
    .await;
    let client = GeminiClient::builder("gemini-test")
        .api_key("g-key")
        .base_url(&server.url)
        .build()
        .unwrap();
    let tools = definitions();
    let messages = turn_with_tool_result();
    let answer = client
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    assert_eq!(answer.text.as_deref(), Some("Sunny, 21°C."));
    assert_eq!(answer.usage, Some(usage(30, 6, 0, 0)));
    let sent = server.only_request();
    assert_eq!(sent.path, "/v1beta/models/gemini-test:generateContent");
    assert_eq!(
        sent.body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "Paris: 21°C, sunny"}}}]}
        ])
    );
}

#[tokio::test]
async fn responses_whole_answer_and_tool_results() {
    let server = MockServer::start([Reply::json(
        200,
        json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
            "output": [
                {"id": "rs_1", "type": "reasoning", "summary": []},
                {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_2", "name": "get_time", "arguments": "{\"city\":\"Tokyo\"}"}
            ],
            "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 8}, "total_tokens": 70}
        }),
    )])
    .await;
    let client = OpenAiResponsesClient::builder("gpt-test")
        .base_url(format!("{}/v1", server.url))
        .build()
        .unwrap();
    let tools = definitions();
    let messages = turn_with_tool_result();
    let answer = client
        .complete(LlmRequest::new(&messages, &tools))
        .await
        .unwrap();
    assert_eq!(
        answer.tool_calls,
        [ToolCall::new(
            "call_2",
            "get_time",
            json!({"city": "Tokyo"})
        )]
    );
    assert_eq!(answer.usage.unwrap().reasoning_tokens, 8);
    assert_eq!(answer.provider_blocks[0]["type"], "reasoning");
    let sent = server.only_request();
    assert_eq!(
        sent.body["input"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "Paris: 21°C, sunny"}
        ])
    );
}

/// The tool names of a body's `tools`, wherever the provider keeps them.
fn sent_names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
        })
        .collect()
}

#[test]
fn allowed_tools_as_each_provider_has_them() {
    let allowed = ModelSettings::new().tool_choice(ToolChoice::Allowed(vec!["get_time".into()]));

    // OpenAI: every tool still sent (the cached prefix holds), the choice narrows them.
    let chat = OpenAiClient::builder("m").build().unwrap();
    let body = body_with(&allowed, &|r| chat.request_body(r).unwrap());
    assert_eq!(sent_names(&body["tools"]), ["get_weather", "get_time"]);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "allowed_tools", "allowed_tools": {"mode": "auto",
               "tools": [{"type": "function", "function": {"name": "get_time"}}]}})
    );
    let responses = OpenAiResponsesClient::builder("m").build().unwrap();
    let body = body_with(&allowed, &|r| responses.request_body(r).unwrap());
    assert_eq!(sent_names(&body["tools"]), ["get_weather", "get_time"]);
    assert_eq!(
        body["tool_choice"],
        json!({"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_time"}]})
    );

    // Anthropic and Gemini have no such choice: only the allowed tools go, and the
    // model may still answer without one.
    let anthropic = AnthropicClient::builder("m").api_key("k").build().unwrap();
    let body = body_with(&allowed, &|r| anthropic.request_body(r).unwrap());
    assert_eq!(sent_names(&body["tools"]), ["get_time"]);
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    let gemini = GeminiClient::builder("m").api_key("k").build().unwrap();
    let body = body_with(&allowed, &|r| gemini.request_body(r).unwrap());
    assert_eq!(
        sent_names(&body["tools"][0]["functionDeclarations"]),
        ["get_time"]
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "AUTO"}})
    );
}

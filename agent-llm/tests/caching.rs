//! Prompt caching of the tool definitions and the system prompt: Anthropic's
//! `cache_control` marks (opt-in, as its cache writes cost extra) and OpenAI Responses'
//! `prompt_cache_key` (free, on by default against OpenAI), with the cached tokens the
//! provider reports reaching the run's usage.

mod common;

use common::{MockServer, Reply, definitions, fast_retry, toolset};
use serde_json::{Value, json};
use toolwright_core::{Agent, Message, RunOutcome, llm::LlmRequest};
use toolwright_llm::{AnthropicClient, OpenAiResponsesClient};

fn message(content: Value, stop: &str, written: u64, read: u64) -> Reply {
    Reply::json(
        200,
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
               "content": content, "stop_reason": stop,
               "usage": {"input_tokens": 20, "cache_creation_input_tokens": written,
                         "cache_read_input_tokens": read, "output_tokens": 10}}),
    )
}

#[tokio::test]
async fn anthropic_marks_tools_and_system_and_the_cached_tokens_move() {
    let server = MockServer::start([
        message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {"city": "Oslo"}}]),
            "tool_use",
            1800,
            0,
        ),
        message(json!([{"type": "text", "text": "14:05."}]), "end_turn", 0, 1800),
    ])
    .await;
    let client = AnthropicClient::builder("claude-test")
        .api_key("k")
        .base_url(&server.url)
        .retry(fast_retry(1))
        .cache_prompt(true)
        .build()
        .unwrap();
    let agent = Agent::builder(client)
        .system_prompt("Answer briefly.")
        .tools(toolset())
        .build()
        .unwrap();
    let mut state = agent.start("Time in Oslo?");
    let outcome = agent.run(&mut state).await.unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            answer: "14:05.".into()
        }
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let body = &request.body;
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "Answer briefly.", "cache_control": {"type": "ephemeral"}}])
        );
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(
            tools.last().unwrap()["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(
            tools[..tools.len() - 1]
                .iter()
                .all(|t| t.get("cache_control").is_none())
        );
    }
    // The first turn wrote the cache, the second read it.
    assert_eq!(state.usage.tokens.cached_input_tokens, 1800);
    assert_eq!(state.usage.tokens.input_tokens, 20 + 1800 + 20 + 1800);

    // Off by default: a plain system string, no marks.
    let plain = AnthropicClient::builder("m").api_key("k").build().unwrap();
    let tools = definitions();
    let messages = [Message::system("Answer briefly."), Message::user("Hi")];
    let body = plain
        .request_body(&LlmRequest::new(&messages, &tools))
        .unwrap();
    assert_eq!(body["system"], "Answer briefly.");
    assert!(!body.to_string().contains("cache_control"));
}

#[test]
fn responses_sends_a_prompt_cache_key_naming_the_shared_prefix() {
    let client = OpenAiResponsesClient::builder("m").build().unwrap();
    let tools = definitions();
    let key = |messages: &[Message], tools| {
        client
            .request_body(&LlmRequest::new(messages, tools))
            .unwrap()["prompt_cache_key"]
            .clone()
    };
    let first = [Message::system("Be brief."), Message::user("Weather?")];
    let later = [
        Message::system("Be brief."),
        Message::user("Weather?"),
        Message::Assistant(toolwright_core::llm::AssistantMessage::text("Sunny.")),
        Message::user("And tomorrow?"),
    ];
    let a = key(&first, &tools);
    assert!(a.as_str().unwrap().starts_with("toolwright-"), "{a}");
    // The conversation grows, the key stays: the prefix is the same.
    assert_eq!(key(&later, &tools), a);
    // Other instructions or other tools are another prefix.
    assert_ne!(
        key(
            &[Message::system("Be long."), Message::user("Weather?")],
            &tools
        ),
        a
    );
    assert_ne!(key(&first, &tools[..1]), a);

    // A key of the application's own wins.
    let own = OpenAiResponsesClient::builder("m")
        .param("prompt_cache_key", json!("tenant-7"))
        .build()
        .unwrap();
    let body = own.request_body(&LlmRequest::new(&first, &tools)).unwrap();
    assert_eq!(body["prompt_cache_key"], "tenant-7");
    // Not sent to other servers, which may refuse it, nor when turned off.
    let compatible = OpenAiResponsesClient::builder("m")
        .base_url("http://127.0.0.1:9/v1")
        .build()
        .unwrap();
    let body = compatible
        .request_body(&LlmRequest::new(&first, &tools))
        .unwrap();
    assert!(body.get("prompt_cache_key").is_none());
    let off = OpenAiResponsesClient::builder("m")
        .prompt_cache_key(false)
        .build()
        .unwrap();
    let body = off.request_body(&LlmRequest::new(&first, &tools)).unwrap();
    assert!(body.get("prompt_cache_key").is_none());
}

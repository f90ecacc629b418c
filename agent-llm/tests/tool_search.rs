//! Tool search in each provider's wire format: the searchable tools sent for the
//! provider's own search (Anthropic, OpenAI Responses) or found with the built-in
//! `search_tools` tool (Chat Completions, Gemini), a run that searches and then calls a
//! found tool, and what it saves per turn on a catalog of 500 tools.

#[path = "../benches/catalog.rs"]
mod catalog;
mod common;

use catalog::{CATALOG_SIZE, ToolBytes, catalog_set, measure};
use common::{MockServer, Reply, fast_retry};
use serde_json::{Value, json};
use toolwright_core::search::SEARCH_TOOL;
use toolwright_core::{Agent, RunOutcome, search::ToolSearch};
use toolwright_llm::{AnthropicClient, GeminiClient, OpenAiClient, OpenAiResponsesClient};

fn anthropic(url: &str) -> AnthropicClient {
    AnthropicClient::builder("claude-test")
        .api_key("k")
        .base_url(url)
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

fn responses(url: &str) -> OpenAiResponsesClient {
    OpenAiResponsesClient::builder("gpt-test")
        .api_key("k")
        .base_url(url)
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

/// The `tools` array of a recorded request.
fn tools(body: &Value) -> &Vec<Value> {
    body["tools"].as_array().expect("a tools array")
}

/// The names of the tools a request sends with their schemas in full.
fn full_tools(body: &Value, name: impl Fn(&Value) -> Option<&str>) -> Vec<String> {
    tools(body)
        .iter()
        .filter(|t| t.get("defer_loading").is_none())
        .filter_map(|t| name(t).map(str::to_owned))
        .collect()
}

fn print(format: &str, bytes: ToolBytes) {
    let pct = |part: usize| 100.0 * part as f64 / bytes.all as f64;
    println!(
        "{format}: all {} B (~{} tokens); native search shown {} B ({:.1}%), on the wire {} B; \
         built-in search first turn {} B ({:.1}%), after a search {} B ({:.1}%)",
        bytes.all,
        ToolBytes::tokens(bytes.all),
        bytes.native_shown,
        pct(bytes.native_shown),
        bytes.native_wire,
        bytes.search_first_turn,
        pct(bytes.search_first_turn),
        bytes.search_after_search,
        pct(bytes.search_after_search),
    );
}

#[tokio::test]
async fn with_500_tools_search_sends_at_most_a_tenth_of_the_definitions() {
    let claude = anthropic("http://127.0.0.1:9");
    let anthropic_bytes = measure(CATALOG_SIZE, |r| claude.request_body(r).unwrap(), false).await;
    print("anthropic", anthropic_bytes);
    let openai = responses("http://127.0.0.1:9");
    let responses_bytes = measure(CATALOG_SIZE, |r| openai.request_body(r).unwrap(), true).await;
    print("openai-responses", responses_bytes);
    for bytes in [anthropic_bytes, responses_bytes] {
        assert!(bytes.all > 100_000, "{bytes:?}");
        assert!(bytes.search_first_turn * 10 <= bytes.all, "{bytes:?}");
        assert!(bytes.search_after_search * 10 <= bytes.all, "{bytes:?}");
        // The provider searches schemas it was sent: on the wire nothing is saved.
        assert!(bytes.native_wire >= bytes.all, "{bytes:?}");
    }
    // Anthropic shows the model none of a deferred tool until it is found.
    assert!(
        anthropic_bytes.native_shown * 10 <= anthropic_bytes.all,
        "{anthropic_bytes:?}"
    );
}

/// An agent over `model` whose 500 catalog tools are all searchable.
fn searching_agent(model: impl toolwright_core::LlmClient + 'static) -> Agent {
    Agent::builder(model)
        .tools(catalog_set(CATALOG_SIZE))
        .tool_search(ToolSearch::All)
        .build()
        .unwrap()
}

async fn run(agent: &Agent) -> RunOutcome {
    let mut state = agent.start("What will the weather be in Paris in two days?");
    agent.run(&mut state).await.unwrap()
}

fn finished(answer: &str) -> RunOutcome {
    RunOutcome::Finished {
        answer: answer.into(),
    }
}

#[tokio::test]
async fn anthropic_searches_natively_then_calls_a_deferred_tool() {
    let search_call = json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25", "input": {"query": "forecast number 42"}});
    let search_result = json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01", "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "forecast_42"}]
    }});
    let message = |content: Value, stop: &str| {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
               "content": content, "stop_reason": stop, "usage": {"input_tokens": 900, "output_tokens": 40}})
    };
    let server = MockServer::start([
        Reply::json(
            200,
            message(
                json!([search_call, search_result, {"type": "tool_use", "id": "toolu_01", "name": "forecast_42",
                        "input": {"city": "Paris", "days": 2, "unit": null}}]),
                "tool_use",
            ),
        ),
        Reply::json(
            200,
            message(json!([{"type": "text", "text": "42°C."}]), "end_turn"),
        ),
    ])
    .await;
    let outcome = run(&searching_agent(anthropic(&server.url))).await;
    assert_eq!(outcome, finished("42°C."));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(
        tools(first)[0],
        json!({"type": AnthropicClient::TOOL_SEARCH_TYPE, "name": AnthropicClient::TOOL_SEARCH_NAME})
    );
    let deferred: Vec<&Value> = tools(first)
        .iter()
        .filter(|t| t["defer_loading"] == json!(true))
        .collect();
    assert_eq!(deferred.len(), CATALOG_SIZE);
    assert_eq!(deferred[42]["name"], "forecast_42");
    assert!(deferred[42]["input_schema"]["properties"]["city"].is_object());
    // The built-in search is not offered beside the provider's.
    assert!(tools(first).iter().all(|t| t["name"] != SEARCH_TOOL));
    // Each request with deferred tools asks for the search's beta.
    for request in &requests {
        assert_eq!(
            request.header("anthropic-beta"),
            Some(AnthropicClient::ADVANCED_TOOL_USE_BETA)
        );
    }

    // The search's call and result go back before the call they led to.
    let second = &requests[1].body;
    let assistant = &second["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    let kinds: Vec<&str> = assistant["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["server_tool_use", "tool_search_tool_result", "tool_use"]
    );
    assert_eq!(assistant["content"][1], search_result);
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01");
    assert_eq!(result["content"][0]["text"], "Paris: 2 days, 22°C");
}

#[tokio::test]
async fn openai_responses_searches_natively_then_calls_a_deferred_tool() {
    let search_call = json!({"type": "tool_search_call", "id": "tsc_1", "status": "completed", "arguments": {"query": "forecast number 42"}});
    let search_output = json!({"type": "tool_search_output", "id": "tso_1", "status": "completed",
        "tools": [{"type": "function", "name": "forecast_42", "defer_loading": true}]});
    let response = |output: Value| {
        json!({"id": "resp_1", "object": "response", "status": "completed", "output": output,
               "usage": {"input_tokens": 900, "output_tokens": 40, "total_tokens": 940}})
    };
    let server = MockServer::start([
        Reply::json(
            200,
            response(json!([search_call, search_output, {"type": "function_call", "id": "fc_1", "call_id": "call_1",
                "name": "forecast_42", "arguments": "{\"city\":\"Paris\",\"days\":2,\"unit\":null}", "status": "completed"}])),
        ),
        Reply::json(
            200,
            response(json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "42°C.", "annotations": []}]}])),
        ),
    ])
    .await;
    let outcome = run(&searching_agent(responses(&server.url))).await;
    assert_eq!(outcome, finished("42°C."));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(tools(first)[0], json!({"type": "tool_search"}));
    let deferred: Vec<&Value> = tools(first)
        .iter()
        .filter(|t| t["defer_loading"] == json!(true))
        .collect();
    assert_eq!(deferred.len(), CATALOG_SIZE);
    assert_eq!(deferred[42]["type"], "function");
    assert_eq!(deferred[42]["name"], "forecast_42");
    assert_eq!(deferred[42]["strict"], true);

    let input = requests[1].body["input"].as_array().unwrap().clone();
    let kinds: Vec<&str> = input
        .iter()
        .filter_map(|item| item["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_search_call",
            "tool_search_output",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[2], search_output);
    assert_eq!(input[4]["output"], "Paris: 2 days, 22°C");
}

/// A chat completion calling `calls` (`(id, name, arguments)`), or answering `text`.
fn chat(calls: &[(&str, &str, Value)], text: Option<&str>) -> Reply {
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    let reason = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    Reply::json(
        200,
        json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
               "choices": [{"index": 0, "message": message, "finish_reason": reason}]}),
    )
}

fn chat_client(url: &str) -> OpenAiClient {
    OpenAiClient::builder("gpt-test")
        .api_key("k")
        .base_url(format!("{url}/v1"))
        .retry(fast_retry(1))
        .build()
        .unwrap()
}

fn chat_tool_names(body: &Value) -> Vec<String> {
    full_tools(body, |t| t["function"]["name"].as_str())
}

#[tokio::test]
async fn chat_completions_searches_with_the_built_in_tool_and_a_guess_is_refused() {
    let server = MockServer::start([
        // A search, and a guess at a tool it has not found.
        chat(
            &[
                (
                    "call_1",
                    SEARCH_TOOL,
                    json!({"query": "forecast number 42"}),
                ),
                (
                    "call_2",
                    "forecast_7",
                    json!({"city": "Paris", "days": 2, "unit": null}),
                ),
            ],
            None,
        ),
        chat(
            &[(
                "call_3",
                "forecast_42",
                json!({"city": "Paris", "days": 2, "unit": null}),
            )],
            None,
        ),
        chat(&[], Some("42°C.")),
    ])
    .await;
    let outcome = run(&searching_agent(chat_client(&server.url))).await;
    assert_eq!(outcome, finished("42°C."));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // First turn: the search tool alone, not 500 schemas.
    assert_eq!(chat_tool_names(&requests[0].body), [SEARCH_TOOL]);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let search = messages
        .iter()
        .find(|m| m["tool_call_id"] == "call_1")
        .unwrap();
    let found: Value = serde_json::from_str(search["content"].as_str().unwrap()).unwrap();
    assert_eq!(found["tools"][0]["name"], "forecast_42");
    assert!(found["tools"][0]["parameters"]["properties"]["days"].is_object());
    let guess = messages
        .iter()
        .find(|m| m["tool_call_id"] == "call_2")
        .unwrap();
    assert!(
        guess["content"]
            .as_str()
            .unwrap()
            .contains("\"kind\":\"unknown_tool\""),
        "{guess}"
    );
    // Second turn: the tools the search found, in full, beside the search.
    let offered = chat_tool_names(&requests[1].body);
    assert!(offered.contains(&"forecast_42".to_owned()), "{offered:?}");
    assert!(offered.contains(&SEARCH_TOOL.to_owned()));
    assert!(!offered.contains(&"forecast_7".to_owned()));
    assert!(offered.len() <= 1 + toolwright_core::search::DEFAULT_SEARCH_LIMIT);
    let messages = requests[2].body["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .find(|m| m["tool_call_id"] == "call_3")
        .unwrap();
    assert_eq!(result["content"], "Paris: 2 days, 22°C");
}

#[tokio::test]
async fn a_found_tool_keeps_its_approval_policy() {
    let server = MockServer::start([
        chat(
            &[("call_1", SEARCH_TOOL, json!({"query": "forecast 42"}))],
            None,
        ),
        chat(
            &[(
                "call_2",
                "forecast_42",
                json!({"city": "Paris", "days": 2, "unit": null}),
            )],
            None,
        ),
    ])
    .await;
    let agent = Agent::builder(chat_client(&server.url))
        .tools(catalog_set(CATALOG_SIZE))
        .tool_search(ToolSearch::All)
        .approval_rule(|call, _| {
            if call.name.starts_with("forecast_") {
                toolwright_core::tool::ApprovalPolicy::Required
            } else {
                toolwright_core::tool::ApprovalPolicy::NotRequired
            }
        })
        .build()
        .unwrap();
    let outcome = run(&agent).await;
    let RunOutcome::Paused { pending } = outcome else {
        panic!("expected a pause for approval: {outcome:?}");
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call.name, "forecast_42");
}

#[tokio::test]
async fn gemini_searches_with_the_built_in_tool() {
    let answer = |parts: Value| {
        Reply::json(
            200,
            json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                   "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 6, "totalTokenCount": 36}}),
        )
    };
    let server = MockServer::start([
        answer(json!([{"functionCall": {"name": SEARCH_TOOL, "args": {"query": "forecast number 42"}}}])),
        answer(json!([{"functionCall": {"name": "forecast_42", "args": {"city": "Paris", "days": 2}}}])),
        answer(json!([{"text": "42°C."}])),
    ])
    .await;
    let gemini = GeminiClient::builder("gemini-test")
        .api_key("k")
        .base_url(&server.url)
        .retry(fast_retry(1))
        .build()
        .unwrap();
    let outcome = run(&searching_agent(gemini)).await;
    assert_eq!(outcome, finished("42°C."));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let declared = |body: &Value| -> Vec<String> {
        body["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(declared(&requests[0].body), [SEARCH_TOOL]);
    assert!(declared(&requests[1].body).contains(&"forecast_42".to_owned()));
    let last = requests[2].body.to_string();
    assert!(last.contains("Paris: 2 days, 22°C"), "{last}");
}

#[tokio::test]
async fn a_streamed_anthropic_search_is_kept_to_be_sent_back() {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 900, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"forecast"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": " 42\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01", "content": {"type": "tool_search_tool_search_result", "tool_references": [{"type": "tool_reference", "tool_name": "forecast_42"}]}}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_01", "name": "forecast_42", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Paris\", \"days\": 2}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 60}}),
        json!({"type": "message_stop"}),
    ];
    let body = common::sse_events(events.iter().map(|e| (e["type"].as_str(), e.to_string())));
    let bytes = futures::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(body))]);
    let client = anthropic("http://127.0.0.1:9");
    let messages = [toolwright_core::Message::user("Weather?")];
    let deferred = catalog::catalog(50);
    let request = toolwright_core::llm::LlmRequest::new(&messages, &[]).with_deferred(&deferred);
    let message = toolwright_core::llm::collect_stream(client.parse_stream(&request, bytes))
        .await
        .unwrap();
    assert_eq!(message.tool_calls.len(), 1);
    assert_eq!(message.tool_calls[0].name, "forecast_42");
    assert_eq!(
        message.tool_calls[0].arguments,
        json!({"city": "Paris", "days": 2})
    );
    let kinds: Vec<&str> = message
        .provider_blocks
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["server_tool_use", "tool_search_tool_result"]);
    assert_eq!(
        message.provider_blocks[0]["input"],
        json!({"query": "forecast 42"})
    );
}

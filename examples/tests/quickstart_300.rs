//! The quickstart as a newcomer runs it, with 300 tools (`QUICKSTART_CATALOG=297` beside
//! its own three), against mock Anthropic and OpenAI servers that speak each provider's
//! streamed wire format. The scripted model searches for a warehouse tool, calls it and
//! answers. Each test checks that the run finishes with that answer, that the tool's
//! output reached the model's next request, and that every request shows the model at
//! most a tenth of the tool-definition bytes that sending all 300 in full would.

// The scripted provider servers of the model-client tests: each request answered with
// the next reply of a script, in the provider's wire format, and recorded.
#[path = "../../agent-llm/tests/common/mod.rs"]
mod common;

use common::{MockServer, Reply, sse_events};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use toolwright_core::search::SEARCH_TOOL;
use toolwright_llm::AnthropicClient;

/// Generated tools added to the quickstart's three: 300 in all.
const CATALOG: usize = 297;
/// The tool the question needs: the last one.
const WANTED: &str = "warehouse_297_stock";
const ANSWER: &str = "Warehouse 297 has the umbrellas; Paris is rainy.";

/// A server-sent event stream of `events` (`(event name, data)`), in one piece.
fn stream(events: impl IntoIterator<Item = (Option<&'static str>, String)>) -> Reply {
    let body = sse_events(events);
    let length = body.len();
    Reply::sse(&body, length)
}

/// The quickstart's executable, built (or found up to date) by cargo, wherever cargo
/// puts it.
fn quickstart() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let mut cargo = Command::new(env!("CARGO"));
            // What cargo tells this test about its own package: a build script that
            // reruns when one changes (ring's) would make every build of the example
            // here a rebuild.
            for (name, _) in std::env::vars_os() {
                let name = name.to_string_lossy();
                if [
                    "CARGO_MANIFEST_",
                    "CARGO_PKG_",
                    "CARGO_CRATE_",
                    "CARGO_BIN_",
                    "CARGO_PRIMARY_",
                    "CARGO_TARGET_TMPDIR",
                ]
                .iter()
                .any(|prefix| name.starts_with(prefix))
                {
                    cargo.env_remove(&*name);
                }
            }
            let output = cargo
                // As scripts/test.sh runs it, from the workspace's root: the same
                // features, so the same build.
                .args(["build", "--example", "quickstart"])
                .arg("--message-format=json-render-diagnostics")
                .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
                .output()
                .expect("cargo runs");
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|m| {
                    m["reason"] == "compiler-artifact" && m["target"]["name"] == "quickstart"
                })
                .find_map(|m| m["executable"].as_str().map(PathBuf::from))
                .expect("cargo built the quickstart")
        })
        .clone()
}

/// Runs the quickstart with the catalog and `model` (environment variables), to its
/// end; its stdout.
async fn run_quickstart(model: &[(&'static str, String)]) -> String {
    let model = model.to_vec();
    let output = tokio::task::spawn_blocking(move || {
        let mut command = Command::new(quickstart());
        for var in [
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            "OPENAI_MODEL",
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_MODEL",
            "QUICKSTART_TOOL_CHOICE",
        ] {
            command.env_remove(var);
        }
        command
            .env("QUICKSTART_CATALOG", CATALOG.to_string())
            .envs(model)
            .output()
            .expect("the quickstart starts")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(&format!("final answer (no pause):\n{ANSWER}")),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("■ {WANTED} (")), "{stdout}");
    stdout
}

/// Bytes of `tools` serialized as JSON.
fn bytes(tools: &[Value]) -> usize {
    serde_json::to_vec(tools).unwrap().len()
}

fn tools(body: &Value) -> &[Value] {
    body["tools"].as_array().expect("a tools array")
}

/// Asserts that `shown` bytes are at most a tenth of `all`, and prints the ratio.
#[track_caller]
fn assert_a_tenth(provider: &str, request: usize, shown: usize, all: usize) {
    let pct = 100.0 * shown as f64 / all as f64;
    println!("{provider} request {request}: shown {shown} B of {all} B ({pct:.1}%)");
    assert!(
        shown * 10 <= all,
        "{provider} request {request}: {shown} B of {all} B"
    );
}

#[tokio::test]
async fn anthropic_native_search_finds_and_calls_one_of_300_tools() {
    let message = |content: Value, stop: &str| {
        let mut events = vec![(
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                   "model": "claude-test", "content": [], "usage": {"input_tokens": 900, "output_tokens": 1}}}),
        )];
        for (index, block) in content.as_array().unwrap().iter().enumerate() {
            // Input arrives in deltas, after a block that starts empty.
            let mut start = block.clone();
            let input = start.get_mut("input").map(Value::take);
            if input.is_some() {
                start["input"] = json!({});
            }
            let text = start.get_mut("text").map(Value::take);
            if text.is_some() {
                start["text"] = json!("");
            }
            events.push((
                Some("content_block_start"),
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            let delta = match (input, text) {
                (Some(input), _) => {
                    Some(json!({"type": "input_json_delta", "partial_json": input.to_string()}))
                }
                (_, Some(text)) => Some(json!({"type": "text_delta", "text": text})),
                _ => None,
            };
            if let Some(delta) = delta {
                events.push((
                    Some("content_block_delta"),
                    json!({"type": "content_block_delta", "index": index, "delta": delta}),
                ));
            }
            events.push((
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        events.push((
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 40}}),
        ));
        events.push((Some("message_stop"), json!({"type": "message_stop"})));
        stream(
            events
                .into_iter()
                .map(|(name, data)| (name, data.to_string())),
        )
    };
    let search_result = json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01", "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": WANTED}]
    }});
    let server = MockServer::start([
        message(
            json!([
                {"type": "server_tool_use", "id": "srvtoolu_01", "name": AnthropicClient::TOOL_SEARCH_NAME,
                 "input": {"query": "umbrellas in stock at warehouse 297"}},
                search_result,
                {"type": "tool_use", "id": "toolu_01", "name": WANTED, "input": {"item": "umbrella"}}
            ]),
            "tool_use",
        ),
        message(json!([{"type": "text", "text": ANSWER}]), "end_turn"),
    ])
    .await;
    let stdout = run_quickstart(&[("ANTHROPIC_BASE_URL", server.url.clone())]).await;
    assert!(stdout.contains("── turn 1 (300 tools)"), "{stdout}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.body["stream"], true);
        assert_eq!(
            request.header("anthropic-beta"),
            Some(AnthropicClient::ADVANCED_TOOL_USE_BETA)
        );
    }
    // The tool ran, and its output went back to the model.
    let result = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_01");
    let output = result["content"][0]["text"].as_str().unwrap();
    assert!(output.starts_with("warehouse 297: "), "{output}");
    assert!(output.ends_with(" umbrella"), "{output}");

    // Deferred tools travel with their schemas (Anthropic searches them) but the model is
    // shown none of one until a search finds it: what it is shown is the tools not
    // marked `defer_loading`, and the found ones.
    let sent = tools(&requests[0].body);
    let catalog: Vec<Value> = sent
        .iter()
        .filter(|t| t["name"] != AnthropicClient::TOOL_SEARCH_NAME)
        .map(|t| {
            let mut full = t.clone();
            full.as_object_mut().unwrap().remove("defer_loading");
            full
        })
        .collect();
    assert_eq!(catalog.len(), 3 + CATALOG);
    let deferred = sent.iter().filter(|t| t["defer_loading"] == true).count();
    assert_eq!(deferred, CATALOG);
    let all = bytes(&catalog);
    for (at, body) in requests.iter().map(|r| &r.body).enumerate() {
        let found: Vec<&Value> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|b| b["type"] == "tool_search_tool_result")
            .flat_map(|b| b["content"]["tool_references"].as_array().unwrap())
            .map(|r| &r["tool_name"])
            .collect();
        assert_eq!(found.len(), at, "one search, in the first answer");
        let shown: Vec<Value> = tools(body)
            .iter()
            .filter(|t| t["defer_loading"] != true || found.contains(&&t["name"]))
            .cloned()
            .collect();
        assert_a_tenth("anthropic", at + 1, bytes(&shown), all);
    }
}

#[tokio::test]
async fn openai_chat_searches_with_the_built_in_tool_among_300() {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1741570283, "model": "gpt-test",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let call = |id: &str, name: &str, arguments: Value| {
        let arguments = arguments.to_string();
        // The arguments arrive in two pieces, as OpenAI streams them.
        let (head, tail) = arguments.split_at(arguments.len() / 2);
        stream([
            (
                None,
                chunk(
                    json!({"role": "assistant", "content": null, "tool_calls": [
                {"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": head}}]}),
                    Value::Null,
                ),
            ),
            (
                None,
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": tail}}]}),
                    Value::Null,
                ),
            ),
            (None, chunk(json!({}), json!("tool_calls"))),
            (None, "[DONE]".to_owned()),
        ])
    };
    let server = MockServer::start([
        call(
            "call_1",
            SEARCH_TOOL,
            json!({"query": "umbrellas in stock at warehouse 297"}),
        ),
        call("call_2", WANTED, json!({"item": "umbrella"})),
        stream([
            (
                None,
                chunk(json!({"role": "assistant", "content": ANSWER}), Value::Null),
            ),
            (None, chunk(json!({}), json!("stop"))),
            (None, "[DONE]".to_owned()),
        ]),
    ])
    .await;
    run_quickstart(&[
        ("OPENAI_BASE_URL", format!("{}/v1", server.url)),
        ("OPENAI_API_KEY", "k".to_owned()),
    ])
    .await;

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let names = |body: &Value| -> Vec<String> {
        tools(body)
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&requests[0].body),
        ["get_weather", "index_docs", "send_email", SEARCH_TOOL]
    );
    // The search, run by the quickstart, found the tool: offered in full from then on.
    let second = names(&requests[1].body);
    assert!(second.contains(&WANTED.to_owned()), "{second:?}");
    // The tool ran, and its output went back to the model.
    let messages = requests[2].body["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .find(|m| m["tool_call_id"] == "call_2")
        .expect("the call's result");
    let output = result["content"].as_str().unwrap();
    assert!(output.starts_with("warehouse 297: "), "{output}");
    assert!(output.ends_with(" umbrella"), "{output}");

    // All 300 in full: the quickstart's three as sent, and the 297 warehouse tools, which
    // differ from the one sent only in the number in their name and description.
    let wanted = tools(&requests[1].body)
        .iter()
        .find(|t| t["function"]["name"] == WANTED)
        .unwrap()
        .to_string();
    assert_eq!(wanted.matches("297").count(), 2, "{wanted}");
    let mut catalog: Vec<Value> = tools(&requests[0].body)
        .iter()
        .filter(|t| t["function"]["name"] != SEARCH_TOOL)
        .cloned()
        .collect();
    for n in 1..=CATALOG {
        catalog.push(serde_json::from_str(&wanted.replace("297", &n.to_string())).unwrap());
    }
    assert_eq!(catalog.len(), 300);
    let all = bytes(&catalog);
    for (at, body) in requests.iter().map(|r| &r.body).enumerate() {
        assert_eq!(body["stream"], true);
        assert_a_tenth("openai", at + 1, bytes(tools(body)), all);
    }
}

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
use toolwright_core::{Agent, RunOutcome, ToolSearch};
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

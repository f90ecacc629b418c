//! What tool search saves per turn with 500 tools, in the Anthropic and OpenAI Responses
//! wire formats: the bytes of tool definitions in the request body (printed as JSON
//! before the timings; BENCHMARKS.md records them), and the time to build the body with
//! every tool in full against with five.
//!
//! `cargo bench -p toolwright-llm --bench tool_search`

#[path = "catalog.rs"]
mod catalog;

use catalog::{CATALOG_SIZE, ToolBytes, catalog, measure};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use toolwright_core::{Message, llm::LlmRequest};
use toolwright_llm::{AnthropicClient, OpenAiResponsesClient};

fn figures(format: &str, bytes: ToolBytes) -> Value {
    let share = |part: usize| (1000.0 * part as f64 / bytes.all as f64).round() / 10.0;
    json!({
        "format": format,
        "tools": CATALOG_SIZE,
        "all": {"bytes": bytes.all, "tokens_estimate": ToolBytes::tokens(bytes.all)},
        "native_search_shown": {"bytes": bytes.native_shown, "tokens_estimate": ToolBytes::tokens(bytes.native_shown), "percent": share(bytes.native_shown)},
        "native_search_on_the_wire": {"bytes": bytes.native_wire, "percent": share(bytes.native_wire)},
        "built_in_search_first_turn": {"bytes": bytes.search_first_turn, "tokens_estimate": ToolBytes::tokens(bytes.search_first_turn), "percent": share(bytes.search_first_turn)},
        "built_in_search_after_a_search": {"bytes": bytes.search_after_search, "tokens_estimate": ToolBytes::tokens(bytes.search_after_search), "percent": share(bytes.search_after_search)},
    })
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let anthropic = AnthropicClient::builder("claude-bench")
        .api_key("k")
        .build()
        .unwrap();
    let responses = OpenAiResponsesClient::builder("gpt-bench")
        .api_key("k")
        .build()
        .unwrap();
    let anthropic_bytes = runtime.block_on(measure(
        CATALOG_SIZE,
        |r| anthropic.request_body(r).unwrap(),
        false,
    ));
    let responses_bytes = runtime.block_on(measure(
        CATALOG_SIZE,
        |r| responses.request_body(r).unwrap(),
        true,
    ));
    let report = json!([
        figures("anthropic", anthropic_bytes),
        figures("openai-responses", responses_bytes)
    ]);
    println!("{}", serde_json::to_string_pretty(&report).unwrap());

    let messages = [Message::user(
        "What will the weather be in Paris in two days?",
    )];
    let definitions = catalog(CATALOG_SIZE);
    let few = &definitions[..5];
    let mut group = c.benchmark_group("tool_search_body");
    group.bench_function("anthropic/all_500", |b| {
        b.iter(|| anthropic.request_body(black_box(&LlmRequest::new(&messages, &definitions))))
    });
    group.bench_function("anthropic/five_tools", |b| {
        b.iter(|| anthropic.request_body(black_box(&LlmRequest::new(&messages, few))))
    });
    group.bench_function("openai_responses/all_500", |b| {
        b.iter(|| responses.request_body(black_box(&LlmRequest::new(&messages, &definitions))))
    });
    group.bench_function("openai_responses/five_tools", |b| {
        b.iter(|| responses.request_body(black_box(&LlmRequest::new(&messages, few))))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);

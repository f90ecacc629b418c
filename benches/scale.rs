//! Lookup and call at 10 and at 10,000 registered tools, and the definitions list of
//! 1,000 tools served from the cache against rebuilding it per request.

use agent_benches::{noop_name, noop_set};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use toolwright_core::{ToolContext, tool::ActivationContext, toolset::ToolDefinition};

fn lookup_and_call(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let ctx = ToolContext::default();
    let args = json!({});
    let mut group = c.benchmark_group("scale");
    for size in [10, 10_000] {
        let set = noop_set(size);
        // The last-registered name: no advantage from insertion order.
        let name = noop_name(size - 1);
        group.bench_with_input(BenchmarkId::new("lookup", size), &size, |b, _| {
            b.iter(|| black_box(set.get(black_box(name.as_str()))).is_some())
        });
        group.bench_with_input(BenchmarkId::new("call", size), &size, |b, _| {
            b.to_async(&runtime)
                .iter(|| async { set.call(black_box(name.as_str()), &args, &ctx).await })
        });
    }
    group.finish();
}

fn definitions(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let set = noop_set(1_000);
    let activation = ActivationContext::default();
    let mut group = c.benchmark_group("definitions_1000");
    group.bench_function("cached", |b| {
        b.to_async(&runtime)
            .iter(|| async { set.active_definitions(&activation).await.len() })
    });
    group.bench_function("rebuilt_per_request", |b| {
        b.iter(|| {
            set.iter()
                .map(|tool| ToolDefinition::of(tool.as_ref()).expect("valid"))
                .collect::<Vec<_>>()
        })
    });
    group.finish();
}

criterion_group!(benches, lookup_and_call, definitions);
criterion_main!(benches);

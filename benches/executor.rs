//! The executor's own cost and its concurrency:
//! - 1,000 calls of a no-op tool through the executor (concurrency 8) against 1,000
//!   direct `ToolSet::call`s, on the same runtime;
//! - 100 calls with 100 KB arguments, given to the executor by reference and by value;
//! - 256 calls of a tool that sleeps 20 ms with a limit of 32 (the ideal is 8 × 20 ms).

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use toolwright_core::{
    ToolContext,
    exec::{Executor, TurnContext},
    llm::ToolCall,
    tool, tools,
    toolset::ToolConfig,
};

/// Does nothing.
#[tool(read_only)]
async fn noop() -> &'static str {
    "ok"
}

/// Takes a text and does nothing with it.
#[tool(read_only)]
async fn noop_with_text(
    /// Any text.
    text: String,
) -> &'static str {
    drop(text);
    "ok"
}

/// Sleeps 20 ms.
#[tool(read_only)]
async fn sleep_20ms() -> &'static str {
    tokio::time::sleep(Duration::from_millis(20)).await;
    "slept"
}

fn calls(name: &str, n: usize) -> Vec<ToolCall> {
    (0..n)
        .map(|i| ToolCall::new(format!("call_{i}"), name, json!({})))
        .collect()
}

/// The runtime every group runs on: two worker threads, as the machine has cores.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn overhead(c: &mut Criterion) {
    let runtime = runtime();
    let set = Arc::new(tools![noop]);
    let executor = Executor::new(set.clone(), ToolConfig::default().with_max_concurrency(8));
    let batch = calls("noop", 1_000);
    let ctx = ToolContext::default();
    let args = json!({});
    let mut group = c.benchmark_group("executor_1000_noop");
    group.bench_function("direct_toolset_calls", |b| {
        b.to_async(&runtime).iter(|| async {
            for _ in 0..1_000 {
                set.call("noop", &args, &ctx).await.expect("noop succeeds");
            }
        })
    });
    // The same loop keeping each answer, as a loop that answers the model must: the
    // answers then outlive the loop, which the allocator's per-thread cache cannot
    // serve as it serves an answer freed at once.
    group.bench_function("direct_toolset_calls_keeping_answers", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut answers = Vec::with_capacity(batch.len());
            for call in &batch {
                answers.push(set.call(&call.name, &call.arguments, &ctx).await);
            }
            assert!(answers.iter().all(Result::is_ok));
        })
    });
    group.bench_function("executor_concurrency_8", |b| {
        b.to_async(&runtime).iter(|| async {
            let results = executor.execute(&batch, &TurnContext::new()).await;
            assert_eq!(results.len(), 1_000);
        })
    });
    // The calls given by value, as the agent loop gives the model's calls: each is moved
    // into its result rather than copied. Making the calls is not timed; dropping the
    // results is, as in every row.
    group.bench_function("executor_concurrency_8_calls_by_value", |b| {
        b.to_async(&runtime).iter_batched(
            || batch.clone(),
            |calls| async {
                let results = executor.execute(calls, &TurnContext::new()).await;
                assert_eq!(results.len(), 1_000);
            },
            BatchSize::PerIteration,
        )
    });
    // What the executor did before it polled calls inline: each call in a task of its
    // own, 8 at a time, and nothing else.
    group.bench_function("spawned_toolset_calls_8_at_a_time", |b| {
        b.to_async(&runtime).iter(|| async {
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..1_000 {
                if tasks.len() == 8 {
                    tasks.join_next().await.expect("a task").expect("joined");
                }
                let set = set.clone();
                tasks.spawn(async move {
                    let (args, ctx) = (json!({}), ToolContext::default());
                    set.call("noop", &args, &ctx).await.expect("noop succeeds");
                });
            }
            while let Some(joined) = tasks.join_next().await {
                joined.expect("joined");
            }
        })
    });
    // The least any executor returning our results must do: the direct calls, run in
    // a task off the caller's thread (so that the caller can answer on time whatever a
    // tool does), each answer carrying its own copy of the call.
    let owned_batch = Arc::new(batch.clone());
    group.bench_function("floor_direct_calls_in_a_task_with_owned_results", |b| {
        b.to_async(&runtime).iter(|| {
            let (set, batch) = (set.clone(), owned_batch.clone());
            async move {
                let results = tokio::spawn(async move {
                    let ctx = ToolContext::default();
                    let mut results = Vec::with_capacity(batch.len());
                    for call in batch.iter() {
                        let output = set.call(&call.name, &call.arguments, &ctx).await;
                        results.push((call.clone(), output.expect("noop succeeds")));
                    }
                    results
                })
                .await
                .expect("the task");
                assert_eq!(results.len(), 1_000);
            }
        })
    });
    // The same floor for calls given by value: each answer takes its call over rather
    // than copying it. What is left is the thread hop and the answers kept alive.
    group.bench_function("floor_direct_calls_in_a_task_calls_by_value", |b| {
        b.to_async(&runtime).iter_batched(
            || batch.clone(),
            |calls| {
                let set = set.clone();
                async move {
                    let results = tokio::spawn(async move {
                        let ctx = ToolContext::default();
                        let mut results = Vec::with_capacity(calls.len());
                        for call in calls {
                            let output = set.call(&call.name, &call.arguments, &ctx).await;
                            results.push((call, output.expect("noop succeeds")));
                        }
                        results
                    })
                    .await
                    .expect("the task");
                    assert_eq!(results.len(), 1_000);
                }
            },
            BatchSize::PerIteration,
        )
    });
    // The same turn run from inside a task (as a server handling a request runs it),
    // rather than from `block_on` on a thread outside the runtime.
    let shared = Arc::new((executor.clone(), batch.clone()));
    group.bench_function("executor_concurrency_8_in_a_task", |b| {
        b.to_async(&runtime).iter(|| {
            let shared = shared.clone();
            async move {
                let results = tokio::spawn(async move {
                    let (executor, batch) = &*shared;
                    executor.execute(batch, &TurnContext::new()).await.len()
                })
                .await
                .expect("the turn's task");
                assert_eq!(results, 1_000);
            }
        })
    });
    group.finish();
}

/// Calls carrying large arguments (a file's contents, say): given by reference, each is
/// copied into its result; given by value, moved.
fn large_arguments(c: &mut Criterion) {
    let runtime = runtime();
    let executor = Executor::new(
        Arc::new(tools![noop_with_text]),
        ToolConfig::default().with_max_concurrency(8),
    );
    let text = "x".repeat(100_000);
    let batch: Vec<ToolCall> = (0..100)
        .map(|i| {
            ToolCall::new(
                format!("call_{i}"),
                "noop_with_text",
                json!({ "text": text }),
            )
        })
        .collect();
    let mut group = c.benchmark_group("executor_100_calls_with_100kb_arguments");
    group.bench_function("calls_by_reference", |b| {
        b.to_async(&runtime).iter(|| async {
            let results = executor.execute(&batch, &TurnContext::new()).await;
            assert_eq!(results.len(), 100);
        })
    });
    group.bench_function("calls_by_value", |b| {
        b.to_async(&runtime).iter_batched(
            || batch.clone(),
            |calls| async {
                let results = executor.execute(calls, &TurnContext::new()).await;
                assert_eq!(results.len(), 100);
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

/// A turn of one call, the common case: what the executor adds to a single call.
fn single(c: &mut Criterion) {
    let runtime = runtime();
    let set = Arc::new(tools![noop]);
    let executor = Executor::new(set.clone(), ToolConfig::default().with_max_concurrency(8));
    let batch = calls("noop", 1);
    let ctx = ToolContext::default();
    let args = json!({});
    let mut group = c.benchmark_group("executor_1_noop");
    group.bench_function("direct_toolset_call", |b| {
        b.to_async(&runtime)
            .iter(|| async { set.call("noop", &args, &ctx).await.expect("noop succeeds") })
    });
    group.bench_function("executor_turn_of_one_call", |b| {
        b.to_async(&runtime).iter(|| async {
            let results = executor.execute(&batch, &TurnContext::new()).await;
            assert_eq!(results.len(), 1);
        })
    });
    group.finish();
}

fn sleeping(c: &mut Criterion) {
    let runtime = runtime();
    let executor = Executor::new(
        Arc::new(tools![sleep_20ms]),
        ToolConfig::default().with_max_concurrency(32),
    );
    let batch = calls("sleep_20ms", 256);
    let mut group = c.benchmark_group("executor_256_sleeps_of_20ms");
    group.sample_size(10);
    group.bench_function("limit_32_ideal_160ms", |b| {
        b.to_async(&runtime).iter(|| async {
            let results = executor.execute(&batch, &TurnContext::new()).await;
            assert!(results.iter().all(|r| r.outcome.content().is_some()));
        })
    });
    group.finish();
}

criterion_group!(benches, overhead, large_arguments, single, sleeping);
criterion_main!(benches);

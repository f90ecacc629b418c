//! `ToolSet::call` on a tool with three parameters (a string, an integer, an optional
//! enum) returning text, against the same work written by hand (decode into an
//! equivalent struct, call directly, wrap in `Content::text`), in two forms: the common
//! `serde_json::from_value` of the `&Value` a tool receives, and the physical limit,
//! `Deserialize` from the borrowed value.

use agent_benches::dispatch::{Fixture, by_hand, by_hand_from_value};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let f = Fixture::default();
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("hand_written", |b| {
        b.to_async(&runtime).iter(|| by_hand(black_box(&f.args)))
    });
    group.bench_function("hand_written_from_value", |b| {
        b.to_async(&runtime)
            .iter(|| by_hand_from_value(black_box(&f.args)))
    });
    group.bench_function("tool_macro", |b| {
        b.to_async(&runtime).iter(|| {
            f.tool_macro
                .call(black_box("forecast"), black_box(&f.args), &f.ctx)
        })
    });
    group.bench_function("typed_tool", |b| {
        b.to_async(&runtime).iter(|| {
            f.typed
                .call(black_box("forecast"), black_box(&f.args), &f.ctx)
        })
    });
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);

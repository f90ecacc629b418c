//! `tools/call` round trips over an in-memory transport with the same rmcp client:
//! our server (`agent_mcp::McpServer` over a `#[tool]`), served by `agent_mcp::serve_io`
//! (the stdio path) and by rmcp's own `serve`, against a server written with rmcp's own
//! `#[tool_router]`/`#[tool]` macros exposing the same tool; and `tools/list` of 1,000
//! tools from our server.
//!
//! `cargo bench --manifest-path bench-mcp/Cargo.toml`

mod forecast;
mod in_memory;

use agent_core::{AgentResult, ToolContext, ToolSet, TypedTool, tools};
use agent_mcp::McpServer;
use criterion::{Criterion, criterion_group, criterion_main};
use forecast::{BEIJING_3_DAYS, RmcpServer, forecast_tool};
use in_memory::{call_params, client_of, client_of_stream};

/// One of many tools for the listing benchmark.
struct Noop(String);

#[agent_core::async_trait]
impl TypedTool for Noop {
    type Args = ();
    type Output = &'static str;
    fn name(&self) -> &str {
        &self.0
    }
    fn description(&self) -> &'static str {
        "Does nothing."
    }
    async fn call_typed(&self, _: (), _: &ToolContext) -> AgentResult<&'static str> {
        Ok("ok")
    }
}

fn round_trips(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let ours = runtime.block_on(client_of_stream(McpServer::new(tools![forecast_tool])));
    let ours_via_rmcp = runtime.block_on(client_of(McpServer::new(tools![forecast_tool])));
    let theirs = runtime.block_on(client_of(RmcpServer));
    let params = call_params();
    // All answer the same text.
    for client in [&ours, &ours_via_rmcp, &theirs] {
        let result = runtime
            .block_on(client.call_tool(params.clone()))
            .expect("call succeeds");
        let text = serde_json::to_value(&result.content).expect("serializable");
        assert_eq!(text[0]["text"], BEIJING_3_DAYS);
    }
    let mut group = c.benchmark_group("mcp_tools_call");
    group.bench_function("ours", |b| {
        b.to_async(&runtime)
            .iter(|| async { ours.call_tool(params.clone()).await.expect("call succeeds") })
    });
    group.bench_function("ours_via_rmcp", |b| {
        b.to_async(&runtime).iter(|| async {
            ours_via_rmcp
                .call_tool(params.clone())
                .await
                .expect("call succeeds")
        })
    });
    group.bench_function("rmcp_macros", |b| {
        b.to_async(&runtime).iter(|| async {
            theirs
                .call_tool(params.clone())
                .await
                .expect("call succeeds")
        })
    });
    group.finish();
}

fn listing(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut set = ToolSet::new();
    for i in 0..1_000 {
        set.register_tool(Noop(format!("noop_{i}"))).expect("valid");
    }
    let client = runtime.block_on(client_of(McpServer::new(set)));
    let listed = runtime.block_on(client.list_all_tools()).expect("listing");
    assert_eq!(listed.len(), 1_000);
    let mut group = c.benchmark_group("mcp_tools_list");
    group.bench_function("ours_1000_tools_all_pages", |b| {
        b.to_async(&runtime)
            .iter(|| async { client.list_all_tools().await.expect("listing").len() })
    });
    group.finish();
}

criterion_group!(benches, round_trips, listing);
criterion_main!(benches);

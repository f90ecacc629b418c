//! `tools/call` round trips over an in-memory transport with the same rmcp client:
//! our server (`toolwright_mcp::McpServer` over a `#[tool]`), served by `toolwright_mcp::serve_io`
//! (the stdio path) and by rmcp's own `serve`, against a server written with rmcp's own
//! `#[tool_router]`/`#[tool]` macros exposing the same tool; and `tools/list` of 1,000
//! tools from our server.
//!
//! `cargo bench --manifest-path bench-mcp/Cargo.toml --bench mcp` (CI adds `-- --quick`)
//!
//! The servers are timed side by side (see `paired.rs`): each criterion sample is a
//! paired round on fresh instances of all three, and one line gives the median ratio of
//! each of ours to rmcp's over the rounds, the figure the comparison is about.

mod forecast;
mod in_memory;
mod paired;

use criterion::{Criterion, criterion_group, criterion_main};
use forecast::{BEIJING_3_DAYS, RmcpServer, call_params, forecast_tool};
use in_memory::{Client, client_of, client_of_stream};
use paired::bench_side_by_side;
use rmcp::model::CallToolRequestParams;
use toolwright_core::{AgentResult, ToolContext, ToolSet, tool::TypedTool, tools};
use toolwright_mcp::McpServer;

/// The servers compared, by their criterion names; the last is the reference.
const SERVERS: [&str; 3] = ["ours", "ours_via_rmcp", "rmcp_macros"];

/// One of many tools for the listing benchmark.
struct Noop(String);

#[toolwright_core::async_trait]
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

/// A client of each server in `SERVERS`' order, each on a fresh instance whose answer
/// has been checked (that first call also warms it).
async fn fresh_clients(params: &CallToolRequestParams) -> [Client; 3] {
    let clients = [
        client_of_stream(McpServer::new(tools![forecast_tool])).await,
        client_of(McpServer::new(tools![forecast_tool])).await,
        client_of(RmcpServer).await,
    ];
    for client in &clients {
        let result = client
            .call_tool(params.clone())
            .await
            .expect("call succeeds");
        let text = serde_json::to_value(&result.content).expect("serializable");
        assert_eq!(
            text[0]["text"], BEIJING_3_DAYS,
            "all servers answer the same text"
        );
    }
    clients
}

fn round_trips(c: &mut Criterion) {
    let params = call_params();
    bench_side_by_side(
        c,
        "mcp_tools_call",
        SERVERS,
        async || fresh_clients(&params).await,
        async |client| {
            client
                .call_tool(params.clone())
                .await
                .expect("call succeeds");
        },
    );
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

criterion_group! {
    name = calls;
    config = paired::config();
    targets = round_trips
}
criterion_group!(list, listing);
criterion_main!(calls, list);

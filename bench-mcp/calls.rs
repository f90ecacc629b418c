//! A fixed number of `tools/call` round trips over the in-memory transport, for counting
//! instructions rather than timing: `mcp.rs`'s setup (the same rmcp client against our
//! server or one written with rmcp's macros), without criterion's sampling.
//!
//! ```text
//! cargo bench --manifest-path bench-mcp/Cargo.toml --bench mcp_calls --no-run
//! valgrind --tool=callgrind <the mcp_calls binary> ours 1000
//! ```
//!
//! Arguments: which server and how many calls (100 by default). The servers: `ours`
//! (`toolwright_mcp::serve_io`, the stdio path), `ours_via_rmcp` (the same server under
//! rmcp's `serve`, without our stream transport) and `rmcp` (rmcp's macros). The
//! instructions of one call are the difference between two runs of different counts,
//! divided by the difference of the counts: setup and teardown cancel out.

mod forecast;
mod in_memory;

use forecast::{BEIJING_3_DAYS, RmcpServer, forecast_tool};
use in_memory::{call_params, client_of, client_of_stream};
use toolwright_core::tools;
use toolwright_mcp::McpServer;

fn main() {
    // `cargo bench` passes `--bench`: ignored, as is anything else that is not ours.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let server = args.first().map_or("ours", String::as_str);
    let calls: usize = args
        .get(1)
        .map_or(100, |n| n.parse().expect("a number of calls"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = runtime.block_on(async {
        match server {
            "ours" => client_of_stream(McpServer::new(tools![forecast_tool])).await,
            "ours_via_rmcp" => client_of(McpServer::new(tools![forecast_tool])).await,
            "rmcp" => client_of(RmcpServer).await,
            other => panic!("unknown server `{other}`: expected `ours`, `ours_via_rmcp` or `rmcp`"),
        }
    });
    let params = call_params();
    runtime.block_on(async {
        for _ in 0..calls {
            let result = client
                .call_tool(params.clone())
                .await
                .expect("call succeeds");
            let text = serde_json::to_value(&result.content).expect("serializable");
            assert_eq!(text[0]["text"], BEIJING_3_DAYS);
        }
    });
    println!("{server}: {calls} calls");
}

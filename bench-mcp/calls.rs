//! A fixed number of round trips over the in-memory transport, for counting instructions
//! rather than timing: `mcp.rs`'s and `features.rs`' setup (the same rmcp client against
//! our server or one written with rmcp's own means), without criterion's sampling.
//!
//! ```text
//! cargo bench --manifest-path bench-mcp/Cargo.toml --bench mcp_calls --no-run
//! valgrind --tool=callgrind <the mcp_calls binary> ours 1000
//! valgrind --tool=callgrind <the mcp_calls binary> ours 1000 prompts_get
//! ```
//!
//! Arguments: which server, how many calls (100 by default) and which request
//! (`tools_call` by default; `resources_read_fixed`, `resources_read_template` and
//! `prompts_get` are `features.rs`' requests). The servers: `ours`
//! (`toolwright_mcp::serve_io`, the stdio path), `ours_via_rmcp` (the same server under
//! rmcp's `serve`, without our stream transport) and `rmcp` (rmcp's macros, and its
//! `read_resource` by hand). The instructions of one call are the difference between two
//! runs of different counts, divided by the difference of the counts: setup and teardown
//! cancel out.

mod forecast;
mod in_memory;
mod items;

use forecast::{BEIJING_3_DAYS, RmcpServer, call_params, forecast_tool};
use in_memory::{Client, client_of, client_of_stream};
use items::{Request, RmcpFeatures};
use toolwright_core::tools;
use toolwright_mcp::McpServer;

/// A client of `server` serving what `request` asks for (the forecast tool without one).
async fn connect(server: &str, request: Option<Request>) -> Client {
    let ours = || request.map_or_else(|| McpServer::new(tools![forecast_tool]), |_| items::ours());
    match (server, request) {
        ("ours", _) => client_of_stream(ours()).await,
        ("ours_via_rmcp", _) => client_of(ours()).await,
        ("rmcp", None) => client_of(RmcpServer).await,
        ("rmcp", Some(_)) => client_of(RmcpFeatures::new()).await,
        (other, _) => {
            panic!("unknown server `{other}`: expected `ours`, `ours_via_rmcp` or `rmcp`")
        }
    }
}

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
    let request = match args.get(2).map_or("tools_call", String::as_str) {
        "tools_call" => None,
        name => Some(
            Request::ALL
                .into_iter()
                .find(|r| r.name() == name)
                .unwrap_or_else(|| panic!("unknown request `{name}`")),
        ),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = runtime.block_on(connect(server, request));
    let params = call_params();
    runtime.block_on(async {
        for _ in 0..calls {
            match request {
                None => {
                    let result = client
                        .call_tool(params.clone())
                        .await
                        .expect("call succeeds");
                    let text = serde_json::to_value(&result.content).expect("serializable");
                    assert_eq!(text[0]["text"], BEIJING_3_DAYS);
                }
                Some(request) => {
                    assert_eq!(
                        request.send(&client).await.as_deref(),
                        Some(request.answer())
                    );
                }
            }
        }
    });
    println!(
        "{server}: {calls} calls of {}",
        request.map_or("tools_call", Request::name)
    );
}

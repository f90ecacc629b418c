//! What the in-process benchmarks share: a client connected to a server over an
//! in-memory duplex, and the `tools/call` parameters both servers answer alike.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

/// A client of `server` served by rmcp's own `serve`, which runs in a task of its own on the current runtime.
pub async fn client_of<S>(server: S) -> RunningService<RoleClient, ()>
where
    S: ServiceExt<rmcp::RoleServer> + Send + 'static,
{
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.expect("server starts");
        let _ = running.waiting().await;
    });
    ().serve(client_end).await.expect("client connects")
}

/// A client of `server` served by `toolwright_mcp::serve_io`, the stream transport stdio
/// users get, over an in-memory duplex.
pub async fn client_of_stream(server: toolwright_mcp::McpServer) -> RunningService<RoleClient, ()> {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (input, output) = tokio::io::split(server_end);
    tokio::spawn(toolwright_mcp::serve_io(server, input, output));
    ().serve(client_end).await.expect("client connects")
}

/// The forecast for Beijing, 3 days, in Celsius.
pub fn call_params() -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"city": "Beijing", "days": 3, "unit": "celsius"}) else {
        unreachable!("a literal object")
    };
    CallToolRequestParams::new("forecast").with_arguments(arguments)
}

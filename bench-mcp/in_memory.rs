//! What the in-process benchmarks share: a client connected to a server over an
//! in-memory duplex.

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};

/// A client of one of the servers compared.
pub type Client = RunningService<RoleClient, ()>;

/// A client of `server` served by rmcp's own `serve`, which runs in a task of its own on the current runtime.
pub async fn client_of<S>(server: S) -> Client
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
pub async fn client_of_stream(server: toolwright_mcp::McpServer) -> Client {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (input, output) = tokio::io::split(server_end);
    tokio::spawn(toolwright_mcp::serve_io(server, input, output));
    ().serve(client_end).await.expect("client connects")
}

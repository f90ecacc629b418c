//! One MCP session over an in-memory duplex: our server on one end, rmcp's client on the
//! other, on a runtime of its own, so that synchronous test bodies (proptest's) can make
//! many calls on it.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use toolwright_core::ToolSet;
use toolwright_mcp::McpServer;

pub struct Session {
    runtime: tokio::runtime::Runtime,
    client: RunningService<RoleClient, ()>,
}

impl Session {
    /// A session with a server of `tools`.
    pub fn serve(tools: ToolSet) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let client = runtime.block_on(async {
            let (client_end, server_end) = tokio::io::duplex(1 << 20);
            tokio::spawn(async move {
                let running = McpServer::new(tools)
                    .serve(server_end)
                    .await
                    .expect("server starts");
                let _ = running.waiting().await;
            });
            ().serve(client_end).await.expect("client connects")
        });
        Self { runtime, client }
    }

    /// A `tools/call`, waited for.
    pub fn call(&self, params: CallToolRequestParams) -> Result<CallToolResult, ServiceError> {
        self.runtime.block_on(self.client.call_tool(params))
    }
}

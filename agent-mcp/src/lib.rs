//! Serve any [`ToolSet`](agent_core::ToolSet) to MCP clients, and use an MCP server's
//! tools as a `ToolSet`. The protocol and transports are the official Rust SDK's (rmcp).
//!
//! Serving:
//!
//! ```no_run
//! # async fn demo(tools: agent_core::ToolSet) -> std::io::Result<()> {
//! // stdio, for hosts that start the server as a child process:
//! agent_mcp::serve_stdio(tools).await?;
//! # Ok(()) }
//! # async fn demo_http(tools: agent_core::ToolSet) -> std::io::Result<()> {
//! // or Streamable HTTP at http://127.0.0.1:8000/mcp:
//! agent_mcp::serve_http(tools, "127.0.0.1:8000").await?;
//! # Ok(()) }
//! ```
//!
//! What clients see: `tools/list` offers Direct tools and active Deferred tools (never
//! Hidden ones) with their input schema (JSON Schema 2020-12), output schema and effect
//! hints; `tools/call` validates arguments as the tool does, runs it under its timeout,
//! turns its progress into `notifications/progress`, and stops it on
//! `notifications/cancelled`. A tool error, invalid arguments or a timeout is a result
//! with `isError: true`; an unknown tool is a JSON-RPC error.
//!
//! Using a server's tools:
//!
//! ```no_run
//! # async fn demo() -> agent_core::AgentResult<()> {
//! let client = agent_mcp::McpClient::connect_http("http://127.0.0.1:8000/mcp").await?;
//! let remote = client.toolset()?; // each tool a `dyn Tool` calling the server
//! # Ok(()) }
//! ```

mod client;
mod convert;
mod peer;
mod server;
mod transport;

pub use client::McpClient;
pub use peer::{LogLevel, McpPeer};
pub use server::{McpServer, ServerOptions};
pub use transport::{
    MAX_MESSAGE_BYTES, McpHttpServer, serve_http, serve_io, serve_stdio, serve_stdio_with,
};

/// The rmcp version this crate speaks through, for applications that use rmcp directly
/// alongside it (an [`McpServer`] is an rmcp `ServerHandler`).
pub use rmcp;

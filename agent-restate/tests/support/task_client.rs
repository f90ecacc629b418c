#![allow(dead_code)] // each test binary uses its own part of this helper.

//! A client of an MCP server's tasks, for the tests of tasks kept or run on Restate: raw
//! JSON-RPC over Streamable HTTP, as a stateless 2026-07-28 client that declares tasks
//! and elicitation.

use crate::raw_http::{self, Running};
use serde_json::{Value, json};
use std::time::Duration;

const VERSION: &str = "2026-07-28";

/// The JSON-RPC answer of `running` to `method`, sent as a stateless 2026-07-28 client
/// that declares tasks and elicitation.
pub async fn request(running: &Running, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let headers = [
        ("MCP-Protocol-Version", VERSION),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
    ];
    let body = raw_http::rpc(1, method, params);
    let reply = raw_http::post(running.addr, None, &headers, &body)
        .await
        .unwrap();
    reply
        .answer()
        .unwrap_or_else(|| panic!("no answer to {method}: {reply:?}"))
}

/// Task `id` as `tasks/get` shows it once its status is `status`: asked again after each
/// answer, within a bound on a hang.
pub async fn until(running: &Running, id: &str, status: &str) -> Value {
    let wait = async {
        loop {
            let task = request(running, "tasks/get", id, json!({"taskId": id})).await;
            if task["result"]["status"] == status {
                return task["result"].clone();
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .unwrap_or_else(|_| panic!("task {id} never became {status}"))
}

pub async fn start(running: &Running, tool: &str, arguments: Value) -> String {
    let params = json!({"name": tool, "arguments": arguments});
    let answer = request(running, "tools/call", tool, params).await;
    assert_eq!(answer["result"]["resultType"], "task", "{answer}");
    answer["result"]["taskId"].as_str().unwrap().to_owned()
}

//! Protocol 2026-07-28 over the stream transport (`serve_io`): a session opened without
//! `initialize`, each request carrying its version and client in `_meta`. After the
//! request that opens the session, `tools/call`, `resources/read` and `prompts/get` are
//! answered on the fast path, in the bytes rmcp's own `serve` writes: the checks of each
//! request's `_meta`, caching hints and the 2026 error codes included.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_stream.rs"]
mod raw_stream;

use raw_stream::{Raw, Via, replies_in};
use serde_json::{Value, json};
use toolwright_core::tools;
use toolwright_mcp::McpServer;
use toolwright_mcp::prompts::{FnPrompt, PromptArgument, PromptMessage, PromptSet};
use toolwright_mcp::resources::{FnResource, ResourceContent, ResourceInfo, ResourceSet};

/// Shouts its text.
#[toolwright_core::tool]
async fn shout(text: String) -> String {
    text.to_uppercase()
}

fn server() -> McpServer {
    let mut resources = ResourceSet::new();
    resources
        .add_resource(FnResource::new(
            "text://greeting",
            ResourceInfo::named("greeting"),
            |_ctx| async { Ok(vec![ResourceContent::text("hello")]) },
        ))
        .unwrap();
    let mut prompts = PromptSet::new();
    prompts
        .add(FnPrompt::new(
            "review",
            "Asks for a review of some code.",
            vec![PromptArgument::required("code", "The code")],
            |args, _ctx| async move {
                Ok(vec![PromptMessage::user(format!(
                    "Review {}",
                    args["code"]
                ))])
            },
        ))
        .unwrap();
    McpServer::new(tools![shout])
        .with_resources(resources)
        .with_prompts(prompts)
}

/// A request as a 2026-07-28 client sends it, with `version` in its `_meta`.
fn request(id: i64, method: &str, params: Value, version: &str) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap()
}

#[tokio::test]
async fn requests_after_the_first_are_answered_without_rmcp_in_the_bytes_rmcp_writes() {
    const V: &str = "2026-07-28";
    let call = |id, text: Value| {
        request(
            id,
            "tools/call",
            json!({"name": "shout", "arguments": {"text": text}}),
            V,
        )
    };
    let mut with_token = call(9, json!("token"));
    with_token["params"]["_meta"]["progressToken"] = json!("p");
    let lines = [
        // Opens the session: rmcp reads it, on both paths.
        call(1, json!("first")),
        call(2, json!("second ✓")),
        call(3, json!(3)),
        request(4, "tools/call", json!({"name": "nope", "arguments": {}}), V),
        request(5, "resources/read", json!({"uri": "text://greeting"}), V),
        // Not found: -32602 on this protocol, where a 2025 session hears -32002.
        request(6, "resources/read", json!({"uri": "nowhere://at-all"}), V),
        request(
            7,
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x"}}),
            V,
        ),
        request(8, "prompts/get", json!({"name": "nope"}), V),
        with_token,
        // No `_meta`, and a version the server does not speak: refused as rmcp refuses.
        json!({"jsonrpc": "2.0", "id": 10, "method": "resources/read",
            "params": {"uri": "text://greeting"}}),
        request(
            11,
            "resources/read",
            json!({"uri": "text://greeting"}),
            "2024-01-01",
        ),
    ];
    let mut replies = Vec::new();
    for via in [Via::Stream, Via::Rmcp] {
        replies.push(replies_in(Raw::open(server(), via), &lines).await);
    }
    let [(ours, handled_by_rmcp), (theirs, handled_by_rmcp_alone)] =
        <[_; 2]>::try_from(replies).unwrap_or_else(|_| unreachable!());
    assert_eq!(ours, theirs);
    assert_eq!(handled_by_rmcp, ["1"]);
    assert_eq!(handled_by_rmcp_alone.len(), lines.len());

    let ours: Vec<Value> = ours.iter().map(|line| parse(line)).collect();
    assert_eq!(ours[1]["result"]["content"][0]["text"], "SECOND ✓");
    assert_eq!(ours[1]["result"]["resultType"], "complete", "{}", ours[1]);
    assert_eq!(ours[2]["result"]["isError"], true, "{}", ours[2]);
    assert_eq!(ours[3]["error"]["code"], -32602, "{}", ours[3]);
    assert_eq!(ours[4]["result"]["contents"][0]["text"], "hello");
    assert_eq!(ours[4]["result"]["ttlMs"], 0, "{}", ours[4]);
    assert_eq!(ours[5]["error"]["code"], -32602, "{}", ours[5]);
    assert_eq!(
        ours[6]["result"]["messages"][0]["content"]["text"],
        "Review x"
    );
    assert_eq!(ours[7]["error"]["code"], -32602, "{}", ours[7]);
    assert_eq!(ours[8]["result"]["content"][0]["text"], "TOKEN");
    for refused in &ours[9..] {
        assert!(refused["error"]["code"].is_i64(), "{refused}");
    }
}

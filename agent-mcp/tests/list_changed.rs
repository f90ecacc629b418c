//! Tools added to and removed from a running server: every connected client is sent
//! `notifications/tools/list_changed` (over stdio and over Streamable HTTP, each
//! session), our client lists the tools again, a removed tool's calls fail clearly,
//! closed sessions are dropped, and tools that need scopes stay hidden.

use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::{NotificationContext, RoleClient, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;
use toolwright_core::{Principal, ToolContext, ToolErrorKind, tool, tools};
use toolwright_mcp::{
    HttpAuth, HttpClientOptions, HttpOptions, McpClient, McpHttpServer, McpServer, StaticTokens,
};

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Subtracts `b` from `a`.
#[tool]
async fn sub(a: i64, b: i64) -> i64 {
    a - b
}

/// Echoes its text.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Something only administrators may do.
#[tool]
async fn admin_reset() -> &'static str {
    "reset"
}

/// The longest a test waits for something that should happen at once.
const PATIENCE: Duration = Duration::from_secs(10);

/// rmcp's client, reporting each `notifications/tools/list_changed`.
#[derive(Clone)]
struct Notices(mpsc::UnboundedSender<()>);

impl ClientHandler for Notices {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

async fn next_notice(notices: &mut mpsc::UnboundedReceiver<()>) {
    tokio::time::timeout(PATIENCE, notices.recv())
        .await
        .expect("a tools/list_changed notice in time")
        .expect("the client is still running");
}

/// Waits for the client's next reading of the tool list.
async fn next_listing(changes: &mut watch::Receiver<u64>) {
    tokio::time::timeout(PATIENCE, changes.changed())
        .await
        .expect("the tools listed again in time")
        .expect("the client is still running");
}

/// Polls `condition` until it holds, at most `PATIENCE`.
async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

fn call(name: &str, arguments: serde_json::Value) -> CallToolRequestParams {
    let serde_json::Value::Object(arguments) = arguments else {
        panic!("arguments are an object");
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// A standalone HTTP server of `server`, stopped when dropped.
struct Http {
    url: String,
    stop: CancellationToken,
}

impl Drop for Http {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve_http(server: &McpServer, options: HttpOptions) -> Http {
    let http = McpHttpServer::bind(server.clone(), "127.0.0.1:0")
        .await
        .unwrap()
        .with_options(options)
        .with_shutdown_grace(Duration::from_millis(100));
    let running = Http {
        url: http.url(),
        stop: http.shutdown_token(),
    };
    tokio::spawn(http.run());
    running
}

#[tokio::test]
async fn a_stdio_client_is_told_of_added_and_removed_tools() {
    let server = McpServer::new(tools![add, echo]);
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (input, output) = tokio::io::split(server_end);
    tokio::spawn(toolwright_mcp::serve_io(server.clone(), input, output));
    let (tx, mut notices) = mpsc::unbounded_channel();
    let client = Notices(tx).serve(client_end).await.unwrap();

    let tools_capability = client
        .peer_info()
        .and_then(|info| info.capabilities.tools.clone())
        .expect("the tools capability");
    assert_eq!(tools_capability.list_changed, Some(true));
    eventually("the session counts as connected", || {
        server.connected_clients() == 1
    })
    .await;

    server.add_tool(sub {}).await.unwrap();
    next_notice(&mut notices).await;
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(names(&listed), ["add", "echo", "sub"]);
    let result = client
        .call_tool(call("sub", json!({"a": 5, "b": 3})))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "2");

    // The first tool goes; those after it keep answering.
    assert!(server.remove_tool("add").await.is_some());
    next_notice(&mut notices).await;
    let listed = client.list_all_tools().await.unwrap();
    assert_eq!(names(&listed), ["echo", "sub"]);
    let error = client
        .call_tool(call("add", json!({"a": 1, "b": 2})))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("a JSON-RPC error, not {error:?}");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(
        error.message,
        "Unknown tool: add. Available tools: echo, sub"
    );
    for (name, arguments, expected) in [
        ("echo", json!({"text": "hi"}), "hi"),
        ("sub", json!({"a": 1, "b": 4}), "-3"),
    ] {
        let result = client.call_tool(call(name, arguments)).await.unwrap();
        assert_eq!(result.content[0].as_text().unwrap().text, expected);
    }

    // A change that fails changes nothing.
    let error = server.add_tool(echo {}).await.unwrap_err();
    assert!(error.to_string().contains("echo"), "{error}");
    assert!(server.remove_tool("add").await.is_none());
    assert_eq!(
        server.tools().iter().map(|t| t.name()).collect::<Vec<_>>(),
        ["echo", "sub"]
    );

    // Replacing the whole set is one notice.
    server.replace_tools(tools![add]).await;
    next_notice(&mut notices).await;
    assert_eq!(names(&client.list_all_tools().await.unwrap()), ["add"]);
}

/// When `slow` has started, and when it may answer.
#[derive(Default)]
struct Gate {
    started: Notify,
    release: Notify,
}

/// Says it started, waits until released, then answers.
#[tool]
async fn slow(ctx: &ToolContext) -> &'static str {
    let gate = ctx.state::<Arc<Gate>>().expect("the gate").clone();
    gate.started.notify_one();
    gate.release.notified().await;
    "done"
}

#[tokio::test]
async fn a_call_running_when_its_tool_is_removed_finishes() {
    let gate = Arc::new(Gate::default());
    let server = McpServer::new(tools![slow].with_state(gate.clone()));
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (input, output) = tokio::io::split(server_end);
    tokio::spawn(toolwright_mcp::serve_io(server.clone(), input, output));
    let client = ().serve(client_end).await.unwrap();

    // The set's state comes along when the set is copied for a change.
    server.add_tool(add {}).await.unwrap();
    let running = tokio::spawn({
        let peer = client.peer().clone();
        async move { peer.call_tool(call("slow", json!({}))).await }
    });
    tokio::time::timeout(PATIENCE, gate.started.notified())
        .await
        .expect("the call starts");
    assert!(server.remove_tool("slow").await.is_some());
    gate.release.notify_one();
    let result = tokio::time::timeout(PATIENCE, running)
        .await
        .expect("the call answers")
        .unwrap()
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "done");
    let error = client.call_tool(call("slow", json!({}))).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("Unknown tool: slow. Available tools: add"),
        "{error}"
    );
}

/// These tests are about the sessions of 2025-11-25, on which the server tells each
/// connected client of a change; a 2026-07-28 client follows changes on
/// `subscriptions/listen` instead.
fn on_sessions() -> HttpClientOptions {
    HttpClientOptions::new().with_protocol_version("2025-11-25")
}

#[tokio::test]
async fn our_client_sees_new_tools_and_a_removed_tool_fails_clearly() {
    let server = McpServer::new(tools![add, echo]);
    let http = serve_http(&server, HttpOptions::default()).await;
    let client = McpClient::connect_http_with(&http.url, &on_sessions())
        .await
        .unwrap();
    let before = client.toolset().unwrap();
    let mut changes = client.tool_changes();
    eventually("the session counts as connected", || {
        server.connected_clients() == 1
    })
    .await;

    server.add_tool(sub {}).await.unwrap();
    next_listing(&mut changes).await;
    assert_eq!(client.tool_names(), ["add", "echo", "sub"]);
    let now = client.toolset().unwrap();
    let out = now
        .call("sub", &json!({"a": 7, "b": 2}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("5"));

    assert!(server.remove_tool("add").await.is_some());
    next_listing(&mut changes).await;
    assert_eq!(client.tool_names(), ["echo", "sub"]);
    assert!(client.toolset().unwrap().get("add").is_none());
    // A set made before the change still holds `add`; its call says what happened.
    let error = before
        .call("add", &json!({"a": 1, "b": 2}), &ToolContext::default())
        .await
        .unwrap_err();
    let error = error.as_tool_error().expect("a tool error");
    assert_eq!(error.kind(), ToolErrorKind::UnknownTool);
    assert_eq!(
        error.message(),
        "Unknown tool: add. Available tools: echo, sub (the MCP server `toolwright-mcp` \
         changed its tools and no longer offers `add`)"
    );
    // Its tools the server still has keep working.
    let out = before
        .call(
            "echo",
            &json!({"text": "still here"}),
            &ToolContext::default(),
        )
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("still here"));
}

#[tokio::test]
async fn every_http_session_is_told_and_a_closed_one_is_dropped() {
    let server = McpServer::new(tools![add]);
    // Sessions a client abandons without closing expire quickly.
    let options = HttpOptions::default().with_session_idle_timeout(Duration::from_secs(2));
    let http = serve_http(&server, options).await;
    let first = McpClient::connect_http_with(&http.url, &on_sessions())
        .await
        .unwrap();
    let second = McpClient::connect_http_with(&http.url, &on_sessions())
        .await
        .unwrap();
    let third = McpClient::connect_http_with(&http.url, &on_sessions())
        .await
        .unwrap();
    eventually("three sessions connected", || {
        server.connected_clients() == 3
    })
    .await;

    let mut first_changes = first.tool_changes();
    let mut second_changes = second.tool_changes();
    server.add_tool(sub {}).await.unwrap();
    next_listing(&mut first_changes).await;
    next_listing(&mut second_changes).await;
    assert_eq!(first.tool_names(), ["add", "sub"]);
    assert_eq!(second.tool_names(), ["add", "sub"]);

    // One client closes its session, another vanishes without a word.
    first.close().await;
    drop(third);
    // A change right away is not held up by them, and still reaches the live session.
    tokio::time::timeout(Duration::from_secs(4), server.add_tool(echo {}))
        .await
        .expect("the change is made without waiting for the closed sessions")
        .unwrap();
    next_listing(&mut second_changes).await;
    assert_eq!(second.tool_names(), ["add", "sub", "echo"]);
    // The server keeps no session that has ended.
    eventually("only the live session is kept", || {
        server.connected_clients() == 1
    })
    .await;
    assert!(server.remove_tool("sub").await.is_some());
    next_listing(&mut second_changes).await;
    assert_eq!(second.tool_names(), ["add", "echo"]);
}

#[tokio::test]
async fn a_tool_needing_a_scope_stays_hidden_when_it_is_added() {
    let server = McpServer::new(tools![add]);
    let auth = HttpAuth::new(
        StaticTokens::new()
            .with_token("alice-token", Principal::new("alice"))
            .with_token("root-token", Principal::new("root").with_scopes(["admin"])),
    )
    .require_scopes_for_tool_added_later("admin_reset", ["admin"]);
    let http = serve_http(&server, HttpOptions::default().with_auth(auth)).await;
    // Alice on rmcp's client, root on ours. rmcp's client builds its own reqwest
    // client, and reqwest's rustls has no crypto provider of its own in this workspace.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (tx, mut alice_notices) = mpsc::unbounded_channel();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(http.url.clone()).auth_header("alice-token"),
    );
    let alice = Notices(tx).serve(transport).await.unwrap();
    let options = on_sessions().with_bearer_token("root-token");
    let root = McpClient::connect_http_with(&http.url, &options)
        .await
        .unwrap();
    eventually("both sessions connected", || {
        server.connected_clients() == 2
    })
    .await;

    let mut root_changes = root.tool_changes();
    server
        .update_tools(|tools| {
            tools.register_tool(admin_reset {})?;
            tools.register_tool(sub {})?;
            Ok(())
        })
        .await
        .unwrap();
    next_notice(&mut alice_notices).await;
    next_listing(&mut root_changes).await;
    assert_eq!(
        names(&alice.list_all_tools().await.unwrap()),
        ["add", "sub"]
    );
    assert_eq!(root.tool_names(), ["add", "admin_reset", "sub"]);

    let reset = root.toolset().unwrap();
    let out = reset
        .call("admin_reset", &json!({}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("reset"));
    // For Alice it does not exist.
    let error = alice
        .call_tool(call("admin_reset", json!({})))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("a JSON-RPC error, not {error:?}");
    };
    assert_eq!(
        error.message,
        "Unknown tool: admin_reset. Available tools: add, sub"
    );
}

#[tokio::test]
async fn a_stateless_endpoint_keeps_no_client_and_serves_the_change_at_the_next_listing() {
    let server = McpServer::new(tools![add]);
    let http = serve_http(&server, HttpOptions::default().stateless(true)).await;
    let client = McpClient::connect_http(&http.url).await.unwrap();
    let mut changes = client.tool_changes();
    // Without sessions there is no one to tell, and nothing is kept per request.
    server.add_tool(sub {}).await.unwrap();
    eventually("no client kept", || server.connected_clients() == 0).await;
    assert_eq!(client.tool_names(), ["add"]);
    client.refresh_tools().await.unwrap();
    assert!(changes.has_changed().unwrap());
    assert_eq!(*changes.borrow_and_update(), 1);
    assert_eq!(client.tool_names(), ["add", "sub"]);
    let out = client
        .toolset()
        .unwrap()
        .call("sub", &json!({"a": 2, "b": 5}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("-3"));
}

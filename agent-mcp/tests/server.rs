//! The MCP server, served over Streamable HTTP on 127.0.0.1 inside the test, driven by
//! our client, by rmcp's client, and by raw HTTP for input no client would send.

#[path = "support/events.rs"]
mod events;

use events::{Counter, Flag, PolledCalls, within};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorCode, PaginatedRequestParams};
use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolError, ToolErrorKind, ToolSet, async_trait,
    exec::{Executor, TurnContext},
    llm::ToolCall,
    tool::{ActivationContext, ToolExposure, TypedTool},
    toolset::ToolConfig,
};
use toolwright_mcp::{McpClient, McpHttpServer, McpPeer, McpServer, ServerOptions};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    /// What to echo
    text: String,
}

/// Echoes its text; its exposure is chosen per instance.
struct Echo {
    name: &'static str,
    exposure: ToolExposure,
    active: Arc<AtomicBool>,
}

#[async_trait]
impl TypedTool for Echo {
    type Args = EchoArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        "Echoes its text."
    }

    fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    async fn should_activate(&self, _ctx: &ActivationContext) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    async fn call_typed(&self, args: EchoArgs, ctx: &ToolContext) -> AgentResult<String> {
        // `$session` echoes the session the call belongs to.
        Ok(match args.text.as_str() {
            "$session" => ctx.session_id().to_owned(),
            _ => args.text,
        })
    }
}

/// Waits until cancelled (or 10s), and records that it saw the cancellation.
struct WaitForCancel {
    started: Flag,
    saw_cancel: Flag,
}

#[async_trait]
impl Tool for WaitForCancel {
    fn name(&self) -> &'static str {
        "wait_for_cancel"
    }

    fn description(&self) -> &'static str {
        "Waits until the call is cancelled."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(10_000)
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        self.started.set();
        tokio::select! {
            () = ctx.cancellation().cancelled() => {
                self.saw_cancel.set();
                Err(ToolError::cancelled("wait_for_cancel").into())
            }
            () = tokio::time::sleep(Duration::from_secs(10)) => Ok(vec![Content::text("not cancelled")]),
        }
    }
}

/// Never finishes; times out after 100ms, and its token must be cancelled when it does.
struct Slow {
    saw_cancel: Flag,
}

#[async_trait]
impl Tool for Slow {
    fn name(&self) -> &'static str {
        "slow"
    }

    fn description(&self) -> &'static str {
        "Takes longer than its timeout."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(100)
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let ctx = ctx.clone();
        let saw_cancel = self.saw_cancel.clone();
        // The watcher outlives the call future, as a tool's spawned work would.
        tokio::spawn(async move {
            ctx.cancellation().cancelled().await;
            saw_cancel.set();
        });
        std::future::pending::<()>().await;
        Ok(vec![Content::text("too late")])
    }
}

struct Panics;

#[async_trait]
impl Tool for Panics {
    fn name(&self) -> &'static str {
        "panics"
    }

    fn description(&self) -> &'static str {
        "Panics."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        panic!("a bug in a tool")
    }
}

struct Fixture {
    url: String,
    addr: std::net::SocketAddr,
    deferred_active: Arc<AtomicBool>,
    started: Flag,
    saw_cancel: Flag,
    slow_saw_cancel: Flag,
    stop: tokio_util::sync::CancellationToken,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn start(page_size: usize) -> Fixture {
    let deferred_active = Arc::new(AtomicBool::new(false));
    let (started, saw_cancel, slow_saw_cancel) =
        (Flag::default(), Flag::default(), Flag::default());
    let echo = |name, exposure| Echo {
        name,
        exposure,
        active: deferred_active.clone(),
    };
    let mut tools = ToolSet::new();
    tools
        .register_tool(echo("echo", ToolExposure::Direct))
        .unwrap()
        .register_tool(echo("deferred_echo", ToolExposure::Deferred))
        .unwrap()
        .register_tool(echo("hidden_echo", ToolExposure::Hidden))
        .unwrap()
        .register_tool(WaitForCancel {
            started: started.clone(),
            saw_cancel: saw_cancel.clone(),
        })
        .unwrap()
        .register_tool(Slow {
            saw_cancel: slow_saw_cancel.clone(),
        })
        .unwrap()
        .register_tool(Panics)
        .unwrap();
    let mut options = ServerOptions::named("test-server", "1.2.3");
    options.page_size = page_size;
    let http = McpHttpServer::bind(McpServer::with_options(tools, options), "127.0.0.1:0")
        .await
        .unwrap()
        // Calls in flight at shutdown are cancelled after this grace period.
        .with_shutdown_grace(Duration::from_millis(200));
    let fixture = Fixture {
        url: http.url(),
        addr: http.local_addr(),
        deferred_active,
        started,
        saw_cancel,
        slow_saw_cancel,
        stop: http.shutdown_token(),
    };
    tokio::spawn(http.run());
    fixture
}

/// rmcp's own client, for requests ours does not make (raw cursors, unknown names).
async fn rmcp_client(url: &str) -> rmcp::service::RunningService<rmcp::service::RoleClient, ()> {
    // reqwest's rustls has no built-in crypto provider in this workspace (see
    // `McpClient::connect_http`); a process-wide one must exist before a client is built.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap()
}

fn names(set: &ToolSet) -> Vec<&str> {
    let mut names: Vec<_> = set.iter().map(|t| t.name()).collect();
    names.sort_unstable();
    names
}

#[tokio::test]
async fn listing_offers_direct_and_active_deferred_tools_never_hidden() {
    let server = start(100).await;
    let client = McpClient::connect_http(&server.url).await.unwrap();
    assert_eq!(client.server_name(), "test-server");
    let set = client.toolset().unwrap();
    assert_eq!(
        names(&set),
        ["echo", "panics", "slow", "wait_for_cancel"],
        "an inactive deferred tool and a hidden tool are not listed"
    );
    client.close().await;

    server.deferred_active.store(true, Ordering::SeqCst);
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let set = client.toolset().unwrap();
    assert!(names(&set).contains(&"deferred_echo"));
    assert!(!names(&set).contains(&"hidden_echo"));
    client.close().await;
}

#[tokio::test]
async fn hidden_and_inactive_tools_answer_as_unknown_tools() {
    let server = start(100).await;
    let client = rmcp_client(&server.url).await;
    for name in ["hidden_echo", "deferred_echo", "no_such_tool"] {
        let args = json!({"text": "x"}).as_object().cloned().unwrap();
        let error = client
            .peer()
            .call_tool(CallToolRequestParams::new(name).with_arguments(args))
            .await
            .unwrap_err();
        match error {
            ServiceError::McpError(data) => {
                assert_eq!(data.code, ErrorCode::INVALID_PARAMS, "{name}");
                assert!(
                    data.message.contains(&format!("Unknown tool: {name}")),
                    "{}",
                    data.message
                );
                if name != "hidden_echo" {
                    assert!(
                        !data.message.contains("hidden_echo"),
                        "hidden tools are never named"
                    );
                }
            }
            other => panic!("{name}: expected a JSON-RPC error, got {other:?}"),
        }
    }
    let _ = client.cancel().await;
}

#[tokio::test]
async fn listing_is_paginated_with_opaque_cursors() {
    let server = start(2).await;
    let client = rmcp_client(&server.url).await;
    let peer = client.peer();
    let first = peer.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = peer
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.tools.len(), 2);
    let all = peer.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 4);

    let error = peer
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("not-a-cursor".into())),
        ))
        .await
        .unwrap_err();
    assert!(matches!(error, ServiceError::McpError(ref e) if e.code == ErrorCode::INVALID_PARAMS));
    let _ = client.cancel().await;
}

#[tokio::test]
async fn listing_carries_2020_12_schemas() {
    let server = start(100).await;
    let client = rmcp_client(&server.url).await;
    let tools = client.peer().list_all_tools().await.unwrap();
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    let schema = Value::Object((*echo.input_schema).clone());
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["text"]["description"], "What to echo");
    assert_eq!(schema["required"], json!(["text"]));
    assert_eq!(schema["additionalProperties"], false);
    let _ = client.cancel().await;
}

#[tokio::test]
async fn tool_failures_are_results_with_is_error() {
    let server = start(100).await;
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let set = client.toolset().unwrap();
    let ctx = ToolContext::default();

    let out = set
        .call("echo", &json!({"text": "hi"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out, vec![Content::text("hi")]);

    let error = set
        .call("echo", &json!({"text": 7}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::InvalidArguments)
    );
    assert!(error.to_string().contains("text"), "{error}");

    let error = set
        .call("echo", &json!({"text": "hi", "extra": 1}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::InvalidArguments)
    );
    assert!(
        error.to_string().contains("unknown field `extra`"),
        "{error}"
    );

    let error = set.call("panics", &json!({}), &ctx).await.unwrap_err();
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::Execution));
    assert!(error.to_string().contains("panicked"), "{error}");

    // The server survived the panic.
    let out = set
        .call("echo", &json!({"text": "still here"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out, vec![Content::text("still here")]);
    client.close().await;
}

#[tokio::test]
async fn timeouts_answer_is_error_and_cancel_the_tool() {
    let server = start(100).await;
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let set = client.toolset().unwrap();
    // The tool never finishes: only its timeout can answer the call.
    let error = within(
        "a call of a tool that never finishes was answered",
        set.call("slow", &json!({}), &ToolContext::default()),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::Timeout),
        "not answered as timed out: {error}"
    );
    assert!(
        error.to_string().contains("timed out after 100ms"),
        "not the tool's own 100 ms timeout: {error}"
    );
    server
        .slow_saw_cancel
        .wait("the timed-out tool's token was cancelled")
        .await;
    client.close().await;
}

#[tokio::test]
async fn a_cancelled_call_cancels_the_tool_on_the_server() {
    let server = start(100).await;
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let set = client.toolset().unwrap();
    let token = tokio_util::sync::CancellationToken::new();
    let ctx = ToolContext::default().with_cancellation(token.clone());
    // Cancel once the call runs on the server: a cancellation that overtakes its
    // request is, by the protocol, ignored.
    let cancel = async {
        server.started.wait("the call started on the server").await;
        token.cancel();
    };
    let no_args = json!({});
    let (result, ()) = tokio::join!(set.call("wait_for_cancel", &no_args, &ctx), cancel);
    let error = result.expect_err("a cancelled call of a tool that waits for its cancellation");
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::Cancelled),
        "not answered as cancelled: {error}"
    );
    // `notifications/cancelled` reaches the server and cancels the tool's token.
    server
        .saw_cancel
        .wait("the server-side call saw the cancellation")
        .await;
    client.close().await;
}

// An executor drops a remote call it times out without polling it again: the server
// hears of it all the same, and its tool stops instead of running on for nobody.
#[tokio::test]
async fn a_remote_call_the_executor_times_out_is_cancelled_on_the_server() {
    let server = start(100).await;
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let set = Arc::new(client.toolset().unwrap());
    // The local timeout (300 ms) is shorter than the remote tool's own (10 s).
    let executor = Executor::new(
        set,
        ToolConfig::default().with_default_timeout(Duration::from_millis(300)),
    );
    let results = executor
        .execute(
            vec![ToolCall::new("c1", "wait_for_cancel", json!({}))],
            &TurnContext::new(),
        )
        .await;
    assert_eq!(
        results[0].outcome.error().map(ToolError::kind),
        Some(ToolErrorKind::Timeout),
        "the executor did not time the call out: {:?}",
        results[0].outcome
    );
    server.started.wait("the remote call ran").await;
    server
        .saw_cancel
        .wait("the server's tool was told to stop once the executor gave up on the call")
        .await;
    client.close().await;
}

// A server that shuts down with a call in flight cancels its tool, and the caller's call
// ends in an error once resuming the stream has failed a few times, instead of waiting
// forever.
#[tokio::test]
async fn a_call_in_flight_when_the_server_shuts_down_ends_in_an_error() {
    let server = start(100).await;
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let set = client.toolset().unwrap();
    let (stop, started) = (server.stop.clone(), server.started.clone());
    let stopper = async {
        started.wait("the call started on the server").await;
        stop.cancel();
    };
    let (no_args, ctx) = (json!({}), ToolContext::default());
    // About six seconds of waits between attempts to resume, and the attempts: 8.6 s here.
    let call = within(
        "the call in flight ended once its server shut down",
        set.call("wait_for_cancel", &no_args, &ctx),
    );
    let (result, ()) = tokio::join!(call, stopper);
    assert!(
        result.is_err(),
        "a call whose server shut down under it succeeded: {result:?}"
    );
    server.saw_cancel.wait("the tool was told to stop").await;
}

/// One raw HTTP/1.1 POST to the endpoint: (status, headers, body).
async fn post(
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: &[u8],
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let session = session
        .map(|s| format!("mcp-session-id: {s}\r\nmcp-protocol-version: 2025-06-18\r\n"))
        .unwrap_or_default();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (413, 400) before reading a large body; that is fine.
    let _ = stream.write_all(body).await;
    let mut response = Vec::new();
    // `Connection: close`, and a request's SSE stream ends after its response.
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response));
    let _ = read.await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

async fn raw_session(addr: std::net::SocketAddr) -> String {
    raw_session_with(addr, json!({})).await
}

async fn raw_session_with(addr: std::net::SocketAddr, capabilities: Value) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "raw", "version": "0"}}});
    let (status, head, _) = post(addr, None, init.to_string().as_bytes()).await;
    assert_eq!(status, 200, "{head}");
    let session = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(addr, Some(&session), initialized.to_string().as_bytes()).await;
    session
}

#[tokio::test]
async fn hostile_input_gets_errors_and_the_server_keeps_serving() {
    let server = start(100).await;
    let addr = server.addr;
    let session = raw_session(addr).await;

    // Another path.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /admin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");

    // Malformed JSON.
    let (status, _, body) = post(addr, Some(&session), b"{\"jsonrpc\": \"2.0\", \"id\": 2, ").await;
    assert!(
        status >= 400 || body.contains("\"error\""),
        "{status} {body}"
    );

    // Not JSON-RPC at all.
    let (status, _, body) = post(addr, Some(&session), b"[1, 2, 3]").await;
    assert!(
        status >= 400 || body.contains("\"error\""),
        "{status} {body}"
    );

    // A method that does not exist.
    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/explode", "params": {}});
    let (_, _, body) = post(addr, Some(&session), unknown.to_string().as_bytes()).await;
    assert!(body.contains("\"error\""), "{body}");

    // `tools/call` with arguments that are not an object.
    let bad = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "echo", "arguments": [1, 2]}});
    let (status, _, body) = post(addr, Some(&session), bad.to_string().as_bytes()).await;
    assert!(
        status >= 400 || body.contains("\"error\"") || body.contains("\"isError\":true"),
        "{status} {body}"
    );

    // Deeply nested arguments.
    let depth = 10_000;
    let nested = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\
         \"arguments\":{{\"text\":{}{}}}}}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let (status, _, body) = post(addr, Some(&session), nested.as_bytes()).await;
    assert!(
        status >= 400 || body.contains("\"error\"") || body.contains("\"isError\":true"),
        "{status} {body}"
    );

    // Huge arguments (past the body limit).
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\
         \"arguments\":{{\"text\":\"{}\"}}}}}}",
        "x".repeat(6 * 1024 * 1024)
    );
    let (status, _, body) = post(addr, Some(&session), huge.as_bytes()).await;
    assert!(
        status >= 400 || body.contains("\"error\""),
        "{status} {}",
        &body[..body.len().min(200)]
    );

    // Large but acceptable arguments are served.
    let large = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "y".repeat(100_000)}}});
    let (status, _, body) = post(addr, Some(&session), large.to_string().as_bytes()).await;
    assert_eq!(status, 200);
    assert!(
        body.contains("yyyyyyyy") && body.contains("\"isError\":false"),
        "{}",
        &body[..body.len().min(300)]
    );

    // And the server still serves everyone.
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let out = client
        .toolset()
        .unwrap()
        .call("echo", &json!({"text": "alive"}), &ToolContext::default())
        .await
        .unwrap();
    assert_eq!(out, vec![Content::text("alive")]);
    client.close().await;
}

/// The stdio framing, in memory: every line the client writes is answered, valid or not.
#[tokio::test]
async fn stream_transport_answers_malformed_lines_and_keeps_serving() {
    use tokio::io::{AsyncBufReadExt, BufReader};

    let mut tools = ToolSet::new();
    tools
        .register_tool(Echo {
            name: "echo",
            exposure: ToolExposure::Direct,
            active: Arc::default(),
        })
        .unwrap();
    let (client, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    let served = tokio::spawn(toolwright_mcp::serve_io(
        McpServer::new(tools),
        server_read,
        server_write,
    ));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut replies = BufReader::new(client_read).lines();
    let mut send = async |line: String| {
        client_write.write_all(line.as_bytes()).await.unwrap();
        client_write.write_all(b"\n").await.unwrap();
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    send(init.to_string()).await;
    let reply = replies.next_line().await.unwrap().unwrap();
    assert!(reply.contains("\"serverInfo\""), "{reply}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()).await;

    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), replies.next_line())
            .await
            .expect("a reply")
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };

    send("{\"jsonrpc\": \"2.0\", \"id\": 2,".to_owned()).await;
    let reply = next().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null);

    let depth = 5_000;
    send(format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\
         \"arguments\":{{\"text\":{}{}}}}}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    ))
    .await;
    let reply = next().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("recursion limit")
    );

    send("z".repeat(toolwright_mcp::MAX_MESSAGE_BYTES + 10)).await;
    let reply = next().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");

    send(json!({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}).to_string()).await;
    let reply = next().await;
    assert_eq!(reply["id"], 4);
    assert_eq!(reply["error"]["code"], -32601, "{reply}");

    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "still serving"}}});
    send(call.to_string()).await;
    let reply = next().await;
    assert_eq!(reply["id"], 5);
    assert_eq!(reply["result"]["content"][0]["text"], "still serving");

    // End of input ends the session cleanly.
    client_write.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("the server stops at end of input")
        .unwrap()
        .unwrap();
}

/// Runs one call at a time, each until the test lets it finish; counts the calls that
/// entered it, and the most it saw at once.
struct OneAtATime {
    entered: Counter,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    finish: Arc<tokio::sync::Semaphore>,
}

#[async_trait]
impl Tool for OneAtATime {
    fn name(&self) -> &'static str {
        "one_at_a_time"
    }

    fn description(&self) -> &'static str {
        "Runs alone."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn concurrency(&self) -> toolwright_core::tool::ToolConcurrency {
        toolwright_core::tool::ToolConcurrency {
            max_in_flight: Some(1),
            ..Default::default()
        }
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.entered.add();
        self.finish.acquire().await.unwrap().forget();
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(vec![Content::text("done")])
    }
}

#[tokio::test]
async fn tool_concurrency_limits_and_the_output_budget_apply() {
    // Everything runs on this test's thread, where this subscriber sees the pipeline's
    // `tool_call` spans.
    let polled = PolledCalls::default();
    let _traced = polled.install();
    let (entered, most) = (Counter::default(), Arc::new(AtomicUsize::new(0)));
    let finish = Arc::new(tokio::sync::Semaphore::new(0));
    let mut tools = ToolSet::new();
    tools
        .register_tool(OneAtATime {
            entered: entered.clone(),
            running: Arc::default(),
            most: most.clone(),
            finish: finish.clone(),
        })
        .unwrap()
        .register_tool(Echo {
            name: "echo",
            exposure: ToolExposure::Direct,
            active: Arc::default(),
        })
        .unwrap();
    let mut options = ServerOptions::default();
    options.tool_config =
        toolwright_core::toolset::ToolConfig::default().with_max_output_chars(100);
    let http = McpHttpServer::bind(McpServer::with_options(tools, options), "127.0.0.1:0")
        .await
        .unwrap();
    let url = http.url();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());

    let client = McpClient::connect_http(&url).await.unwrap();
    let set = client.toolset().unwrap();
    let ctx = ToolContext::default();
    let no_args = json!({});
    let referee = async {
        // Every call is at its tool's permit or past it: without the limit, all three
        // would be in the tool now, none of them being let finish.
        polled.reach("one_at_a_time", 3).await;
        assert_eq!(
            entered.get(),
            1,
            "max_in_flight = 1 let a second call in while the first still ran"
        );
        finish.add_permits(3);
    };
    let (a, b, c, ()) = tokio::join!(
        set.call("one_at_a_time", &no_args, &ctx),
        set.call("one_at_a_time", &no_args, &ctx),
        set.call("one_at_a_time", &no_args, &ctx),
        referee,
    );
    for result in [a, b, c] {
        assert_eq!(result.unwrap(), vec![Content::text("done")]);
    }
    assert_eq!(entered.get(), 3, "every call ran");
    assert_eq!(
        most.load(Ordering::SeqCst),
        1,
        "max_in_flight = 1 holds across requests"
    );

    let long = "x".repeat(10_000);
    let out = set
        .call("echo", &json!({"text": long}), &ctx)
        .await
        .unwrap();
    let text = out[0].as_text().unwrap();
    assert!(
        text.chars().count() < 1_000,
        "cut to the budget: {} chars",
        text.len()
    );
    assert!(
        text.starts_with("xxx") && text.ends_with("xxx"),
        "head and tail kept"
    );
    client.close().await;
    stop.cancel();
}

/// Answers whether the calling client declared sampling, as its `McpPeer` says.
struct ClientSamples;

#[async_trait]
impl Tool for ClientSamples {
    fn name(&self) -> &'static str {
        "client_samples"
    }

    fn description(&self) -> &'static str {
        "Whether the calling client declared sampling."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let peer = ctx
            .state::<McpPeer>()
            .expect("the server provides the peer");
        Ok(vec![Content::text(
            peer.client_supports("sampling").to_string(),
        )])
    }
}

#[tokio::test]
async fn each_session_calls_with_its_own_client_as_peer() {
    let mut tools = ToolSet::new();
    tools.register_tool(ClientSamples).unwrap();
    let http = McpHttpServer::bind(McpServer::new(tools), "127.0.0.1:0")
        .await
        .unwrap();
    let (addr, stop) = (http.local_addr(), http.shutdown_token());
    tokio::spawn(http.run());
    let sampling = raw_session_with(addr, json!({"sampling": {}})).await;
    let plain = raw_session_with(addr, json!({})).await;
    let ask = async |session: &str, id: u32| {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "client_samples", "arguments": {}}});
        let (status, _, body) = post(addr, Some(session), call.to_string().as_bytes()).await;
        assert_eq!(status, 200, "{body}");
        body
    };
    // Twice each, interleaved: the peer a session's first call saw is not another's.
    for id in [2, 3] {
        assert!(ask(&sampling, id).await.contains(r#""text":"true""#));
        assert!(ask(&plain, id).await.contains(r#""text":"false""#));
    }
    stop.cancel();
}

/// Blocks its thread for longer than its timeout, as a tool calling blocking code does.
struct BlocksItsThread;

#[async_trait]
impl Tool for BlocksItsThread {
    fn name(&self) -> &'static str {
        "blocks"
    }

    fn description(&self) -> &'static str {
        "Blocks its thread for 1.5 s; its timeout is 200 ms."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(200)
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        std::thread::sleep(Duration::from_millis(1500));
        Ok(vec![Content::text("too late")])
    }
}

// With one thread, nothing can answer while the tool blocks it: the call is answered when
// the tool returns control, and as the timeout it is by then.
#[tokio::test(flavor = "current_thread")]
async fn on_one_thread_a_tool_blocking_past_its_timeout_is_still_a_timeout() {
    let mut tools = ToolSet::new();
    tools.register_tool(BlocksItsThread).unwrap();
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let running = McpServer::new(tools).serve(server_end).await.unwrap();
        let _ = running.waiting().await;
    });
    let client = ().serve(client_end).await.unwrap();
    let result = client
        .peer()
        .call_tool(CallToolRequestParams::new("blocks"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert!(text.as_str().unwrap().contains("200ms"), "{text}");
    let meta = serde_json::to_value(&result.meta).unwrap();
    assert_eq!(meta["agent-tools/errorKind"], "timeout", "{meta}");
    let _ = client.cancel().await;
}

/// Blocks its thread until the test lets it go, as a tool calling blocking code does;
/// its timeout is 200 ms.
struct BlocksUntilReleased {
    blocking: Flag,
    released: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

#[async_trait]
impl Tool for BlocksUntilReleased {
    fn name(&self) -> &'static str {
        "blocks"
    }

    fn description(&self) -> &'static str {
        "Blocks its thread until released; its timeout is 200 ms."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(200)
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        self.blocking.set();
        // Released by the test, or when the test ends (the sender is dropped).
        let _ = self.released.lock().unwrap().recv();
        Ok(vec![Content::text("too late")])
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_blocking_its_thread_is_answered_on_time_and_others_go_on() {
    let (release, released) = std::sync::mpsc::channel();
    let blocking = Flag::default();
    let mut tools = ToolSet::new();
    tools
        .register_tool(BlocksUntilReleased {
            blocking: blocking.clone(),
            released: std::sync::Mutex::new(released),
        })
        .unwrap()
        .register_tool(Echo {
            name: "echo",
            exposure: ToolExposure::Direct,
            active: Arc::default(),
        })
        .unwrap();
    let http = McpHttpServer::bind(McpServer::new(tools), "127.0.0.1:0")
        .await
        .unwrap();
    let (url, stop) = (http.url(), http.shutdown_token());
    tokio::spawn(http.run());
    let client = McpClient::connect_http(&url).await.unwrap();
    let set = client.toolset().unwrap();
    let ctx = ToolContext::default();

    // The tool is released only after both answers: each came while it held its thread.
    let (no_args, hi) = (json!({}), json!({"text": "hi"}));
    let blocked = within(
        "the blocked call was answered while its tool still blocked its thread",
        set.call("blocks", &no_args, &ctx),
    );
    let echoed = async {
        blocking.wait("the tool blocked its thread").await;
        within(
            "another call was answered while a tool blocked its thread",
            set.call("echo", &hi, &ctx),
        )
        .await
    };
    let (blocked, echoed) = tokio::join!(blocked, echoed);
    let error = blocked.expect_err("a call blocked past its timeout succeeded");
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::Timeout),
        "not answered as timed out: {error}"
    );
    assert_eq!(echoed.unwrap(), vec![Content::text("hi")]);
    release.send(()).unwrap();
    client.close().await;
    stop.cancel();
}

/// Pings the client that called it, through its `McpPeer`.
struct PingsClient;

#[async_trait]
impl Tool for PingsClient {
    fn name(&self) -> &'static str {
        "pings_client"
    }

    fn description(&self) -> &'static str {
        "Pings the calling client."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(1_000)
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let peer = ctx.state::<McpPeer>().expect("a peer").clone();
        peer.request("ping", json!({})).await?;
        Ok(vec![Content::text("pinged")])
    }
}

// A request a tool makes of its client belongs to its call: it rides the call's own SSE
// stream (SEP-2260), as the approval question does, not the standalone GET stream, which
// a client need not open (this one does not).
#[tokio::test]
async fn a_tools_request_to_its_client_rides_the_calls_stream() {
    let mut tools = ToolSet::new();
    tools.register_tool(PingsClient).unwrap();
    let http = McpHttpServer::bind(McpServer::new(tools), "127.0.0.1:0")
        .await
        .unwrap();
    let (addr, stop) = (http.local_addr(), http.shutdown_token());
    tokio::spawn(http.run());
    let session = raw_session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "pings_client", "arguments": {}}});
    let (status, _, body) = post(addr, Some(&session), call.to_string().as_bytes()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""method":"ping""#), "{body}");
    stop.cancel();
}

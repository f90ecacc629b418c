//! A client that disconnects in the middle of a call over Streamable HTTP: the call is
//! cancelled (its tool sees its cancellation token fire) and the places it held, under
//! the request cap and under the calls-in-flight limit, are freed for other clients.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_http.rs"]
mod raw_http;

use events::within;
use raw_http::{MCP_HEADERS, Running, call, open_session, rpc, serve_on_loopback};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolSet, async_trait, tools, toolset::ToolConfig,
};
use toolwright_mcp::{HttpOptions, McpHttpServer, McpServer, ServerOptions};

/// What the waiting tool went through.
#[derive(Debug, PartialEq)]
enum Seen {
    Started,
    /// Its cancellation token fired.
    Cancelled,
    /// Its future was dropped without the token firing first.
    Dropped,
}

/// Waits for its cancellation, up to 30 s, and reports what happened to it.
struct Wait {
    events: mpsc::UnboundedSender<Seen>,
    /// `wait_fast` says it does not read its context (so the endpoint answers its calls
    /// itself); it still watches its cancellation, to report it.
    fast: bool,
}

/// Reports `Dropped` if the call's future is dropped before it sees its cancellation.
struct ReportsDrop(Option<mpsc::UnboundedSender<Seen>>);

impl Drop for ReportsDrop {
    fn drop(&mut self) {
        if let Some(events) = self.0.take() {
            let _ = events.send(Seen::Dropped);
        }
    }
}

#[async_trait]
impl Tool for Wait {
    fn name(&self) -> &'static str {
        if self.fast { "wait_fast" } else { "wait" }
    }

    fn uses_context(&self) -> bool {
        !self.fast
    }

    fn description(&self) -> &'static str {
        "Waits until the call is cancelled."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(60_000)
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let _ = self.events.send(Seen::Started);
        let mut guard = ReportsDrop(Some(self.events.clone()));
        tokio::select! {
            () = ctx.cancellation().cancelled() => {
                guard.0 = None;
                let _ = self.events.send(Seen::Cancelled);
                Ok(vec![Content::text("cancelled")])
            }
            () = tokio::time::sleep(Duration::from_secs(30)) => {
                guard.0 = None;
                Ok(vec![Content::text("waited 30 s")])
            }
        }
    }
}

/// Adds two numbers.
#[toolwright_core::tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A server that answers one request and runs one call at a time.
async fn serve(stateless: bool) -> (Running, mpsc::UnboundedReceiver<Seen>) {
    let (events, seen) = mpsc::unbounded_channel();
    let mut tools = tools![add];
    tools
        .register_tool(Wait {
            events: events.clone(),
            fast: false,
        })
        .unwrap()
        .register_tool(Wait { events, fast: true })
        .unwrap();
    let mut options = ServerOptions::default();
    options.tool_config = ToolConfig::default().with_max_concurrency(1);
    let http = HttpOptions::default()
        .with_max_concurrent_requests(1)
        .stateless(stateless);
    let running = serve_on_loopback(McpServer::with_options(tools, options), http).await;
    (running, seen)
}

/// Starts a call of `tool` on a raw connection, waits until the tool runs, then drops
/// the connection without reading the answer.
async fn call_then_disconnect(
    addr: SocketAddr,
    session: Option<&str>,
    tool: &str,
    seen: &mut mpsc::UnboundedReceiver<Seen>,
) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let body = rpc(7, "tools/call", json!({"name": tool, "arguments": {}}));
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in MCP_HEADERS {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    let started = within("the tool started", seen.recv()).await;
    assert_eq!(started, Some(Seen::Started), "the tool never started");
    // Read whatever the server sent so far (the response head, a priming event), so
    // that the connection is mid-response when it goes.
    let mut buf = [0u8; 1024];
    let _ = tokio::time::timeout(Duration::from_millis(200), stream.read(&mut buf)).await;
    drop(stream);
}

async fn disconnect_cancels_and_frees(stateless: bool, tool: &str) {
    let (server, mut seen) = serve(stateless).await;
    // Both clients' sessions are open before the call: with one request at a time,
    // opening one during the call would be refused while the call holds its place.
    let (first, second) = if stateless {
        (None, None)
    } else {
        let (_, first) = open_session(server.addr, &[]).await.unwrap();
        let (_, second) = open_session(server.addr, &[]).await.unwrap();
        (
            Some(first.expect("a session")),
            Some(second.expect("a session")),
        )
    };

    call_then_disconnect(server.addr, first.as_deref(), tool, &mut seen).await;
    // Its tool waits for its cancellation (or 30 s, and then says nothing).
    let ended = within("the call ended once its client disconnected", seen.recv()).await;
    assert!(
        matches!(ended, Some(Seen::Cancelled | Seen::Dropped)),
        "the call went on after its client disconnected: {ended:?}"
    );

    // The call's places are free: another client's call is admitted (not refused for
    // the one request in flight) and run (not held for the one call at a time).
    let reply = within(
        "the second client's call ran once the abandoned one ended",
        call(
            server.addr,
            second.as_deref(),
            &[],
            "add",
            json!({"a": 2, "b": 3}),
        ),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = reply.answer().expect("an answer to the call");
    assert_eq!(answer["result"]["content"][0]["text"], "5", "{answer}");
}

#[tokio::test]
async fn a_call_whose_client_disconnects_is_cancelled_and_frees_its_places() {
    disconnect_cancels_and_frees(false, "wait").await;
}

#[tokio::test]
async fn a_call_answered_by_the_endpoint_itself_is_cancelled_when_its_client_disconnects() {
    disconnect_cancels_and_frees(false, "wait_fast").await;
}

#[tokio::test]
async fn without_sessions_a_call_whose_client_disconnects_is_cancelled_and_frees_its_places() {
    disconnect_cancels_and_frees(true, "wait").await;
}

/// A call answered by the endpoint itself ends at the request's deadline: 503, and the
/// call is cancelled.
#[tokio::test]
async fn a_fast_call_past_its_deadline_is_answered_503_and_cancelled() {
    let (events, mut seen) = mpsc::unbounded_channel();
    let mut tools = ToolSet::new();
    tools.register_tool(Wait { events, fast: true }).unwrap();
    let http = McpHttpServer::bind(McpServer::new(tools), "127.0.0.1:0")
        .await
        .unwrap()
        .with_options(HttpOptions::default().with_request_timeout(Duration::from_millis(300)));
    let addr = http.local_addr();
    let _stop = http.shutdown_token().drop_guard();
    tokio::spawn(http.run());
    let (_, session) = open_session(addr, &[]).await.unwrap();
    let reply = call(addr, session.as_deref(), &[], "wait_fast", json!({}))
        .await
        .unwrap();
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(
        reply
            .header("content-type")
            .map(|kind| kind.starts_with("text/event-stream")),
        Some(false),
        "{reply:?}"
    );
    assert_eq!(seen.recv().await, Some(Seen::Started));
    let ended = within("the call ended at its deadline", seen.recv()).await;
    assert!(
        matches!(ended, Some(Seen::Cancelled | Seen::Dropped)),
        "the call went on past its deadline: {ended:?}"
    );
}

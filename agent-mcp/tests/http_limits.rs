//! Each limit of the HTTP endpoint attacked over loopback TCP: the attack gets a clear
//! status (or its connections closed), and the server goes on serving other clients.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_http.rs"]
mod raw_http;

use events::{Counter, eventually, within};
use raw_http::{Running, call, open_session, post, send, serve_on_loopback};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolError, ToolSet, async_trait, tool, tools,
};
use toolwright_mcp::{HttpOptions, McpHttpServer, McpServer};

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// What the `hold` tool's calls did: started, and were stopped (cancelled, or dropped)
/// before the test let them finish. `finish` lets one held call finish per permit.
#[derive(Clone)]
struct Hold {
    started: Counter,
    stopped: Counter,
    finish: Arc<Semaphore>,
}

impl Default for Hold {
    fn default() -> Self {
        Self {
            started: Counter::default(),
            stopped: Counter::default(),
            finish: Arc::new(Semaphore::new(0)),
        }
    }
}

/// Counts a call as stopped unless it finished.
struct StopsUnlessFinished(Option<Counter>);

impl Drop for StopsUnlessFinished {
    fn drop(&mut self) {
        if let Some(stopped) = self.0.take() {
            stopped.add();
        }
    }
}

/// Holds each call until the test lets it finish, its call is cancelled, or it is
/// dropped: a call that takes as long as the test says.
struct Held(Hold);

#[async_trait]
impl Tool for Held {
    fn name(&self) -> &'static str {
        "hold"
    }

    fn description(&self) -> &'static str {
        "Runs until the test lets it finish."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn timeout_ms(&self) -> Option<u64> {
        // Only the test, or a limit of the server's, ends a held call.
        Some(3_600_000)
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let mut stops = StopsUnlessFinished(Some(self.0.stopped.clone()));
        self.0.started.add();
        tokio::select! {
            permit = self.0.finish.acquire() => permit.unwrap().forget(),
            () = ctx.cancellation().cancelled() => {
                return Err(ToolError::cancelled("hold").into());
            }
        }
        stops.0 = None;
        Ok(vec![Content::text("finished")])
    }
}

fn tools(hold: &Hold) -> ToolSet {
    let mut tools = tools![add];
    tools.register_tool(Held(hold.clone())).unwrap();
    tools
}

async fn serve(options: HttpOptions) -> Running {
    serve_holding(options).await.0
}

/// A server with the `hold` tool, and what its calls do.
async fn serve_holding(options: HttpOptions) -> (Running, Hold) {
    let hold = Hold::default();
    let running = serve_on_loopback(McpServer::new(tools(&hold)), options).await;
    (running, hold)
}

/// The text a call was answered with.
fn answered_text(reply: &raw_http::Reply) -> Value {
    let answer = reply
        .answer()
        .unwrap_or_else(|| panic!("no answer to the call: {reply:?}"));
    answer["result"]["content"][0]["text"].clone()
}

/// A client that does nothing wrong is served: a session, then `add`.
async fn assert_served(addr: SocketAddr) {
    let (reply, session) = open_session(addr, &[]).await.unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    let reply = call(
        addr,
        session.as_deref(),
        &[],
        "add",
        json!({"a": 2, "b": 3}),
    )
    .await
    .unwrap();
    let answer = reply.answer().expect("an answer to the call");
    assert_eq!(answer["result"]["content"][0]["text"], "5", "{answer}");
}

#[tokio::test]
async fn foreign_and_null_origins_are_refused_loopback_and_listed_ones_served() {
    let server = serve(HttpOptions::default()).await;
    for origin in [
        "http://evil.example",
        "null",
        "http://127.0.0.1.evil.example:80",
    ] {
        let (reply, session) = open_session(server.addr, &[("Origin", origin)])
            .await
            .unwrap();
        assert_eq!(reply.status, 403, "Origin {origin}: {reply:?}");
        assert!(session.is_none(), "Origin {origin} opened a session");
    }
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1:8080",
        "https://[::1]:3000",
    ] {
        let (reply, _) = open_session(server.addr, &[("Origin", origin)])
            .await
            .unwrap();
        assert_eq!(reply.status, 200, "Origin {origin}: {reply:?}");
    }
    // Clients that are not browsers send no Origin.
    assert_served(server.addr).await;

    let listed =
        serve(HttpOptions::default().with_allowed_origins(["https://app.example.com"])).await;
    let (reply, _) = open_session(listed.addr, &[("Origin", "https://app.example.com")])
        .await
        .unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    let (reply, _) = open_session(listed.addr, &[("Origin", "http://localhost:5173")])
        .await
        .unwrap();
    assert_eq!(reply.status, 403, "{reply:?}");
}

#[tokio::test]
async fn a_foreign_host_is_refused() {
    let server = serve(HttpOptions::default()).await;
    let reply = send(
        server.addr,
        "POST",
        "/mcp",
        &[
            ("Host", "attacker.example"),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &raw_http::initialize_request(),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 403, "{reply:?}");
    assert_served(server.addr).await;
}

#[tokio::test]
async fn a_body_over_the_limit_gets_413_and_others_are_served() {
    let server = serve(HttpOptions::default().with_max_body_bytes(64 * 1024)).await;
    let (_, session) = open_session(server.addr, &[]).await.unwrap();
    let big = "x".repeat(100 * 1024);
    let reply = call(
        server.addr,
        session.as_deref(),
        &[],
        "add",
        json!({"a": 1, "b": 2, "pad": big}),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 413, "{}", reply.status);
    assert_served(server.addr).await;
}

/// A request head that never ends, long enough that sending it a byte at a time takes
/// many times any header timeout here.
fn endless_head() -> Vec<u8> {
    let mut head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".to_vec();
    head.extend(std::iter::repeat_n(b'a', 100));
    head
}

/// Opens `count` connections that each send [`endless_head`] a byte every `every`. Once
/// every one has connected and sent its first byte, the tasks sending them: each ends
/// `true` when the server closes its connection before the head is all sent (cut off),
/// `false` when the whole head went out.
async fn dripping(
    addr: SocketAddr,
    count: usize,
    every: Duration,
) -> Vec<tokio::task::JoinHandle<bool>> {
    let dripping = Counter::default();
    let mut tasks = Vec::new();
    for _ in 0..count {
        let dripping = dripping.clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.expect("a connection");
            let head = endless_head();
            let mut buf = [0u8; 512];
            for (sent, byte) in head.iter().enumerate() {
                if stream.write_all(&[*byte]).await.is_err() {
                    return true;
                }
                if sent == 0 {
                    dripping.add();
                }
                // The attacker's pace: the next byte after `every`, unless the server
                // closes the connection meanwhile (the read ends, at EOF or a reset).
                if let Ok(Ok(0) | Err(_)) = tokio::time::timeout(every, stream.read(&mut buf)).await
                {
                    return true;
                }
            }
            false
        }));
    }
    dripping
        .reaches(count, "every slow connection connected and began its head")
        .await;
    tasks
}

#[tokio::test]
async fn slow_header_connections_are_closed_and_a_new_client_is_served() {
    let server =
        serve(HttpOptions::default().with_header_read_timeout(Duration::from_millis(500))).await;
    let addr = server.addr;
    let attack = dripping(addr, 100, Duration::from_millis(100)).await;
    // Served with the attack's connections open.
    assert_served(addr).await;
    let mut cut_off = 0;
    for connection in attack {
        cut_off += usize::from(connection.await.unwrap());
    }
    assert_eq!(
        cut_off, 100,
        "slow-header connections were let send their whole endless head"
    );
}

/// Opens a connection and sends nothing; the task ends when the server closes it.
async fn idle_connection(addr: SocketAddr) -> tokio::task::JoinHandle<()> {
    let mut stream = TcpStream::connect(addr).await.expect("a connection");
    tokio::spawn(async move {
        let mut buf = [0u8; 64];
        while let Ok(1..) = stream.read(&mut buf).await {}
    })
}

#[tokio::test]
async fn idle_connections_are_closed_and_a_new_client_is_served() {
    let server =
        serve(HttpOptions::default().with_header_read_timeout(Duration::from_millis(500))).await;
    // A server that waits an hour for a request's head, and an idle connection to it,
    // opened before the others.
    let patient =
        serve(HttpOptions::default().with_header_read_timeout(Duration::from_secs(3600))).await;
    let older = TcpStream::connect(patient.addr).await.unwrap();
    let mut idle = Vec::new();
    for _ in 0..100 {
        idle.push(idle_connection(server.addr).await);
    }
    within(
        "the server closed 100 idle connections",
        futures::future::join_all(idle),
    )
    .await;
    // The older connection, to a server with a longer timeout, is open: this server's
    // own 500 ms timeout closed its connections, not a limit every server has.
    let mut buf = [0u8; 64];
    match older.try_read(&mut buf) {
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("an idle connection was closed before its hour was up: {other:?}"),
    }
    assert_served(server.addr).await;
}

#[tokio::test]
async fn sessions_beyond_the_cap_get_503_with_retry_after_until_one_closes() {
    let server = serve(HttpOptions::default().with_max_sessions(3)).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let (reply, session) = open_session(server.addr, &[]).await.unwrap();
        assert_eq!(reply.status, 200);
        sessions.push(session.expect("a session id"));
    }
    let (reply, session) = open_session(server.addr, &[]).await.unwrap();
    assert_eq!(reply.status, 503, "{reply:?}");
    assert!(reply.header("retry-after").is_some(), "{reply:?}");
    assert!(session.is_none());
    // The open sessions go on working.
    let reply = call(
        server.addr,
        Some(&sessions[0]),
        &[],
        "add",
        json!({"a": 1, "b": 1}),
    )
    .await
    .unwrap();
    assert!(reply.answer().is_some(), "{reply:?}");
    // A session that ends makes room.
    let ended = send(
        server.addr,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", &sessions[0])],
        b"",
    )
    .await
    .unwrap();
    assert!(ended.status < 300, "{ended:?}");
    // The session was closed before its DELETE was answered.
    let (reply, session) = open_session(server.addr, &[]).await.unwrap();
    assert_eq!(
        reply.status, 200,
        "no room after a session ended: {reply:?}"
    );
    assert!(session.is_some(), "no session opened: {reply:?}");
}

#[tokio::test]
async fn requests_beyond_the_cap_get_503_with_retry_after_then_are_served() {
    let (server, hold) =
        serve_holding(HttpOptions::default().with_max_concurrent_requests(2)).await;
    let addr = server.addr;
    let (_, session) = open_session(addr, &[]).await.unwrap();
    let session = session.unwrap();
    let held = || {
        let session = session.clone();
        tokio::spawn(async move {
            call(addr, Some(&session), &[], "hold", json!({}))
                .await
                .unwrap()
        })
    };
    let (first, second) = (held(), held());
    // Both requests are being answered: their calls run.
    hold.started.reaches(2, "both held calls started").await;
    let refused = call(addr, Some(&session), &[], "add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(
        refused.status, 503,
        "a third request was let in past the cap of two: {refused:?}"
    );
    assert_eq!(refused.header("retry-after"), Some("1"), "{refused:?}");
    hold.finish.add_permits(2);
    for held in [first, second] {
        let reply = held.await.unwrap();
        assert_eq!(answered_text(&reply), "finished", "{reply:?}");
    }
    let reply = call(addr, Some(&session), &[], "add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(
        answered_text(&reply),
        "2",
        "not served once the requests ahead were answered: {reply:?}"
    );
}

#[tokio::test]
async fn a_request_past_its_deadline_ends_and_others_are_served() {
    let options = HttpOptions::default().with_request_timeout(Duration::from_millis(500));
    // Without sessions the answer is a JSON body, so the deadline is a status. The held
    // call never finishes: only the deadline ends its request.
    let (server, hold) = serve_holding(options.clone().stateless(true)).await;
    let reply = call(server.addr, None, &[], "hold", json!({}))
        .await
        .unwrap();
    assert_eq!(
        reply.status, 503,
        "not the deadline's answer to a call that never finishes: {reply:?}"
    );
    hold.stopped
        .reaches(
            1,
            "the stateless call cut off by its request's deadline was stopped",
        )
        .await;
    let reply = call(server.addr, None, &[], "add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(answered_text(&reply), "2", "{reply:?}");

    // With sessions the answer streams: the stream ends at the deadline, unanswered.
    let (server, hold) = serve_holding(options).await;
    let (_, session) = open_session(server.addr, &[]).await.unwrap();
    let reply = call(server.addr, session.as_deref(), &[], "hold", json!({}))
        .await
        .unwrap();
    assert!(
        reply.answer().is_none(),
        "a call that never finishes was answered: {reply:?}"
    );
    hold.stopped
        .reaches(
            1,
            "the session's call cut off by its request's deadline was stopped",
        )
        .await;
    assert_served(server.addr).await;
}

#[tokio::test]
async fn a_stateless_server_answers_without_a_session() {
    let server = serve(HttpOptions::default().stateless(true)).await;
    let reply = post(
        server.addr,
        None,
        &[],
        &raw_http::rpc(3, "tools/list", json!({})),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.header("mcp-session-id").is_none());
    let tools = reply.answer().unwrap()["result"]["tools"].clone();
    assert_eq!(tools.as_array().map(Vec::len), Some(2), "{tools}");
}

#[tokio::test]
async fn shutdown_stops_accepting_and_lets_calls_in_flight_finish() {
    let hold = Hold::default();
    // A grace period far longer than this test may take: the server must end once its
    // last call is answered, not when the grace period is up.
    let http = McpHttpServer::bind(McpServer::new(tools(&hold)), "127.0.0.1:0")
        .await
        .unwrap()
        .with_shutdown_grace(Duration::from_secs(3600));
    let addr = http.local_addr();
    let stop = http.shutdown_token();
    let running = tokio::spawn(http.run());
    let (_, session) = open_session(addr, &[]).await.unwrap();
    let in_flight = tokio::spawn(async move {
        call(addr, session.as_deref(), &[], "hold", json!({}))
            .await
            .unwrap()
    });
    hold.started.reaches(1, "the call started").await;
    stop.cancel();
    // The server accepts no one new while the call is in flight...
    eventually("the server stopped accepting connections", async || {
        TcpStream::connect(addr).await.is_err()
    })
    .await;
    hold.finish.add_permits(1);
    // ... the call in flight is answered...
    let reply = in_flight.await.unwrap();
    assert_eq!(
        answered_text(&reply),
        "finished",
        "the call in flight was not let finish: {reply:?}"
    );
    // ... and the server ends once it has.
    within("the server ended after its last call", running)
        .await
        .unwrap()
        .unwrap();
    assert!(
        open_session(addr, &[]).await.is_err(),
        "a stopped server accepted a connection"
    );
}

//! Each limit of the HTTP endpoint attacked over loopback TCP: the attack gets a clear
//! status (or its connections closed), and the server goes on serving other clients.

#[path = "support/raw_http.rs"]
mod raw_http;

use raw_http::{Running, call, open_session, post, send, serve_on_loopback};
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwright_core::{tool, tools};
use toolwright_mcp::{HttpOptions, McpHttpServer, McpServer};

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Sleeps for `ms` milliseconds.
#[tool(timeout = "30s")]
async fn sleep_ms(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "slept".to_owned()
}

async fn serve(options: HttpOptions) -> Running {
    serve_on_loopback(McpServer::new(tools![add, sleep_ms]), options).await
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

/// Holds `count` connections that each send part of a request head, one byte every
/// `every`, until the server closes them or `patience` passes. How many were closed.
async fn slow_connections(
    addr: SocketAddr,
    count: usize,
    every: Option<Duration>,
    patience: Duration,
) -> usize {
    let mut tasks = Vec::new();
    for _ in 0..count {
        tasks.push(tokio::spawn(async move {
            let Ok(mut stream) = TcpStream::connect(addr).await else {
                return false;
            };
            let started = Instant::now();
            let drip =
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
            let mut sent = 0;
            let mut buf = [0u8; 512];
            while started.elapsed() < patience {
                if let Some(every) = every {
                    if sent < drip.len() && stream.write_all(&drip[sent..=sent]).await.is_err() {
                        return true;
                    }
                    sent += 1;
                    // Closed: the read ends (EOF or reset) instead of timing out.
                    match tokio::time::timeout(every, stream.read(&mut buf)).await {
                        Ok(Ok(0) | Err(_)) => return true,
                        Ok(Ok(_)) => {}
                        Err(_) => {}
                    }
                } else {
                    match tokio::time::timeout(patience, stream.read(&mut buf)).await {
                        Ok(Ok(0) | Err(_)) => return true,
                        Ok(Ok(_)) => {}
                        Err(_) => return false,
                    }
                }
            }
            false
        }));
    }
    let mut closed = 0;
    for task in tasks {
        closed += usize::from(task.await.unwrap_or(false));
    }
    closed
}

#[tokio::test]
async fn slow_header_connections_are_closed_and_a_new_client_is_served() {
    let server =
        serve(HttpOptions::default().with_header_read_timeout(Duration::from_millis(500))).await;
    let addr = server.addr;
    let attack = tokio::spawn(slow_connections(
        addr,
        100,
        Some(Duration::from_millis(100)),
        Duration::from_secs(5),
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Served while the attack is under way.
    assert_served(addr).await;
    let closed = attack.await.unwrap();
    assert_eq!(closed, 100, "slowloris connections left open");
}

#[tokio::test]
async fn idle_connections_are_closed_and_a_new_client_is_served() {
    let server =
        serve(HttpOptions::default().with_header_read_timeout(Duration::from_millis(500))).await;
    let started = Instant::now();
    let closed = slow_connections(server.addr, 100, None, Duration::from_secs(5)).await;
    assert_eq!(closed, 100, "idle connections left open");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
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
    let mut served = false;
    for _ in 0..50 {
        let (reply, _) = open_session(server.addr, &[]).await.unwrap();
        if reply.status == 200 {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(served, "no room after a session ended");
}

#[tokio::test]
async fn requests_beyond_the_cap_get_503_with_retry_after_then_are_served() {
    let server = serve(HttpOptions::default().with_max_concurrent_requests(2)).await;
    let addr = server.addr;
    let (_, session) = open_session(addr, &[]).await.unwrap();
    let session = session.unwrap();
    let slow = |session: String| {
        tokio::spawn(async move {
            call(addr, Some(&session), &[], "sleep_ms", json!({"ms": 1500}))
                .await
                .unwrap()
        })
    };
    let (first, second) = (slow(session.clone()), slow(session.clone()));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let refused = call(addr, Some(&session), &[], "add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("1"));
    for held in [first, second] {
        let reply = held.await.unwrap();
        assert!(reply.answer().is_some(), "{reply:?}");
    }
    let reply = call(addr, Some(&session), &[], "add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert!(reply.answer().is_some(), "{reply:?}");
}

#[tokio::test]
async fn a_request_past_its_deadline_ends_and_others_are_served() {
    let options = HttpOptions::default().with_request_timeout(Duration::from_millis(500));
    // Without sessions the answer is a JSON body, so the deadline is a status.
    let server = serve(options.clone().stateless(true)).await;
    let started = Instant::now();
    let reply = call(server.addr, None, &[], "sleep_ms", json!({"ms": 10_000}))
        .await
        .unwrap();
    assert_eq!(reply.status, 503, "{reply:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let reply = call(server.addr, None, &[], "add", json!({"a": 1, "b": 1}))
        .await
        .unwrap();
    assert!(reply.answer().is_some(), "{reply:?}");

    // With sessions the answer streams: the stream ends at the deadline, unanswered.
    let server = serve(options).await;
    let (_, session) = open_session(server.addr, &[]).await.unwrap();
    let started = Instant::now();
    let reply = call(
        server.addr,
        session.as_deref(),
        &[],
        "sleep_ms",
        json!({"ms": 10_000}),
    )
    .await
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(reply.answer().is_none(), "{reply:?}");
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
    let http = McpHttpServer::bind(McpServer::new(tools![add, sleep_ms]), "127.0.0.1:0")
        .await
        .unwrap()
        .with_shutdown_grace(Duration::from_secs(10));
    let addr = http.local_addr();
    let stop = http.shutdown_token();
    let running = tokio::spawn(http.run());
    let (_, session) = open_session(addr, &[]).await.unwrap();
    let in_flight = tokio::spawn(async move {
        call(
            addr,
            session.as_deref(),
            &[],
            "sleep_ms",
            json!({"ms": 800}),
        )
        .await
        .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    stop.cancel();
    // The call in flight is answered...
    let reply = in_flight.await.unwrap();
    let answer = reply.answer().expect("the call in flight was answered");
    assert_eq!(answer["result"]["content"][0]["text"], "slept", "{answer}");
    // ... the server ends once it has, well before its grace period is up...
    tokio::time::timeout(Duration::from_secs(5), running)
        .await
        .expect("the server ended after its last call")
        .unwrap()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    // ... and accepts no one new.
    assert!(open_session(addr, &[]).await.is_err());
}

//! The HTTP endpoint's sessions, attacked and counted over loopback TCP: a session ends
//! for every path at once (the fast path that answers plain calls as JSON, rmcp's event
//! streams, the standalone stream), belongs to the principal that opened it, and the
//! sessions cap counts exactly the sessions alive.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_http.rs"]
mod raw_http;

use events::eventually;
use raw_http::{
    Reply, Running, call, initialize_request, open_session, post, rpc, send, serve_on_loopback,
};
use serde_json::json;
use std::net::SocketAddr;
use std::time::Duration;
use toolwright_core::{Principal, tool, tools};
use toolwright_mcp::{HttpAuth, HttpOptions, McpServer, StaticTokens};

/// Adds two numbers: a tool the fast path answers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

async fn serve(options: HttpOptions) -> Running {
    serve_on_loopback(McpServer::new(tools![add]), options).await
}

fn with_tokens(options: HttpOptions) -> HttpOptions {
    options.with_auth(HttpAuth::new(
        StaticTokens::new()
            .with_token("alice-token", Principal::new("alice"))
            .with_token("bob-token", Principal::new("bob")),
    ))
}

const ALICE: (&str, &str) = ("Authorization", "Bearer alice-token");
const BOB: (&str, &str) = ("Authorization", "Bearer bob-token");

/// Answered by the fast path: plain JSON, not rmcp's event stream.
fn is_json(reply: &Reply) -> bool {
    reply
        .header("content-type")
        .is_some_and(|kind| kind.starts_with("application/json"))
}

/// Opens a session as `extra` say and returns its id; fails the test if it is refused.
async fn open(addr: SocketAddr, extra: &[(&str, &str)]) -> String {
    let (reply, session) = open_session(addr, extra).await.unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    session.expect("a session id")
}

/// The status of an `initialize` without a session: 200 when a session opens.
async fn try_open(addr: SocketAddr) -> (u16, Option<String>) {
    let (reply, session) = open_session(addr, &[]).await.unwrap();
    (reply.status, session)
}

async fn delete(addr: SocketAddr, session: &str, extra: &[(&str, &str)]) -> Reply {
    let mut headers = vec![("Mcp-Session-Id", session)];
    headers.extend_from_slice(extra);
    send(addr, "DELETE", "/mcp", &headers, b"").await.unwrap()
}

/// `add` in `session`: 3 on success.
async fn add_in(addr: SocketAddr, session: &str, extra: &[(&str, &str)]) -> Reply {
    call(addr, Some(session), extra, "add", json!({"a": 1, "b": 2}))
        .await
        .unwrap()
}

/// `tools/list` in `session`, which only rmcp's path answers.
async fn list_in(addr: SocketAddr, session: &str, extra: &[(&str, &str)]) -> Reply {
    post(addr, Some(session), extra, &rpc(7, "tools/list", json!({})))
        .await
        .unwrap()
}

/// The status of a GET of the session's standalone event stream, for a stream that is
/// to be refused (an opened one would be read until the session ends).
async fn refused_stream(addr: SocketAddr, session: &str, extra: &[(&str, &str)]) -> u16 {
    let mut headers = vec![("Accept", "text/event-stream"), ("Mcp-Session-Id", session)];
    headers.extend_from_slice(extra);
    send(addr, "GET", "/mcp", &headers, b"")
        .await
        .unwrap()
        .status
}

/// Every path refuses `session` with 404: the fast path's call, rmcp's request, the
/// standalone stream.
async fn assert_gone(addr: SocketAddr, session: &str, extra: &[(&str, &str)]) {
    let fast = add_in(addr, session, extra).await;
    assert_eq!(fast.status, 404, "fast-path call: {fast:?}");
    let listed = list_in(addr, session, extra).await;
    assert_eq!(listed.status, 404, "rmcp request: {listed:?}");
    assert_eq!(
        refused_stream(addr, session, extra).await,
        404,
        "standalone stream"
    );
}

#[tokio::test]
async fn a_deleted_session_is_gone_for_every_path() {
    let server = serve(HttpOptions::default()).await;
    let session = open(server.addr, &[]).await;
    // Alive on both paths first: the fast path answers the call as JSON, rmcp the list.
    let fast = add_in(server.addr, &session, &[]).await;
    assert!(is_json(&fast), "{fast:?}");
    assert_eq!(fast.answer().unwrap()["result"]["content"][0]["text"], "3");
    let listed = list_in(server.addr, &session, &[]).await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(!is_json(&listed), "{listed:?}");

    let deleted = delete(server.addr, &session, &[]).await;
    assert!(deleted.status < 300, "{deleted:?}");
    assert_gone(server.addr, &session, &[]).await;
    // The other sessions live on.
    let other = open(server.addr, &[]).await;
    assert!(is_json(&add_in(server.addr, &other, &[]).await));
}

#[tokio::test]
async fn another_principal_can_neither_use_nor_delete_a_session() {
    let server = serve(with_tokens(HttpOptions::default())).await;
    let session = open(server.addr, &[ALICE]).await;
    for path in [
        "fast-path call",
        "rmcp request",
        "standalone stream",
        "delete",
    ] {
        let status = match path {
            "fast-path call" => add_in(server.addr, &session, &[BOB]).await.status,
            "rmcp request" => list_in(server.addr, &session, &[BOB]).await.status,
            "standalone stream" => refused_stream(server.addr, &session, &[BOB]).await,
            _ => delete(server.addr, &session, &[BOB]).await.status,
        };
        assert_eq!(status, 401, "bob's {path}");
    }
    // Nothing bob sent ended or took alice's session.
    let fast = add_in(server.addr, &session, &[ALICE]).await;
    assert!(is_json(&fast), "{fast:?}");
    assert_eq!(list_in(server.addr, &session, &[ALICE]).await.status, 200);
    // Bob's own session is his alone, and alice's deletion ends hers only.
    let bobs = open(server.addr, &[BOB]).await;
    assert_eq!(add_in(server.addr, &bobs, &[ALICE]).await.status, 401);
    assert!(delete(server.addr, &session, &[ALICE]).await.status < 300);
    assert_gone(server.addr, &session, &[ALICE]).await;
    assert!(is_json(&add_in(server.addr, &bobs, &[BOB]).await));
}

#[tokio::test]
async fn the_sessions_cap_counts_exactly_the_live_sessions() {
    const CAP: usize = 3;
    let server = serve(HttpOptions::default().with_max_sessions(CAP)).await;
    let mut live = Vec::new();
    for _ in 0..CAP {
        live.push(open(server.addr, &[]).await);
    }
    let (status, _) = try_open(server.addr).await;
    assert_eq!(status, 503, "one over the cap");
    // Each session deleted makes room for exactly one more, however many times: a
    // count that drifted either way would refuse one too early or admit one too many.
    for round in 0..10 {
        let ended = live.remove(round % live.len());
        assert!(delete(server.addr, &ended, &[]).await.status < 300);
        live.push(open(server.addr, &[]).await);
        let (status, _) = try_open(server.addr).await;
        assert_eq!(status, 503, "round {round}: one over the cap");
    }
    for session in live.drain(..) {
        assert!(delete(server.addr, &session, &[]).await.status < 300);
    }
    // Requests that open no session hold no place once answered: an `initialize` rmcp
    // refuses (it must accept event streams too), a request of an unknown session.
    let json_only = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    ];
    for _ in 0..=CAP {
        let refused = send(
            server.addr,
            "POST",
            "/mcp",
            &json_only,
            &initialize_request(),
        )
        .await
        .unwrap();
        assert_eq!(refused.status, 406, "{refused:?}");
        assert_eq!(
            list_in(server.addr, "no-such-session", &[]).await.status,
            404
        );
    }
    for _ in 0..CAP {
        live.push(open(server.addr, &[]).await);
    }
    assert_eq!(try_open(server.addr).await.0, 503);
}

#[tokio::test]
async fn a_burst_of_openings_gets_exactly_the_places_left() {
    const CAP: usize = 4;
    let server = serve(HttpOptions::default().with_max_sessions(CAP)).await;
    let first = open(server.addr, &[]).await;
    let attempts: Vec<_> = (0..12)
        .map(|_| tokio::spawn(try_open(server.addr)))
        .collect();
    let mut opened = 0;
    for attempt in attempts {
        match attempt.await.unwrap() {
            (200, Some(_)) => opened += 1,
            (503, None) => {}
            other => panic!("unexpected answer {other:?}"),
        }
    }
    assert_eq!(opened, CAP - 1, "the places left after the first session");
    assert!(delete(server.addr, &first, &[]).await.status < 300);
    assert_eq!(try_open(server.addr).await.0, 200);
}

#[tokio::test]
async fn an_idle_expired_session_frees_its_place_and_is_gone() {
    // One place, so the place coming free says which session expired.
    let options = HttpOptions::default()
        .with_max_sessions(1)
        .with_session_idle_timeout(Duration::from_millis(200));
    let server = serve(options).await;
    let expiring = open(server.addr, &[]).await;
    // Full until the session expires; then its place is free again. (A refused
    // `initialize` names no session, so it does not keep the session alive.)
    eventually("the idle session expires and frees its place", async || {
        try_open(server.addr).await.0 == 200
    })
    .await;
    assert_gone(server.addr, &expiring, &[]).await;
}

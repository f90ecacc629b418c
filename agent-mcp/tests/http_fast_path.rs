//! Plain `tools/call` POSTs of a session are answered by the endpoint itself, as JSON,
//! with the same answer rmcp's path gives over an event stream; calls that may need
//! their client (context, state, progress, approval) still go through rmcp. Sessions
//! stay usable while fast calls keep coming, expire when idle, and end for the fast path
//! as for rmcp.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_http.rs"]
mod raw_http;

use events::{eventually, within};
use raw_http::{
    MCP_HEADERS, Reply, Running, call, open_session, post, rpc, send, serve_on_loopback,
    standalone_stream,
};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use toolwright_core::{Principal, Progress, State, ToolContext, ToolError, tool, tools};
use toolwright_mcp::{HttpAuth, HttpOptions, McpPeer, McpServer, StaticTokens};

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Always fails.
#[tool]
async fn fail() -> Result<String, ToolError> {
    Err(ToolError::execution("the disk is full"))
}

/// Reports its progress twice.
#[tool]
async fn steps(progress: Progress) -> &'static str {
    progress.emit(json!({"progress": 1, "total": 2})).ok();
    progress.emit(json!({"progress": 2, "total": 2})).ok();
    "done"
}

/// Deletes everything; every call needs a person's approval.
#[tool(require_approval)]
async fn purge() -> &'static str {
    "purged"
}

/// Something only administrators may do.
#[tool]
async fn admin_reset() -> &'static str {
    "reset"
}

/// Names the caller's session.
#[tool]
async fn whose(ctx: &ToolContext) -> String {
    format!("session {}", !ctx.session_id().is_empty())
}

/// Whether the client can be asked questions.
#[tool]
async fn can_ask(peer: State<McpPeer>) -> bool {
    peer.client_supports("elicitation")
}

async fn serve(options: HttpOptions) -> Running {
    let server = McpServer::new(tools![add, fail, steps, purge, admin_reset, whose, can_ask]);
    serve_on_loopback(server, options).await
}

async fn session(addr: SocketAddr, extra: &[(&str, &str)]) -> String {
    let (reply, session) = open_session(addr, extra).await.unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    session.expect("a session id")
}

/// Headers that send a request down rmcp's path: a browser's (allowed) Origin, which
/// the endpoint leaves to rmcp to check.
const THROUGH_RMCP: (&str, &str) = ("Origin", "http://localhost:1234");

fn is_json(reply: &Reply) -> bool {
    reply
        .header("content-type")
        .is_some_and(|kind| kind.starts_with("application/json"))
}

fn is_event_stream(reply: &Reply) -> bool {
    reply
        .header("content-type")
        .is_some_and(|kind| kind.starts_with("text/event-stream"))
}

/// The same request (same id) on the fast path and on rmcp's path, in one session:
/// the fast one answered as JSON, rmcp's as an event stream, with equal answers.
async fn both_paths(
    addr: SocketAddr,
    session: &str,
    extra: &[(&str, &str)],
    params: Value,
) -> (Value, Value) {
    let body = rpc(41, "tools/call", params);
    let fast = post(addr, Some(session), extra, &body).await.unwrap();
    let mut through_rmcp = extra.to_vec();
    through_rmcp.push(THROUGH_RMCP);
    let slow = post(addr, Some(session), &through_rmcp, &body)
        .await
        .unwrap();
    assert_eq!(fast.status, 200, "{fast:?}");
    assert_eq!(slow.status, 200, "{slow:?}");
    assert!(is_event_stream(&slow), "{slow:?}");
    (
        fast.answer().expect("a fast answer"),
        slow.answer().expect("an answer from rmcp"),
    )
}

#[tokio::test]
async fn fast_answers_equal_rmcps_for_success_tool_error_and_invalid_arguments() {
    let server = serve(HttpOptions::default()).await;
    let session = session(server.addr, &[]).await;
    for params in [
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        json!({"name": "fail", "arguments": {}}),
        json!({"name": "add", "arguments": {"a": "two"}}),
        json!({"name": "add"}),
        // Metadata that does not change the lifecycle still takes the fast path.
        json!({"name": "add", "arguments": {"a": 1, "b": 1}, "_meta": {"note": "x"}}),
    ] {
        let body = rpc(41, "tools/call", params.clone());
        let fast = post(server.addr, Some(&session), &[], &body).await.unwrap();
        assert!(is_json(&fast), "not answered on the fast path: {fast:?}");
        let (fast, slow) = both_paths(server.addr, &session, &[], params.clone()).await;
        assert_eq!(fast, slow, "{params}");
    }
    let (fast, _) = both_paths(
        server.addr,
        &session,
        &[],
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
    .await;
    assert_eq!(fast["id"], 41);
    assert_eq!(fast["result"]["content"][0]["text"], "5", "{fast}");
    let (fast, _) = both_paths(server.addr, &session, &[], json!({"name": "fail"})).await;
    assert_eq!(fast["result"]["isError"], true, "{fast}");
}

#[tokio::test]
async fn an_unknown_tool_gets_rmcps_invalid_params_error() {
    let server = serve(HttpOptions::default()).await;
    let session = session(server.addr, &[]).await;
    let (fast, slow) = both_paths(server.addr, &session, &[], json!({"name": "nope"})).await;
    assert_eq!(fast, slow);
    assert_eq!(fast["error"]["code"], -32602, "{fast}");
}

#[tokio::test]
async fn calls_that_may_need_their_client_still_answer_on_an_event_stream() {
    let server = serve(HttpOptions::default()).await;
    let session = session(server.addr, &[]).await;
    // Progress reaches the client on the call's stream.
    let body = rpc(
        7,
        "tools/call",
        json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}}),
    );
    let reply = post(server.addr, Some(&session), &[], &body).await.unwrap();
    assert!(is_event_stream(&reply), "{reply:?}");
    let progress: Vec<Value> = reply
        .messages()
        .into_iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, [json!(1.0), json!(2.0)], "{reply:?}");
    assert_eq!(
        reply.answer().unwrap()["result"]["content"][0]["text"],
        "done"
    );
    // Tools reading their context or state answer on a stream, where their requests
    // to the client can go.
    for tool in ["whose", "can_ask"] {
        let reply = call(server.addr, Some(&session), &[], tool, json!({}))
            .await
            .unwrap();
        assert!(is_event_stream(&reply), "{tool}: {reply:?}");
        assert_eq!(
            reply.answer().unwrap()["result"]["isError"],
            false,
            "{reply:?}"
        );
    }
    // A call needing approval asks the client's user, through rmcp: this client cannot
    // be asked (no elicitation capability), so nothing runs.
    let reply = call(server.addr, Some(&session), &[], "purge", json!({}))
        .await
        .unwrap();
    assert!(is_event_stream(&reply), "{reply:?}");
    let answer = reply.answer().unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        !answer.to_string().contains("purged"),
        "the call ran without approval: {answer}"
    );
}

#[tokio::test]
async fn unknown_and_deleted_sessions_get_404_as_from_rmcp() {
    let server = serve(HttpOptions::default()).await;
    let add = json!({"a": 1, "b": 1});
    let unknown = call(
        server.addr,
        Some("no-such-session"),
        &[],
        "add",
        add.clone(),
    )
    .await
    .unwrap();
    assert_eq!(unknown.status, 404, "{unknown:?}");

    let session = session(server.addr, &[]).await;
    let reply = call(server.addr, Some(&session), &[], "add", add.clone())
        .await
        .unwrap();
    assert!(is_json(&reply), "{reply:?}");
    let headers = [("Mcp-Session-Id", session.as_str())];
    let deleted = send(server.addr, "DELETE", "/mcp", &headers, b"")
        .await
        .unwrap();
    assert!(deleted.status < 300, "{deleted:?}");
    let after = call(server.addr, Some(&session), &[], "add", add.clone())
        .await
        .unwrap();
    let through_rmcp = call(server.addr, Some(&session), &[THROUGH_RMCP], "add", add)
        .await
        .unwrap();
    assert_eq!(after.status, 404, "{after:?}");
    assert_eq!(
        (after.status, after.body),
        (through_rmcp.status, through_rmcp.body)
    );
}

/// `session`'s standalone event stream, open: the task reading it ends when the server
/// closes the session.
async fn closing_of(addr: SocketAddr, session: &str) -> tokio::task::JoinHandle<()> {
    let (status, reading) = standalone_stream(addr, session).await.unwrap();
    assert_eq!(status, 200, "no standalone stream for session {session}");
    reading
}

#[tokio::test]
async fn fast_calls_keep_a_session_alive_and_it_expires_once_idle() {
    let idle = Duration::from_millis(800);
    let server = serve(HttpOptions::default().with_session_idle_timeout(idle)).await;
    let add = json!({"a": 1, "b": 2});
    let fast_call = async |session: &str| {
        let reply = call(server.addr, Some(session), &[], "add", add.clone())
            .await
            .unwrap();
        assert_eq!(
            reply.status, 200,
            "the session expired while in use: {reply:?}"
        );
        assert!(is_json(&reply), "not answered on the fast path: {reply:?}");
    };
    let in_use = session(server.addr, &[]).await;
    let in_use_closed = closing_of(server.addr, &in_use).await;
    // Sessions opened after it and left unused expire, one after another; this one,
    // opened first, sees fast calls only meanwhile.
    for unused in ["first", "second"] {
        let other = session(server.addr, &[]).await;
        let other_closed = closing_of(server.addr, &other).await;
        let what = format!("the {unused} unused session expired");
        within(&what, async {
            while !other_closed.is_finished() {
                fast_call(&in_use).await;
            }
        })
        .await;
    }
    // The sweep that closed the first unused session had ended before the second was
    // opened: had the fast calls not kept this session in use, that sweep would have
    // closed it too.
    assert!(
        !in_use_closed.is_finished(),
        "a session in use by fast calls was closed as idle"
    );
    fast_call(&in_use).await;
    // Unused for the idle timeout, it is closed, for both paths.
    within("the session, no longer used, expired", in_use_closed)
        .await
        .unwrap();
    let reply = call(server.addr, Some(&in_use), &[], "add", add.clone())
        .await
        .unwrap();
    assert_eq!(reply.status, 404, "an idle session was kept: {reply:?}");
    let reply = call(server.addr, Some(&in_use), &[THROUGH_RMCP], "add", add)
        .await
        .unwrap();
    assert_eq!(
        reply.status, 404,
        "an idle session was kept for rmcp's path: {reply:?}"
    );
}

fn auth() -> HttpAuth {
    HttpAuth::new(
        StaticTokens::new()
            .with_token("alice-token", Principal::new("alice"))
            .with_token("root-token", Principal::new("root").with_scopes(["admin"])),
    )
    .require_scopes("admin_reset", ["admin"])
}

#[tokio::test]
async fn with_authentication_tokens_owners_and_scopes_hold_on_the_fast_path() {
    let server = serve(HttpOptions::default().with_auth(auth())).await;
    let alice = [("Authorization", "Bearer alice-token")];
    let root = [("Authorization", "Bearer root-token")];
    let session = session(server.addr, &alice).await;
    let add = json!({"a": 2, "b": 2});

    let ok = call(server.addr, Some(&session), &alice, "add", add.clone())
        .await
        .unwrap();
    assert!(is_json(&ok), "{ok:?}");
    assert_eq!(ok.answer().unwrap()["result"]["content"][0]["text"], "4");

    // No token, a wrong one, another principal's: refused before any call.
    let wrong = [("Authorization", "Bearer forged")];
    for extra in [&[][..], &wrong[..], &root[..]] {
        let refused = call(server.addr, Some(&session), extra, "add", add.clone())
            .await
            .unwrap();
        assert_eq!(refused.status, 401, "{extra:?}: {refused:?}");
    }

    // A tool alice lacks the scope for does not exist for her, on either path.
    let (fast, slow) = both_paths(
        server.addr,
        &session,
        &alice,
        json!({"name": "admin_reset"}),
    )
    .await;
    assert_eq!(fast, slow);
    assert_eq!(fast["error"]["code"], -32602, "{fast}");
    assert!(!fast.to_string().contains("admin_reset\","), "{fast}");

    // The owner of the scope runs it on the fast path.
    let root_session = self::session(server.addr, &root).await;
    let reply = call(
        server.addr,
        Some(&root_session),
        &root,
        "admin_reset",
        json!({}),
    )
    .await
    .unwrap();
    assert!(is_json(&reply), "{reply:?}");
    assert_eq!(
        reply.answer().unwrap()["result"]["content"][0]["text"],
        "reset"
    );
}

#[tokio::test]
async fn requests_the_fast_path_does_not_check_go_to_rmcp() {
    let server = serve(HttpOptions::default()).await;
    let session = session(server.addr, &[]).await;
    let body = rpc(
        9,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    // A host not allowed, and a disallowed browser origin, are refused as rmcp does.
    let evil_host = [("Host", "evil.example.com")];
    let refused = post(server.addr, Some(&session), &evil_host, &body)
        .await
        .unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    let evil_origin = [("Origin", "https://evil.example.com")];
    let refused = post(server.addr, Some(&session), &evil_origin, &body)
        .await
        .unwrap();
    assert_eq!(refused.status, 403, "{refused:?}");
    // A client that does not accept event streams is refused as rmcp refuses it.
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
        ("Mcp-Session-Id", session.as_str()),
    ];
    let refused = send(server.addr, "POST", "/mcp", &headers, &body)
        .await
        .unwrap();
    assert_eq!(refused.status, 406, "{refused:?}");
    // A batch is rmcp's.
    let batch = format!("[{}]", String::from_utf8(body.clone()).unwrap());
    let reply = post(server.addr, Some(&session), &[], batch.as_bytes())
        .await
        .unwrap();
    assert!(!is_json(&reply) || reply.status != 200, "{reply:?}");
    // A request that also names a result is not a plain request: rmcp's answer.
    let odd = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 1}}, "result": {}
    })
    .to_string();
    let fast = post(server.addr, Some(&session), &[], odd.as_bytes())
        .await
        .unwrap();
    let slow = post(server.addr, Some(&session), &[THROUGH_RMCP], odd.as_bytes())
        .await
        .unwrap();
    assert!(!is_json(&fast) || fast.status != 200, "{fast:?}");
    assert_eq!(
        (fast.status, fast.messages()),
        (slow.status, slow.messages())
    );
    // The protocol version header is checked: an unknown one is refused.
    let bad_version = [("Mcp-Protocol-Version", "1999-01-01")];
    let refused = post(server.addr, Some(&session), &bad_version, &body)
        .await
        .unwrap();
    assert_eq!(refused.status, 400, "{refused:?}");
    let _ = MCP_HEADERS;
}

#[tokio::test]
async fn shutting_down_ends_fast_calls_with_the_sessions() {
    let cancel = CancellationToken::new();
    let mut options = HttpOptions::default();
    options.cancel = cancel.clone();
    let server = serve(options).await;
    let session = session(server.addr, &[]).await;
    let ok = call(
        server.addr,
        Some(&session),
        &[],
        "add",
        json!({"a": 1, "b": 1}),
    )
    .await
    .unwrap();
    assert!(is_json(&ok), "{ok:?}");
    cancel.cancel();
    // The sessions end as the server's service for each winds down: until then a call
    // may still be answered, after it every call of the session is a 404.
    let ended = async || {
        let after = call(
            server.addr,
            Some(&session),
            &[],
            "add",
            json!({"a": 1, "b": 1}),
        )
        .await
        .unwrap();
        assert!(
            after.status == 404 || is_json(&after),
            "neither answered nor ended: {after:?}"
        );
        after.status == 404
    };
    eventually(
        "the session's fast calls got 404 once the server shut down",
        ended,
    )
    .await;
}

/// A client whose user accepts every elicitation.
#[derive(Clone)]
struct Accepts;

impl ClientHandler for Accepts {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("accepts", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }
}

#[tokio::test]
async fn rmcps_client_takes_json_answers_and_still_approves_through_elicitation() {
    let server = serve(HttpOptions::default()).await;
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let url = format!("http://{}/mcp", server.addr);
    let client = Accepts
        .serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .unwrap();
    let call = |name: &str, arguments: Value| {
        CallToolRequestParams::new(name.to_owned())
            .with_arguments(arguments.as_object().cloned().unwrap_or_default())
    };
    // Answered as JSON on the fast path.
    let added = client
        .peer()
        .call_tool(call("add", json!({"a": 20, "b": 22})))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&added.content).unwrap()[0]["text"],
        "42"
    );
    // Needs approval: the user is asked on the call's stream, accepts, and it runs.
    let purged = client
        .peer()
        .call_tool(call("purge", json!({})))
        .await
        .unwrap();
    assert_eq!(purged.is_error, Some(false), "{purged:?}");
    assert_eq!(
        serde_json::to_value(&purged.content).unwrap()[0]["text"],
        "purged"
    );
    let _ = client.cancel().await;
}

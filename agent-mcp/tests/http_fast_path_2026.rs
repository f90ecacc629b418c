//! A `tools/call` of a 2026-07-28 client (no session; protocol version and client in
//! `_meta`, method and tool in headers) is answered by the endpoint itself when its tool
//! cannot need its client, and exactly as rmcp's path answers it.
//!
//! Which path answered shows in the answer's content type: on an endpoint with sessions
//! rmcp answers a 2026-07-28 call's result on an event stream, the endpoint's own path as
//! `application/json`. Each case is sent twice, once as a 2026-07-28 client sends it and
//! once with an `Accept` header written with weights (which rmcp reads as the same, and
//! the fast path leaves to rmcp), and the two answers are compared.

#[path = "support/raw_http.rs"]
mod raw_http;

use raw_http::{Reply, Running, serve_on_loopback};
use serde_json::{Value, json};
use std::net::SocketAddr;
use toolwright_core::{Principal, Progress, State, ToolError, tool, tools};
use toolwright_mcp::{HttpAuth, HttpOptions, InputRequest, McpPeer, McpServer, StaticTokens};

const VERSION: &str = "2026-07-28";
const JSON: &str = "application/json";
const EVENTS: &str = "text/event-stream";

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

/// Asks the client's user for a name: needs the `elicitation` capability.
#[tool]
async fn ask_name(peer: State<McpPeer>) -> Result<String, ToolError> {
    let answer = peer
        .request(
            "elicitation/create",
            json!({"message": "Your name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}}),
        )
        .await?;
    Ok(answer.to_string())
}

/// Greets the client's user by the name it asks them for.
#[tool]
async fn greet(peer: State<McpPeer>) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let answer = peer
        .ask(InputRequest::elicit("name", "What is your name?", schema))
        .await?;
    Ok(format!("Hello, {}!", answer["name"]))
}

/// Deletes everything; every call needs a person's approval.
#[tool(require_approval)]
async fn purge() -> &'static str {
    "purged"
}

/// Reports its progress once.
#[tool]
async fn step(progress: Progress) -> &'static str {
    progress.emit(json!({"progress": 1, "total": 1})).ok();
    "stepped"
}

/// Something only administrators may do.
#[tool]
async fn admin_reset() -> &'static str {
    "reset"
}

/// Greets a region, which a request repeats in a header.
#[tool]
async fn regional(#[arg(header = "Region")] region: String) -> String {
    format!("hello {region}")
}

fn server() -> McpServer {
    McpServer::new(tools![
        add,
        fail,
        ask_name,
        greet,
        purge,
        step,
        regional,
        admin_reset
    ])
}

async fn serve(options: HttpOptions) -> Running {
    serve_on_loopback(server(), options).await
}

/// How a request reaches the endpoint.
#[derive(Clone, Copy, Debug)]
enum Sent {
    /// As a 2026-07-28 client sends it.
    Plainly,
    /// With an `Accept` header written with weights: the same request to rmcp, which the
    /// fast path does not read, so rmcp answers it.
    ToRmcp,
}

/// The `_meta` of a 2026-07-28 request whose client declares `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 `tools/call` of `tool` with `arguments`, its client declaring
/// `capabilities`, with the standard headers and `extra` ones.
async fn call(
    addr: SocketAddr,
    sent: Sent,
    tool: &str,
    arguments: Value,
    capabilities: Value,
    extra: &[(&str, &str)],
) -> Reply {
    call_with_meta(addr, sent, tool, arguments, meta(capabilities), extra).await
}

/// A `tools/call` of `tool` with `arguments` and `meta`, with the headers a 2026-07-28
/// client sends (each replaced by one of the same name in `extra`) and `extra`.
async fn call_with_meta(
    addr: SocketAddr,
    sent: Sent,
    tool: &str,
    arguments: Value,
    meta: Value,
    extra: &[(&str, &str)],
) -> Reply {
    let body = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta},
    });
    let accept = match sent {
        Sent::Plainly => "application/json, text/event-stream",
        Sent::ToRmcp => "application/json;q=1, text/event-stream;q=0.9",
    };
    let standard = [
        ("Content-Type", JSON),
        ("Accept", accept),
        ("MCP-Protocol-Version", VERSION),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    let mut headers: Vec<(&str, &str)> = standard
        .into_iter()
        .filter(|(name, _)| {
            !extra
                .iter()
                .any(|(other, _)| other.eq_ignore_ascii_case(name))
        })
        .collect();
    headers.extend_from_slice(extra);
    raw_http::send(addr, "POST", "/mcp", &headers, body.to_string().as_bytes())
        .await
        .unwrap()
}

/// The answer's content type, without parameters.
fn kind(reply: &Reply) -> &str {
    reply
        .header("content-type")
        .and_then(|kind| kind.split(';').next())
        .unwrap_or_default()
}

/// Both ways of sending the call; the answers' statuses and JSON-RPC answers are equal.
/// Returns the plainly sent reply and its answer.
async fn both(
    addr: SocketAddr,
    tool: &str,
    arguments: Value,
    capabilities: Value,
    extra: &[(&str, &str)],
) -> (Reply, Value) {
    let plain = call(
        addr,
        Sent::Plainly,
        tool,
        arguments.clone(),
        capabilities.clone(),
        extra,
    )
    .await;
    let rmcp = call(addr, Sent::ToRmcp, tool, arguments, capabilities, extra).await;
    assert_eq!(plain.status, rmcp.status, "{plain:?}\n{rmcp:?}");
    let answer = plain.answer().expect("an answer");
    assert_eq!(
        answer,
        rmcp.answer().expect("an answer"),
        "{plain:?}\n{rmcp:?}"
    );
    (plain, answer)
}

#[tokio::test]
async fn a_plain_call_is_answered_by_the_endpoint_as_rmcp_answers_it() {
    let running = serve(HttpOptions::default()).await;
    let plain = call(
        running.addr,
        Sent::Plainly,
        "add",
        json!({"a": 2, "b": 3}),
        json!({}),
        &[],
    )
    .await;
    let rmcp = call(
        running.addr,
        Sent::ToRmcp,
        "add",
        json!({"a": 2, "b": 3}),
        json!({}),
        &[],
    )
    .await;
    // The fast path answers as JSON; rmcp, on an endpoint with sessions, on a stream.
    assert_eq!((plain.status, kind(&plain)), (200, JSON), "{plain:?}");
    assert_eq!((rmcp.status, kind(&rmcp)), (200, EVENTS), "{rmcp:?}");
    assert!(plain.header("mcp-session-id").is_none());
    let answer = plain.answer().unwrap();
    assert_eq!(answer, rmcp.answer().unwrap());
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "5", "{answer}");
}

#[tokio::test]
async fn a_failing_tool_answers_the_same_on_both_paths() {
    let running = serve(HttpOptions::default()).await;
    let (reply, answer) = both(running.addr, "fail", json!({}), json!({}), &[]).await;
    assert_eq!(kind(&reply), JSON, "the fast path answered: {reply:?}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer.to_string().contains("the disk is full"), "{answer}");
}

#[tokio::test]
async fn bad_arguments_answer_the_same_on_both_paths() {
    let running = serve(HttpOptions::default()).await;
    for arguments in [
        json!({"a": "two", "b": 3}),
        json!({"a": 1}),
        json!({"a": 1, "b": 2, "c": 3}),
    ] {
        let (reply, answer) = both(running.addr, "add", arguments.clone(), json!({}), &[]).await;
        assert_eq!(
            kind(&reply),
            JSON,
            "the fast path answered {arguments}: {reply:?}"
        );
        let text = answer.to_string();
        assert!(
            answer["result"]["isError"] == true || answer.get("error").is_some(),
            "{arguments} was refused: {text}"
        );
    }
}

#[tokio::test]
async fn headers_that_do_not_match_the_body_are_refused_as_rmcp_refuses_them() {
    let running = serve(HttpOptions::default()).await;
    let cases: [&[(&str, &str)]; 4] = [
        &[("Mcp-Name", "fail")],
        &[("Mcp-Name", "add"), ("Mcp-Name", "add")],
        &[("Mcp-Name", "")],
        &[("Mcp-Method", "tools/list")],
    ];
    for extra in cases {
        let (reply, answer) = both(
            running.addr,
            "add",
            json!({"a": 1, "b": 2}),
            json!({}),
            extra,
        )
        .await;
        assert_eq!(reply.status, 400, "{extra:?}: {reply:?}");
        assert_eq!(answer["error"]["code"], -32020, "{extra:?}: {answer}");
    }
    // A name written in Base64, as SEP-2243 allows, is rmcp's to decode: and it matches.
    let (reply, answer) = both(
        running.addr,
        "add",
        json!({"a": 1, "b": 2}),
        json!({}),
        &[("Mcp-Name", "=?base64?YWRk?=")],
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(answer["result"]["content"][0]["text"], "3", "{answer}");
}

#[tokio::test]
async fn a_tool_with_a_header_parameter_has_its_header_checked() {
    let running = serve(HttpOptions::default()).await;
    // Without its `Mcp-Param-Region` header, the call is refused, however it is sent.
    let (reply, answer) = both(
        running.addr,
        "regional",
        json!({"region": "north"}),
        json!({}),
        &[],
    )
    .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(answer["error"]["code"], -32020, "{answer}");
    // With it, answered.
    let (reply, answer) = both(
        running.addr,
        "regional",
        json!({"region": "north"}),
        json!({}),
        &[("Mcp-Param-Region", "north")],
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "hello north",
        "{answer}"
    );
}

#[tokio::test]
async fn a_missing_client_capability_is_refused_as_on_rmcps_path() {
    let running = serve(HttpOptions::default()).await;
    let (reply, answer) = both(running.addr, "ask_name", json!({}), json!({}), &[]).await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"]["elicitation"],
        json!({}),
        "{answer}"
    );
}

#[tokio::test]
async fn a_call_needing_input_answers_input_required_as_on_rmcps_path() {
    let running = serve(HttpOptions::default()).await;
    let capabilities = json!({"elicitation": {}});
    for tool in ["purge", "greet"] {
        let plain = call(
            running.addr,
            Sent::Plainly,
            tool,
            json!({}),
            capabilities.clone(),
            &[],
        )
        .await;
        let rmcp = call(
            running.addr,
            Sent::ToRmcp,
            tool,
            json!({}),
            capabilities.clone(),
            &[],
        )
        .await;
        assert_eq!(
            (plain.status, rmcp.status),
            (200, 200),
            "{plain:?}\n{rmcp:?}"
        );
        let (mut plain, mut rmcp) = (plain.answer().unwrap(), rmcp.answer().unwrap());
        // Each state is sealed with a fresh nonce: present in both, then set aside.
        for answer in [&mut plain, &mut rmcp] {
            let state = answer["result"]
                .as_object_mut()
                .and_then(|result| result.remove("requestState"));
            assert!(state.is_some_and(|state| state.is_string()), "{answer}");
        }
        assert_eq!(plain, rmcp);
        assert_eq!(plain["result"]["resultType"], "input_required", "{plain}");
    }
}

#[tokio::test]
async fn a_call_with_a_progress_token_reports_its_progress_through_rmcp() {
    let running = serve(HttpOptions::default()).await;
    let mut meta = meta(json!({}));
    meta["progressToken"] = json!("p1");
    let reply = call_with_meta(running.addr, Sent::Plainly, "step", json!({}), meta, &[]).await;
    assert_eq!((reply.status, kind(&reply)), (200, EVENTS), "{reply:?}");
    let messages = reply.messages();
    assert!(
        messages.iter().any(
            |m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "p1"
        ),
        "{messages:?}"
    );
    assert_eq!(
        reply.answer().unwrap()["result"]["content"][0]["text"],
        "stepped"
    );
}

#[tokio::test]
async fn a_stateless_endpoint_answers_plain_calls_the_same() {
    let running = serve(HttpOptions::default().stateless(true)).await;
    let (reply, answer) = both(running.addr, "add", json!({"a": 4, "b": 5}), json!({}), &[]).await;
    assert_eq!((reply.status, kind(&reply)), (200, JSON), "{reply:?}");
    assert_eq!(answer["result"]["content"][0]["text"], "9", "{answer}");
    let (reply, answer) = both(running.addr, "fail", json!({}), json!({}), &[]).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
}

#[tokio::test]
async fn requests_the_fast_path_does_not_take_still_get_rmcps_answers() {
    let running = serve(HttpOptions::default()).await;
    let version_only = json!({"io.modelcontextprotocol/protocolVersion": VERSION});
    // What is sent, and rmcp's refusal: status and JSON-RPC error code (none for a
    // refusal in plain text).
    type Case<'a> = (&'a str, Value, &'a [(&'a str, &'a str)], u16, Option<i64>);
    let cases: [Case; 4] = [
        // `_meta` without the client's capabilities: malformed.
        ("no capabilities", version_only, &[], 400, Some(-32602)),
        // A header naming another version than the body's.
        (
            "another version",
            meta(json!({})),
            &[("MCP-Protocol-Version", "2025-11-25")],
            400,
            Some(-32020),
        ),
        // A browser's request from a place not allowed.
        (
            "a foreign origin",
            meta(json!({})),
            &[("Origin", "https://evil.example")],
            403,
            None,
        ),
        // A host not allowed.
        (
            "a foreign host",
            meta(json!({})),
            &[("Host", "evil.example")],
            403,
            None,
        ),
    ];
    for (what, meta, extra, status, code) in cases {
        let reply = call_with_meta(
            running.addr,
            Sent::Plainly,
            "add",
            json!({"a": 1, "b": 2}),
            meta,
            extra,
        )
        .await;
        assert_eq!(reply.status, status, "{what}: {reply:?}");
        if let Some(code) = code {
            assert_eq!(
                reply.answer().unwrap()["error"]["code"],
                code,
                "{what}: {reply:?}"
            );
        }
        assert!(!reply.body.contains("\"3\""), "{what}: {reply:?}");
    }
}

#[tokio::test]
async fn with_authentication_tokens_and_scopes_hold_on_the_fast_path() {
    let auth = HttpAuth::new(
        StaticTokens::new()
            .with_token("alice-token", Principal::new("alice"))
            .with_token("root-token", Principal::new("root").with_scopes(["admin"])),
    )
    .require_scopes("admin_reset", ["admin"]);
    let running = serve(HttpOptions::default().with_auth(auth)).await;
    let alice = [("Authorization", "Bearer alice-token")];
    let root = [("Authorization", "Bearer root-token")];
    let add = json!({"a": 2, "b": 2});

    let (reply, answer) = both(running.addr, "add", add.clone(), json!({}), &alice).await;
    assert_eq!((reply.status, kind(&reply)), (200, JSON), "{reply:?}");
    assert_eq!(answer["result"]["content"][0]["text"], "4", "{answer}");

    // No token or a wrong one: refused before any call.
    let wrong = [("Authorization", "Bearer forged")];
    for extra in [&[][..], &wrong[..]] {
        let refused = call(
            running.addr,
            Sent::Plainly,
            "add",
            add.clone(),
            json!({}),
            extra,
        )
        .await;
        assert_eq!(refused.status, 401, "{extra:?}: {refused:?}");
    }

    // A tool alice lacks the scope for does not exist for her, on either path.
    let (_, answer) = both(running.addr, "admin_reset", json!({}), json!({}), &alice).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(!answer.to_string().contains("\"reset\""), "{answer}");

    // The owner of the scope runs it on the fast path.
    let (reply, answer) = both(running.addr, "admin_reset", json!({}), json!({}), &root).await;
    assert_eq!((reply.status, kind(&reply)), (200, JSON), "{reply:?}");
    assert_eq!(answer["result"]["content"][0]["text"], "reset", "{answer}");
}

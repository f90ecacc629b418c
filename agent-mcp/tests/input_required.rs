//! Asking the caller on MCP 2026-07-28 (multi-round-trip requests): a call that needs
//! answers ends with an `InputRequiredResult` and a sealed `requestState`, and its retry
//! runs the tool with the answers. The attacks: a tampered, replayed, expired,
//! other-principal or other-call state is refused with an error saying why; an approval
//! cannot be answered without the state that asked for it; a client that did not declare
//! a capability is not sent a question it cannot answer.

#[path = "support/raw_http.rs"]
mod raw_http;

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};
use toolwright_core::{
    AgentResult, Content, Principal, State, Tool, ToolContext, ToolError, ToolSet, async_trait,
    tool, tool::ApprovalPolicy,
};
use toolwright_mcp::{
    HttpAuth, HttpOptions, InputOptions, InputRequest, McpHttpServer, McpPeer, McpServer,
    ServerOptions, StaticTokens,
};

/// Counts its runs; every call needs a person's approval.
struct Wipe(Arc<AtomicUsize>);

#[async_trait]
impl Tool for Wipe {
    fn name(&self) -> &'static str {
        "wipe"
    }

    fn description(&self) -> &'static str {
        "Wipes a disk."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"disk": {"type": "string"}}})
    }

    fn approval(&self, _args: &Value) -> ApprovalPolicy {
        ApprovalPolicy::Required
    }

    async fn call(&self, args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        // Who approved, as the server recorded it.
        let who = ctx
            .state::<McpPeer>()
            .and_then(McpPeer::approval)
            .map_or_else(|| "nobody".to_owned(), |record| record.who);
        Ok(vec![Content::text(format!(
            "wiped {} (approved by {who})",
            args["disk"]
        ))])
    }
}

/// Asks the user's name, then greets them.
#[tool]
async fn greet(peer: State<McpPeer>) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let answer = peer
        .ask(InputRequest::elicit("name", "What is your name?", schema))
        .await?;
    Ok(format!(
        "Hello, {}!",
        answer["content"]["name"].as_str().unwrap_or("?")
    ))
}

struct Served {
    addr: SocketAddr,
    wipes: Arc<AtomicUsize>,
}

/// A server of `wipe` and `greet` behind bearer tokens for alice and bob.
async fn serve(input: InputOptions) -> Served {
    let wipes = Arc::new(AtomicUsize::new(0));
    let mut tools = ToolSet::new();
    tools.register_tool(Wipe(wipes.clone())).unwrap();
    tools.extend(toolwright_core::tools![greet]).unwrap();
    let mut options = ServerOptions::default();
    options.input = input;
    let server = McpServer::with_options(tools, options);
    let tokens = StaticTokens::new()
        .with_token("alice-token", Principal::new("alice"))
        .with_token("bob-token", Principal::new("bob"));
    let http = McpHttpServer::bind(server, "127.0.0.1:0")
        .await
        .unwrap()
        .with_options(HttpOptions::default().with_auth(HttpAuth::new(tokens)));
    let addr = http.local_addr();
    tokio::spawn(http.run());
    Served { addr, wipes }
}

const EVERYTHING: &str = r#"{"elicitation": {}, "sampling": {}, "roots": {}}"#;

/// A stateless 2026-07-28 `tools/call` by the holder of `token`, declaring
/// `capabilities`; the JSON-RPC response.
async fn call(addr: SocketAddr, token: &str, mut params: Value, capabilities: &str) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "attack-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(capabilities).unwrap(),
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let bearer = format!("Bearer {token}");
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name.as_str()),
        ("Authorization", bearer.as_str()),
    ];
    let reply = raw_http::post(
        addr,
        None,
        &headers,
        &raw_http::rpc(7, "tools/call", params),
    )
    .await
    .unwrap();
    reply
        .answer()
        .unwrap_or_else(|| panic!("no JSON-RPC answer: {} {}", reply.status, reply.body))
}

fn accept() -> Value {
    json!({"action": "accept", "content": {}})
}

/// The first round of `wipe` on `disk`: its requestState, after checking that it asks
/// the approval question and did not run the tool.
async fn ask_approval(served: &Served, token: &str, disk: &str) -> String {
    let first = call(
        served.addr,
        token,
        json!({"name": "wipe", "arguments": {"disk": disk}}),
        EVERYTHING,
    )
    .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["toolwright/approval"]["method"], "elicitation/create",
        "{first}"
    );
    assert_eq!(
        served.wipes.load(Ordering::SeqCst),
        0,
        "the tool ran before approval"
    );
    result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned()
}

/// A retry of `wipe` on `disk` answering the approval with `answer` under `state`.
async fn retry(served: &Served, token: &str, disk: &str, state: &str, answer: Value) -> Value {
    let params = json!({
        "name": "wipe",
        "arguments": {"disk": disk},
        "inputResponses": {"toolwright/approval": answer},
        "requestState": state,
    });
    call(served.addr, token, params, EVERYTHING).await
}

/// The message of a JSON-RPC error, failing when `answer` is not one.
fn refusal(answer: &Value) -> String {
    assert_eq!(
        answer["error"]["code"], -32602,
        "expected a refusal, got {answer}"
    );
    answer["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn an_approved_call_runs_once_with_the_principal_as_reviewer() {
    let served = serve(InputOptions::default()).await;
    let state = ask_approval(&served, "alice-token", "sda").await;
    let done = retry(&served, "alice-token", "sda", &state, accept()).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("approved by alice"), "{text}");
    assert_eq!(served.wipes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_replayed_state_is_refused() {
    let served = serve(InputOptions::default()).await;
    let state = ask_approval(&served, "alice-token", "sda").await;
    let done = retry(&served, "alice-token", "sda", &state, accept()).await;
    assert!(done.get("result").is_some(), "{done}");
    let replay = retry(&served, "alice-token", "sda", &state, accept()).await;
    let message = refusal(&replay);
    assert!(message.contains("used already"), "{message}");
    assert_eq!(
        served.wipes.load(Ordering::SeqCst),
        1,
        "the replay ran the tool again"
    );
}

#[tokio::test]
async fn a_tampered_state_is_refused() {
    let served = serve(InputOptions::default()).await;
    let state = ask_approval(&served, "alice-token", "sda").await;
    // Change one character of the sealed body (the middle of the three sections).
    let mut parts: Vec<String> = state.split('.').map(str::to_owned).collect();
    let body = &mut parts[1];
    let flipped = if body.ends_with('A') { 'B' } else { 'A' };
    body.pop();
    body.push(flipped);
    let tampered = parts.join(".");
    for forged in [
        tampered,
        format!("{state}-TAMPERED"),
        "rs1.e30.AAAA".to_owned(),
    ] {
        let answer = retry(&served, "alice-token", "sda", &forged, accept()).await;
        let message = refusal(&answer);
        assert!(message.contains("`requestState` was refused"), "{message}");
        assert!(message.contains("start over"), "{message}");
    }
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn another_principals_state_is_refused() {
    let served = serve(InputOptions::default()).await;
    let state = ask_approval(&served, "alice-token", "sda").await;
    let answer = retry(&served, "bob-token", "sda", &state, accept()).await;
    let message = refusal(&answer);
    assert!(message.contains("another caller"), "{message}");
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_state_for_other_arguments_is_refused() {
    let served = serve(InputOptions::default()).await;
    // Approval asked to wipe a scratch disk, used to wipe the system disk.
    let state = ask_approval(&served, "alice-token", "scratch").await;
    let answer = retry(&served, "alice-token", "system", &state, accept()).await;
    let message = refusal(&answer);
    assert!(message.contains("other arguments"), "{message}");
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let served = serve(InputOptions::default().state_ttl(Duration::from_millis(1))).await;
    let state = ask_approval(&served, "alice-token", "sda").await;
    // The state was issued before its answer arrived, so it lapses 1 ms after this at
    // the latest: wait on the clock for that (measured from before the request, a slow
    // machine could retry before the state's expiry).
    let answered = SystemTime::now();
    while answered.elapsed().unwrap_or_default() < Duration::from_millis(5) {
        tokio::task::yield_now().await;
    }
    let answer = retry(&served, "alice-token", "sda", &state, accept()).await;
    let message = refusal(&answer);
    assert!(message.contains("expired"), "{message}");
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_approval_without_the_state_that_asked_it_is_not_taken() {
    let served = serve(InputOptions::default()).await;
    // The client answers the approval question before being asked: no state, no run.
    let params = json!({
        "name": "wipe",
        "arguments": {"disk": "sda"},
        "inputResponses": {"toolwright/approval": accept()},
    });
    let answer = call(served.addr, "alice-token", params, EVERYTHING).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
    // Nor does a state from a question about another tool carry an approval.
    let first = call(
        served.addr,
        "alice-token",
        json!({"name": "greet", "arguments": {}}),
        EVERYTHING,
    )
    .await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answer = retry(&served, "alice-token", "sda", &state, accept()).await;
    refusal(&answer);
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_declined_approval_does_not_run_the_call() {
    let served = serve(InputOptions::default()).await;
    let state = ask_approval(&served, "alice-token", "sda").await;
    let answer = retry(
        &served,
        "alice-token",
        "sda",
        &state,
        json!({"action": "decline"}),
    )
    .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("declined"), "{text}");
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tool_asks_then_runs_again_with_the_answer() {
    let served = serve(InputOptions::default()).await;
    let first = call(
        served.addr,
        "alice-token",
        json!({"name": "greet", "arguments": {}}),
        EVERYTHING,
    )
    .await;
    assert_eq!(
        first["result"]["inputRequests"]["name"]["method"], "elicitation/create",
        "{first}"
    );
    let state = first["result"]["requestState"].as_str().unwrap();
    let params = json!({
        "name": "greet",
        "arguments": {},
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": state,
    });
    let done = call(served.addr, "alice-token", params, EVERYTHING).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
    // An answer that is not an elicitation result is asked for again, not taken.
    let params = json!({"name": "greet", "arguments": {}, "inputResponses": {"name": 12345}});
    let again = call(served.addr, "alice-token", params, EVERYTHING).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
}

#[tokio::test]
async fn a_client_without_the_capability_is_not_asked() {
    let served = serve(InputOptions::default()).await;
    let answer = call(
        served.addr,
        "alice-token",
        json!({"name": "greet", "arguments": {}}),
        "{}",
    )
    .await;
    assert!(answer["result"].get("inputRequests").is_none(), "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("`elicitation` capability"), "{text}");
    // Approval too: refused, not asked, and the tool does not run.
    let answer = call(
        served.addr,
        "alice-token",
        json!({"name": "wipe", "arguments": {"disk": "sda"}}),
        r#"{"sampling": {}}"#,
    )
    .await;
    assert!(answer["result"].get("inputRequests").is_none(), "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("cannot ask its user"), "{text}");
    assert_eq!(served.wipes.load(Ordering::SeqCst), 0);
}

#[test]
fn a_short_state_key_is_refused() {
    let error = InputOptions::default()
        .state_key(*b"too short")
        .unwrap_err();
    assert!(error.to_string().contains("at least 32 bytes"), "{error}");
    assert!(InputOptions::default().state_key([7u8; 32]).is_ok());
}

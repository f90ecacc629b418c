//! MCP 2026-07-28 over Streamable HTTP, as a client of that revision speaks it: no
//! session, every request carrying its own client context in `_meta`. Discovery, the
//! client's capabilities and log level read per request, `subscriptions/listen` (its
//! acknowledgement, tags, filter, and the bound per caller an attacker meets), caching
//! hints, and JSON Schema 2020-12 keywords served unchanged.

#[path = "support/events.rs"]
mod events;
#[path = "support/listen.rs"]
mod listen;
#[path = "support/raw_http.rs"]
mod raw_http;

use events::eventually;
use listen::Listen;
use raw_http::{Reply, Running, serve_on_loopback};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use toolwright_core::{
    AgentResult, Content, Principal, State, Tool, ToolContext, ToolError, ToolSet, async_trait,
    tool, tools,
};
use toolwright_mcp::{
    HttpAuth, HttpOptions, LogLevel, McpPeer, McpServer, ServerOptions, StaticTokens,
};

const VERSION: &str = "2026-07-28";

/// Asks the client's model something: needs the `sampling` capability.
#[tool]
async fn sample(peer: State<McpPeer>) -> Result<String, ToolError> {
    let answer = peer
        .request(
            "sampling/createMessage",
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                   "maxTokens": 5}),
        )
        .await?;
    Ok(answer.to_string())
}

/// `sample` with a short timeout: on a 2025 session its request goes to a client that
/// never answers.
#[tool(timeout = "200ms")]
async fn sample_briefly(peer: State<McpPeer>) -> Result<String, ToolError> {
    sample(peer).await
}

/// Logs once at each of four levels.
#[tool]
async fn chatty(peer: State<McpPeer>) -> Result<&'static str, ToolError> {
    for level in [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Warning,
        LogLevel::Error,
    ] {
        peer.log(level, level.as_str()).await?;
    }
    Ok("done")
}

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// A tool added while clients listen.
#[tool]
async fn late() -> &'static str {
    "late"
}

fn served(options: ServerOptions) -> McpServer {
    McpServer::with_options(tools![sample, sample_briefly, chatty, add], options)
}

async fn serve(server: &McpServer) -> Running {
    serve_on_loopback(server.clone(), HttpOptions::default()).await
}

/// The `_meta` a 2026-07-28 request carries, declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// The headers of a 2026-07-28 request of `method` (naming `name`, for a call).
fn headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut headers = vec![("MCP-Protocol-Version", VERSION), ("Mcp-Method", method)];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    headers
}

/// One 2026-07-28 request, answered in full.
async fn request(addr: SocketAddr, method: &str, params: Value) -> Reply {
    let name = params["name"].as_str().map(str::to_owned);
    let headers = headers(method, name.as_deref());
    raw_http::post(addr, None, &headers, &raw_http::rpc(7, method, params))
        .await
        .unwrap()
}

/// A 2026-07-28 request of `method` with nothing but its `_meta`.
async fn bare(addr: SocketAddr, method: &str) -> Reply {
    request(addr, method, json!({"_meta": meta(json!({}))})).await
}

async fn call(addr: SocketAddr, tool: &str, meta: Value) -> Reply {
    request(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": {}, "_meta": meta}),
    )
    .await
}

#[tokio::test]
async fn discover_answers_without_a_session() {
    let server = served(ServerOptions::default());
    let running = serve(&server).await;
    let reply = bare(running.addr, "server/discover").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(reply.header("mcp-session-id").is_none());
    let result = &reply.answer().unwrap()["result"];
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!(VERSION)),
        "{result}"
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], json!(true));
}

#[tokio::test]
async fn a_capability_the_request_does_not_declare_is_refused_with_400_and_minus_32021() {
    let server = served(ServerOptions::default());
    let running = serve(&server).await;
    let reply = call(running.addr, "sample", meta(json!({}))).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    let error = &reply.answer().unwrap()["error"];
    assert_eq!(error["code"], json!(-32021), "{error}");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    assert!(error["message"].as_str().unwrap().contains("`sampling`"));

    // Declared, it is not refused for the capability; and no request goes from server
    // to client, which this revision does not have: the call fails as a tool result.
    let reply = call(running.addr, "sample", meta(json!({"sampling": {}}))).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    for message in reply.messages() {
        assert!(
            message.get("method").is_none() || message["id"].is_null(),
            "a request from the server: {message}"
        );
    }
    let result = &reply.answer().unwrap()["result"];
    assert_eq!(result["isError"], json!(true), "{result}");
}

#[tokio::test]
async fn a_2025_session_keeps_what_it_declared_at_initialize() {
    // The same request on a 2025 session that did not declare sampling: the session's
    // rules (the request goes to the client, which here never answers), a failed call,
    // not the 2026 refusal.
    let server = served(ServerOptions::default());
    let running = serve(&server).await;
    let (_, session) = raw_http::open_session(running.addr, &[]).await.unwrap();
    let reply = raw_http::call(
        running.addr,
        session.as_deref(),
        &[],
        "sample_briefly",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply
            .messages()
            .iter()
            .any(|m| m["method"] == "sampling/createMessage"),
        "{}",
        reply.body
    );
    assert_eq!(reply.answer().unwrap()["result"]["isError"], json!(true));
}

#[tokio::test]
async fn log_messages_go_only_to_requests_that_ask_for_them_at_their_level() {
    let server = served(ServerOptions::default());
    let running = serve(&server).await;
    let logs = |reply: &Reply| -> Vec<String> {
        reply
            .messages()
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| m["params"]["level"].as_str().unwrap().to_owned())
            .collect()
    };
    let silent = call(running.addr, "chatty", meta(json!({}))).await;
    assert_eq!(silent.answer().unwrap()["result"]["isError"], json!(false));
    assert_eq!(logs(&silent), Vec::<String>::new(), "{}", silent.body);

    let mut warning = meta(json!({}));
    warning["io.modelcontextprotocol/logLevel"] = json!("warning");
    let loud = call(running.addr, "chatty", warning).await;
    assert_eq!(logs(&loud), ["warning", "error"], "{}", loud.body);
}

#[tokio::test]
async fn tools_list_carries_caching_hints() {
    let mut options = ServerOptions::default();
    options.list_ttl = Duration::from_secs(30);
    let server = served(options);
    let running = serve(&server).await;
    let reply = bare(running.addr, "tools/list").await;
    let result = &reply.answer().unwrap()["result"];
    assert_eq!(result["ttlMs"], json!(30_000), "{result}");
    assert_eq!(result["cacheScope"], json!("private"), "{result}");
}

/// A tool whose schema uses what no Rust type derives.
struct Contact;

fn contact_schema() -> Value {
    json!({
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                              "properties": {"city": {"type": "string"}}}},
        "properties": {
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "dependentRequired": {"phone": ["contactMethod"]},
        "unevaluatedProperties": false,
        "additionalProperties": false,
    })
}

#[async_trait]
impl Tool for Contact {
    fn name(&self) -> &str {
        "contact"
    }
    fn description(&self) -> &str {
        "Records how to reach someone."
    }
    fn schema(&self) -> Value {
        contact_schema()
    }
    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        Ok(vec![Content::text("noted")])
    }
}

#[tokio::test]
async fn every_json_schema_2020_12_keyword_reaches_the_client_unchanged() {
    let mut tools = ToolSet::new();
    tools.register_tool(Contact).unwrap();
    let server = McpServer::new(tools);
    let running = serve(&server).await;
    let reply = bare(running.addr, "tools/list").await;
    let mut served = reply.answer().unwrap()["result"]["tools"][0]["inputSchema"].clone();
    // The one addition: the dialect it is written in.
    assert_eq!(
        served
            .as_object_mut()
            .unwrap()
            .shift_remove("$schema")
            .unwrap(),
        json!("https://json-schema.org/draft/2020-12/schema")
    );
    assert_eq!(served, contact_schema());
}

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

#[tokio::test]
async fn a_listen_stream_is_acknowledged_first_then_told_of_tool_changes_with_its_id() {
    let server = served(ServerOptions::default());
    let running = serve(&server).await;
    let mut tools_stream =
        Listen::open(running.addr, json!({"toolsListChanged": true}), None).await;
    let ack = tools_stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], json!(41), "{ack}");
    assert_eq!(
        ack["params"]["notifications"]["toolsListChanged"],
        json!(true)
    );
    // A stream that asked only for prompt changes hears nothing of tools.
    let mut prompts_stream =
        Listen::open(running.addr, json!({"promptsListChanged": true}), None).await;
    let ack = prompts_stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert!(
        ack["params"]["notifications"]
            .get("toolsListChanged")
            .is_none_or(|v| v != &json!(true))
    );
    eventually("both streams registered", async || {
        server.open_listen_streams() == 2
    })
    .await;

    server.add_tool(late {}).await.unwrap();
    let notice = tools_stream.next().await.unwrap();
    assert_eq!(notice["method"], "notifications/tools/list_changed");
    assert_eq!(notice["params"]["_meta"][SUBSCRIPTION_ID], json!(41));

    // Ending the server ends the streams: whatever the filtered one was sent, it has.
    drop(running);
    let rest = prompts_stream.rest().await;
    assert!(
        rest.iter()
            .all(|m| m["method"] != "notifications/tools/list_changed"),
        "{rest:?}"
    );
}

/// Never answers: a call of it lasts until the request deadline ends it.
#[tool]
async fn stall() -> &'static str {
    std::future::pending::<()>().await;
    "unreachable"
}

#[tokio::test]
async fn a_listen_stream_outlives_the_request_deadline_and_holds_no_place_among_requests() {
    let server = McpServer::new(tools![stall]);
    // One request at a time, each answered within a short deadline.
    let options = HttpOptions::default()
        .with_max_concurrent_requests(1)
        .with_request_timeout(Duration::from_millis(300));
    let running = serve_on_loopback(server.clone(), options).await;
    let mut stream = Listen::open(running.addr, json!({"toolsListChanged": true}), None).await;
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    // The one place is free while the stream is open, so this call is admitted, and its
    // deadline (begun after the stream's) passes: refused for time, not for room.
    let stalled = call(running.addr, "stall", meta(json!({}))).await;
    assert_eq!(stalled.status, 503, "{}", stalled.body);
    assert!(
        stalled.body.contains("took longer than 300ms"),
        "{}",
        stalled.body
    );

    // The stream, older than that deadline, still hears of changes.
    server.add_tool(late {}).await.unwrap();
    let notice = stream.next().await.unwrap();
    assert_eq!(notice["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn listen_streams_are_bounded_per_caller_and_a_freed_place_can_be_taken_again() {
    let mut options = ServerOptions::default();
    options.max_listens_per_caller = 2;
    let server = served(options);
    let auth = HttpAuth::new(
        StaticTokens::new()
            .with_token("mallory-token", Principal::new("mallory"))
            .with_token("alice-token", Principal::new("alice")),
    );
    let running = serve_on_loopback(
        server.clone(),
        HttpOptions::default().with_auth(auth.clone()),
    )
    .await;
    let filter = json!({"toolsListChanged": true});
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = Listen::open(running.addr, filter.clone(), Some("mallory-token")).await;
        let ack = stream.next().await.unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        held.push(stream);
    }
    eventually("mallory's two streams registered", async || {
        server.open_listen_streams() == 2
    })
    .await;
    // The attacker's next streams are refused, each answered and ended.
    for _ in 0..5 {
        let refused = Listen::open(running.addr, filter.clone(), Some("mallory-token"))
            .await
            .rest()
            .await;
        let error = refused
            .iter()
            .find_map(|m| m.get("error"))
            .unwrap_or_else(|| panic!("not refused: {refused:?}"));
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("too many subscriptions/listen streams"),
            "{error}"
        );
    }
    assert_eq!(server.open_listen_streams(), 2);
    // Another caller is not affected.
    let mut alice = Listen::open(running.addr, filter.clone(), Some("alice-token")).await;
    assert_eq!(
        alice.next().await.unwrap()["method"],
        "notifications/subscriptions/acknowledged"
    );
    eventually("alice's stream registered", async || {
        server.open_listen_streams() == 3
    })
    .await;
    // A stream the attacker closes gives its place back.
    drop(held.pop());
    eventually("the closed stream gone", async || {
        server.open_listen_streams() == 2
    })
    .await;
    let mut again = Listen::open(running.addr, filter, Some("mallory-token")).await;
    assert_eq!(
        again.next().await.unwrap()["method"],
        "notifications/subscriptions/acknowledged"
    );
    server.add_tool(late {}).await.unwrap();
    assert_eq!(
        again.next().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
}

/// Runs in a region, which clients also send as the `Mcp-Param-Region` header.
#[tool(name = "regional")]
async fn regional_macro(#[arg(header = "Region")] region: String) -> String {
    format!("ran in \"{region}\"")
}

#[test]
fn a_header_parameter_declared_with_tool_is_served_to_mcp_only() {
    let tools = tools![regional_macro];
    let definition = tools.definition("regional").unwrap();
    let mcp = toolwright_core::dialect::Dialect::Mcp
        .render(definition)
        .unwrap();
    assert_eq!(
        mcp["inputSchema"]["properties"]["region"]["x-mcp-header"],
        json!("Region")
    );
    // A model provider is not sent what only an MCP client's transport reads.
    for dialect in [
        toolwright_core::dialect::Dialect::OpenAi,
        toolwright_core::dialect::Dialect::OpenAiStrict,
        toolwright_core::dialect::Dialect::Anthropic,
        toolwright_core::dialect::Dialect::Gemini,
    ] {
        let rendered = dialect.render_parameters(definition).unwrap();
        assert!(
            rendered["properties"]["region"]
                .get("x-mcp-header")
                .is_none(),
            "{dialect:?}: {rendered}"
        );
    }
}

#[tokio::test]
async fn a_header_parameter_that_disagrees_with_the_body_is_refused() {
    let server = McpServer::new(tools![regional_macro]);
    let running = serve(&server).await;
    let body = raw_http::rpc(
        9,
        "tools/call",
        json!({"name": "regional", "arguments": {"region": "eu-west"}, "_meta": meta(json!({}))}),
    );
    let post = |extra: Vec<(&'static str, &'static str)>| {
        let body = body.clone();
        async move {
            let mut headers = headers("tools/call", Some("regional"));
            headers.extend(extra);
            raw_http::post(running.addr, None, &headers, &body)
                .await
                .unwrap()
        }
    };
    // A gateway routing on the header would send the call to another region than the
    // tool runs in: refused, as is a missing or undecodable header.
    for (extra, why) in [
        (vec![("Mcp-Param-Region", "us-east")], "does not match"),
        (vec![], "missing Mcp-Param-Region"),
        (
            vec![("Mcp-Param-Region", "=?base64?ZXUtd2VzdA?=")],
            "Base64",
        ),
    ] {
        let reply = post(extra).await;
        assert_eq!(reply.status, 400, "{}", reply.body);
        let error = &reply.answer().unwrap()["error"];
        assert_eq!(error["code"], json!(-32020), "{error}");
        assert!(error["message"].as_str().unwrap().contains(why), "{error}");
    }
    // Plain, or Base64 in its sentinel, the header that agrees is served.
    for value in ["eu-west", "=?base64?ZXUtd2VzdA==?="] {
        let reply = post(vec![("Mcp-Param-Region", value)]).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        let result = &reply.answer().unwrap()["result"];
        assert_eq!(result["content"][0]["text"], json!("ran in \"eu-west\""));
    }
}

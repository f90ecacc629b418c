//! `McpClient` speaking MCP 2026-07-28 to an in-process rmcp server over Streamable
//! HTTP: it discovers instead of initializing, sends the protocol headers, answers a
//! call's `input_required` with the application's elicitation handler and echoes the
//! server's request state unchanged, follows tool changes on `subscriptions/listen`,
//! and keeps remote schemas verbatim. A server that offers only 2025-11-25 still works
//! through `initialize`.

#[path = "support/events.rs"]
mod events;

use axum::http::request::Parts;
use events::within;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock as McpContent, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    ServerNotification, SubscriptionFilter, Tool, ToolListChangedNotification,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use toolwright_core::{AgentResult, Content, ToolContext};
use toolwright_mcp::{HttpClientOptions, McpClient};

/// The request state the server hands out; the client must send it back as is.
const STATE: &str = "opaque+/state==\u{e9}";

/// A request's method and its `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`.
type Headers = (String, Option<String>, Option<String>, Option<String>);

/// What the server saw of each request, and what it lets a test drive.
#[derive(Default)]
struct Seen {
    /// `(method, MCP-Protocol-Version, Mcp-Method, Mcp-Name)` of each request.
    headers: Vec<Headers>,
    /// The request state and input responses of each `tools/call` of `confirm`.
    confirm_rounds: Vec<(Option<String>, Option<Value>)>,
}

/// An rmcp server: `add`, `confirm` (asks the user before answering), `ask_model`
/// (asks for sampling), `rich` (a schema full of 2020-12 keywords) and, once
/// `grow` fires, `extra`.
#[derive(Clone)]
struct Probe {
    versions: &'static [ProtocolVersion],
    seen: Arc<Mutex<Seen>>,
    grow: Arc<Notify>,
    grown: Arc<Mutex<bool>>,
}

impl Probe {
    fn new(versions: &'static [ProtocolVersion]) -> Self {
        Self {
            versions,
            seen: Arc::default(),
            grow: Arc::default(),
            grown: Arc::default(),
        }
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }

    fn record(&self, method: &str, context: &RequestContext<RoleServer>) {
        let Some(parts) = context.extensions.get::<Parts>() else {
            return;
        };
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        self.seen().headers.push((
            method.to_owned(),
            header("mcp-protocol-version"),
            header("mcp-method"),
            header("mcp-name"),
        ));
    }
}

/// The schema of `rich`: every keyword must reach the client's tool as sent.
fn rich_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {"$anchor": "addr", "type": "object",
                        "properties": {"city": {"type": "string"}}}
        },
        "properties": {
            "home": {"$ref": "#/$defs/address"},
            "profile": {"$ref": "https://example.invalid/profile.json"},
            "kind": {"anyOf": [{"const": "a"}, {"const": "b"}]}
        },
        "allOf": [{"required": []}],
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["home"]},
        "else": {"required": []},
        "additionalProperties": false
    })
}

fn tool(name: &str, schema: Value) -> Tool {
    serde_json::from_value(json!({
        "name": name,
        "description": format!("The {name} tool."),
        "inputSchema": schema,
    }))
    .unwrap()
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![McpContent::text(text.into())])
}

impl ServerHandler for Probe {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = Some(true);
        }
        ServerConfig::new(capabilities)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(self.versions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.record("tools/list", &context);
        let number = json!({"type": "object", "properties": {"a": {"type": "integer"},
                            "b": {"type": "integer"}}, "required": ["a", "b"]});
        let mut tools = vec![
            tool("add", number.clone()),
            tool("confirm", json!({"type": "object"})),
            tool("ask_model", json!({"type": "object"})),
            tool("rich", rich_schema()),
        ];
        if *self.grown.lock().unwrap() {
            tools.push(tool("extra", json!({"type": "object"})));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        use rmcp::model::CallToolResponse::{Complete, InputRequired};
        self.record("tools/call", &context);
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        match request.name.as_ref() {
            "add" => Ok(Complete(text(
                (arguments["a"].as_i64().unwrap_or(0) + arguments["b"].as_i64().unwrap_or(0))
                    .to_string(),
            ))),
            "confirm" => {
                let responses = request
                    .input_responses
                    .as_ref()
                    .map(|r| serde_json::to_value(r).unwrap());
                self.seen()
                    .confirm_rounds
                    .push((request.request_state.clone(), responses.clone()));
                let Some(responses) = responses else {
                    let asked: InputRequiredResult = serde_json::from_value(json!({
                        "resultType": "input_required",
                        "inputRequests": {"ok": {
                            "method": "elicitation/create",
                            "params": {
                                "mode": "form",
                                "message": "Go ahead?",
                                "requestedSchema": {"type": "object", "properties":
                                    {"sure": {"type": "boolean"}}}
                            }
                        }},
                        "requestState": STATE
                    }))
                    .unwrap();
                    return Ok(InputRequired(asked));
                };
                Ok(Complete(text(format!("answered {}", responses["ok"]))))
            }
            "ask_model" => {
                let asked: InputRequiredResult = serde_json::from_value(json!({
                    "resultType": "input_required",
                    "inputRequests": {"llm": {
                        "method": "sampling/createMessage",
                        "params": {"messages": [], "maxTokens": 10}
                    }}
                }))
                .unwrap();
                Ok(InputRequired(asked))
            }
            "rich" | "extra" => Ok(Complete(text("ok"))),
            other => Err(ErrorData::invalid_params(
                format!("Unknown tool: {other}"),
                None,
            )),
        }
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        tokio::select! {
            () = self.grow.notified() => {
                *self.grown.lock().unwrap() = true;
                let notice = ServerNotification::ToolListChangedNotification(
                    ToolListChangedNotification::default(),
                );
                let _ = context.sink().send(notice).await;
                context.cancelled().await;
            }
            () = context.cancelled() => {}
        }
        Ok(())
    }
}

/// Serves `probe` over Streamable HTTP on a loopback port; answers its `/mcp` URL.
async fn serve(probe: Probe) -> String {
    let config = StreamableHttpServerConfig::default();
    let service = StreamableHttpService::new(
        move || Ok(probe.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}/mcp")
}

const MODERN: &[ProtocolVersion] = &[ProtocolVersion::V_2026_07_28];
const LEGACY: &[ProtocolVersion] = &[ProtocolVersion::V_2025_11_25];

/// Answers every form by accepting it with `{"sure": true}`, counting the questions.
fn agreeing(asked: Arc<Mutex<Vec<String>>>) -> HttpClientOptions {
    HttpClientOptions::new().with_elicitation(move |message, _schema| {
        asked.lock().unwrap().push(message);
        async {
            Some(serde_json::Map::from_iter([(
                "sure".to_owned(),
                json!(true),
            )]))
        }
    })
}

/// A server offering `versions`, and a client connected to it with `options`.
async fn connected(
    versions: &'static [ProtocolVersion],
    options: HttpClientOptions,
) -> (Probe, McpClient) {
    let probe = Probe::new(versions);
    let url = serve(probe.clone()).await;
    let client = McpClient::connect_http_with(&url, &options).await.unwrap();
    (probe, client)
}

/// Calls the client's tool `name` with `arguments`.
async fn call(client: &McpClient, name: &str, arguments: Value) -> AgentResult<Vec<Content>> {
    let tools = client.toolset().unwrap();
    tools.call(name, &arguments, &ToolContext::default()).await
}

#[tokio::test]
async fn discovers_then_calls_with_the_protocol_headers_on_every_request() {
    let (probe, client) = connected(MODERN, HttpClientOptions::new()).await;
    let out = call(&client, "add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(out[0].as_text(), Some("5"));

    let seen = std::mem::take(&mut *probe.seen());
    let methods: Vec<&str> = seen.headers.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(methods, ["tools/list", "tools/call"]);
    for (method, version, mcp_method, _) in &seen.headers {
        assert_eq!(version.as_deref(), Some("2026-07-28"), "{method}");
        assert_eq!(mcp_method.as_deref(), Some(method.as_str()));
    }
    assert_eq!(seen.headers[1].3.as_deref(), Some("add"));
    client.close().await;
}

#[tokio::test]
async fn input_required_is_answered_by_the_elicitation_handler_and_the_state_echoed() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let (probe, client) = connected(MODERN, agreeing(asked.clone())).await;
    let out = call(&client, "confirm", json!({})).await.unwrap();

    assert_eq!(*asked.lock().unwrap(), ["Go ahead?"]);
    let answer = json!({"action": "accept", "content": {"sure": true}});
    assert_eq!(
        out[0].as_text(),
        Some(format!("answered {answer}").as_str())
    );
    let rounds = probe.seen().confirm_rounds.clone();
    assert_eq!(
        rounds,
        [
            (None, None),
            (Some(STATE.to_owned()), Some(json!({"ok": answer})))
        ]
    );
    client.close().await;
}

#[tokio::test]
async fn without_a_handler_the_question_is_declined_and_the_call_still_ends() {
    let (_probe, client) = connected(MODERN, HttpClientOptions::new()).await;
    let out = call(&client, "confirm", json!({})).await.unwrap();
    assert_eq!(out[0].as_text(), Some(r#"answered {"action":"decline"}"#));
    client.close().await;
}

#[tokio::test]
async fn a_question_the_client_cannot_answer_fails_the_call_saying_what_was_asked() {
    let (_probe, client) = connected(MODERN, HttpClientOptions::new()).await;
    let error = call(&client, "ask_model", json!({})).await.unwrap_err();
    let message = error.to_string();
    assert!(message.contains("sampling"), "{message}");
    assert!(message.contains("`ask_model`"), "{message}");
    client.close().await;
}

#[tokio::test]
async fn tool_changes_arrive_on_the_listen_subscription() {
    let (probe, client) = connected(MODERN, HttpClientOptions::new()).await;
    assert!(!client.tool_names().contains(&"extra".to_owned()));
    let mut changes = client.tool_changes();
    // The subscription is acknowledged before `connect_http` returns, so the server's
    // listener is waiting for this.
    probe.grow.notify_one();
    within("the tools listed again", changes.changed())
        .await
        .unwrap();
    assert!(client.tool_names().contains(&"extra".to_owned()));
    client.close().await;
}

#[tokio::test]
async fn remote_schemas_are_kept_verbatim() {
    let (_probe, client) = connected(MODERN, HttpClientOptions::new()).await;
    let tools = client.toolset().unwrap();
    assert_eq!(tools.get("rich").unwrap().schema(), rich_schema());
    client.close().await;
}

#[tokio::test]
async fn a_server_without_2026_07_28_is_spoken_to_with_initialize() {
    let (probe, client) = connected(LEGACY, HttpClientOptions::new()).await;
    let out = call(&client, "add", json!({"a": 1, "b": 1})).await.unwrap();
    assert_eq!(out[0].as_text(), Some("2"));
    let seen = std::mem::take(&mut *probe.seen());
    assert!(
        seen.headers
            .iter()
            .all(|h| h.1.as_deref() == Some("2025-11-25")),
        "{:?}",
        seen.headers
    );
    client.close().await;
}

#[tokio::test]
async fn a_pinned_older_version_is_spoken_to_a_server_that_offers_newer() {
    const BOTH: &[ProtocolVersion] =
        &[ProtocolVersion::V_2026_07_28, ProtocolVersion::V_2025_11_25];
    let pinned = HttpClientOptions::new().with_protocol_version("2025-11-25");
    let (probe, client) = connected(BOTH, pinned).await;
    assert_eq!(client.protocol_version(), "2025-11-25");
    call(&client, "add", json!({"a": 1, "b": 2})).await.unwrap();
    let seen = std::mem::take(&mut *probe.seen());
    assert!(
        seen.headers
            .iter()
            .all(|h| h.1.as_deref() == Some("2025-11-25"))
    );
    client.close().await;
}

#[tokio::test]
async fn a_pinned_version_the_server_lacks_fails_the_connection_naming_both() {
    let probe = Probe::new(LEGACY);
    let url = serve(probe).await;
    let pinned = HttpClientOptions::new().with_protocol_version("2026-07-28");
    let error = McpClient::connect_http_with(&url, &pinned)
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("2026-07-28") && message.contains("2025-11-25"),
        "{message}"
    );
}

#[tokio::test]
async fn an_unknown_pinned_version_is_refused_naming_the_known_ones() {
    let pinned = HttpClientOptions::new().with_protocol_version("2030-01-01");
    let error = McpClient::connect_http_with("http://127.0.0.1:9/mcp", &pinned)
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("`2030-01-01`"), "{message}");
    assert!(message.contains("2025-11-25, 2026-07-28"), "{message}");
}

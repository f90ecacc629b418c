//! Resources, resource templates, prompts and completions served beside the tools, over
//! Streamable HTTP on both protocol versions: 2025-11-25 sessions (rmcp's client,
//! subscriptions told through the session) and 2026-07-28 requests without a session
//! (caching hints, not-found as -32602, updates through `subscriptions/listen`), with
//! items that need scopes hidden from callers that lack them; and `McpClient` asking for
//! all of it on both versions.

#[path = "support/events.rs"]
mod events;
#[path = "support/listen.rs"]
mod listen;
#[path = "support/raw_http.rs"]
mod raw_http;

use events::{eventually, within};
use listen::Listen;
use raw_http::{Reply, Running, serve_on_loopback};
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, GetPromptRequestParams, PaginatedRequestParams,
    ReadResourceRequestParams, Reference, ResourceContents, ResourceUpdatedNotificationParam,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use std::net::SocketAddr;
use tokio::sync::mpsc;
use toolwright_core::{Content, Principal, State, ToolError, ToolSet, tool, tools};
use toolwright_mcp::prompts::{
    FeatureError, FnPrompt, PromptArgument, PromptMessage, PromptRole, PromptSet,
};
use toolwright_mcp::resources::{
    FeatureErrorKind, FnResource, FnTemplate, ResourceBody, ResourceContent, ResourceInfo,
    ResourceSet,
};
use toolwright_mcp::{
    HttpAuth, HttpClientOptions, HttpOptions, InputRequest, McpClient, McpPeer, McpServer,
    StaticTokens,
};

const VERSION: &str = "2026-07-28";
const PIXEL: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

fn resources() -> ResourceSet {
    let mut set = ResourceSet::new();
    set.add_resource(FnResource::new(
        "config://app",
        ResourceInfo::named("app-config")
            .with_description("The app's settings")
            .with_mime_type("application/json"),
        |_ctx| async { Ok(vec![ResourceContent::json(&json!({"debug": false}))?]) },
    ))
    .unwrap();
    set.add_resource(FnResource::new(
        "logo://png",
        ResourceInfo::named("logo").with_mime_type("image/png"),
        |_ctx| async { Ok(vec![ResourceContent::blob(PIXEL, "image/png")]) },
    ))
    .unwrap();
    set.add_resource(
        FnResource::new(
            "secret://plans",
            ResourceInfo::named("plans"),
            |_ctx| async { Ok(vec![ResourceContent::text("the plans")]) },
        )
        .with_scopes(["admin"]),
    )
    .unwrap();
    let users = FnTemplate::new(
        "users://{id}/profile",
        ResourceInfo::named("profile").with_mime_type("text/plain"),
        |_uri, params, _ctx| async move {
            let id = params.get("id").cloned().unwrap_or_default();
            if id == "ghost" {
                return Err(FeatureError::not_found(format!("no user `{id}`")));
            }
            Ok(vec![ResourceContent::text(format!("profile of {id}"))])
        },
    )
    .unwrap()
    .with_completion(|_variable, value, _resolved| {
        ["alice", "alan", "bob"]
            .into_iter()
            .filter(|name| name.starts_with(value))
            .map(str::to_owned)
            .collect()
    });
    set.add_template(users).unwrap();
    let files = FnTemplate::new(
        "file:///{+path}",
        ResourceInfo::named("file"),
        |_uri, params, ctx| async move {
            let who = ctx
                .state::<Principal>()
                .map_or("nobody".to_owned(), |p| p.subject.clone());
            Ok(vec![ResourceContent::text(format!(
                "{} read by {who}",
                params["path"]
            ))])
        },
    )
    .unwrap()
    .with_scopes(["files:read"]);
    set.add_template(files).unwrap();
    set
}

fn prompts() -> PromptSet {
    let mut set = PromptSet::new();
    set.add(
        FnPrompt::new(
            "review",
            "Asks for a review of some code.",
            vec![
                PromptArgument::required("code", "The code"),
                PromptArgument::optional("focus", "What to look at"),
            ],
            |args, _ctx| async move {
                let focus = args.get("focus").map_or("anything", String::as_str);
                Ok(vec![
                    PromptMessage::user(format!("Review for {focus}:\n{}", args["code"])),
                    PromptMessage::user(Content::image(PIXEL, "image/png")),
                    PromptMessage::assistant(Content::text_resource(
                        "config://app",
                        "application/json",
                        "{}",
                    )),
                ])
            },
        )
        .with_completion(|_argument, value, _resolved| {
            ["security", "speed", "style"]
                .into_iter()
                .filter(|f| f.starts_with(value))
                .map(str::to_owned)
                .collect()
        }),
    )
    .unwrap();
    set.add(
        FnPrompt::new(
            "admin",
            "For administrators.",
            Vec::new(),
            |_args, _ctx| async { Ok(vec![PromptMessage::user("admin")]) },
        )
        .with_scopes(["admin"]),
    )
    .unwrap();
    set
}

fn server() -> McpServer {
    McpServer::new(ToolSet::new())
        .with_resources(resources())
        .with_prompts(prompts())
}

/// rmcp's client, reporting each `notifications/resources/updated` URI.
#[derive(Clone)]
struct Updates(mpsc::UnboundedSender<String>);

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

async fn session(
    running: &Running,
) -> (
    RunningService<RoleClient, Updates>,
    mpsc::UnboundedReceiver<String>,
) {
    // reqwest is built without a default TLS provider; installing it twice is harmless.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (tx, rx) = mpsc::unbounded_channel();
    let url = format!("http://{}/mcp", running.addr);
    let client = Updates(tx)
        .serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .unwrap();
    (client, rx)
}

fn error_code(error: ServiceError) -> (ErrorCode, String) {
    match error {
        ServiceError::McpError(error) => (error.code, error.message.into_owned()),
        other => panic!("expected a JSON-RPC error, got {other}"),
    }
}

#[tokio::test]
async fn a_2025_session_lists_reads_and_completes() {
    let server = server();
    let running = serve_on_loopback(server.clone(), HttpOptions::default()).await;
    let (client, _updates) = session(&running).await;
    let peer = client.peer();

    let info = peer.peer_info().unwrap();
    let resources = info.capabilities.resources.as_ref().unwrap();
    assert_eq!(
        (resources.subscribe, resources.list_changed),
        (Some(true), Some(true))
    );
    assert!(info.capabilities.prompts.is_some());
    assert!(info.capabilities.completions.is_some());

    let listed = peer.list_resources(None).await.unwrap().resources;
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["config://app", "logo://png", "secret://plans"]);
    assert_eq!(listed[0].description.as_deref(), Some("The app's settings"));
    // Without authentication, scopes are not enforced (as for tools).
    let templates = peer.list_resource_templates(None).await.unwrap();
    let templates: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    assert_eq!(templates, ["users://{id}/profile", "file:///{+path}"]);

    let read = |uri: &str| peer.read_resource(ReadResourceRequestParams::new(uri));
    let config = read("config://app").await.unwrap();
    assert!(matches!(
        &config.contents[..],
        [ResourceContents::TextResourceContents { uri, mime_type: Some(mime), text, .. }]
            if uri == "config://app" && mime == "application/json" && text == r#"{"debug":false}"#
    ));
    let logo = read("logo://png").await.unwrap();
    assert!(matches!(
        &logo.contents[..],
        [ResourceContents::BlobResourceContents { mime_type: Some(mime), blob, .. }]
            if mime == "image/png" && blob == PIXEL
    ));
    let profile = read("users://alice/profile").await.unwrap();
    assert!(matches!(
        &profile.contents[..],
        [ResourceContents::TextResourceContents { uri, text, .. }]
            if uri == "users://alice/profile" && text == "profile of alice"
    ));
    let file = read("file:///etc/app/conf.toml").await.unwrap();
    assert!(matches!(
        &file.contents[..],
        [ResourceContents::TextResourceContents { text, .. }]
            if text == "etc/app/conf.toml read by nobody"
    ));

    // Not found, on a 2025 session: -32002, naming the URI.
    for missing in [
        "nothing://here",
        "users://a/b/profile",
        "users://ghost/profile",
    ] {
        let (code, message) = error_code(read(missing).await.unwrap_err());
        assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND, "{missing}: {message}");
    }

    let completion = peer
        .complete(CompleteRequestParams::new(
            Reference::for_resource("users://{id}/profile"),
            ArgumentInfo::new("id", "al"),
        ))
        .await
        .unwrap()
        .completion;
    assert_eq!(completion.values, ["alice", "alan"]);
    assert_eq!(completion.has_more, Some(false));
    let (code, message) = error_code(
        peer.complete(CompleteRequestParams::new(
            Reference::for_resource("users://{id}/profile"),
            ArgumentInfo::new("name", ""),
        ))
        .await
        .unwrap_err(),
    );
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(
        message.contains("has no `name` to complete; it has: `id`"),
        "{message}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn prompts_take_their_arguments_and_refuse_wrong_ones() {
    let server = server();
    let running = serve_on_loopback(server.clone(), HttpOptions::default()).await;
    let (client, _updates) = session(&running).await;
    let peer = client.peer();

    let listed = peer.list_prompts(None).await.unwrap().prompts;
    let review = listed.iter().find(|p| p.name == "review").unwrap();
    let arguments = review.arguments.as_ref().unwrap();
    assert_eq!(
        arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect::<Vec<_>>(),
        [("code", Some(true)), ("focus", Some(false))]
    );

    let get = |arguments: Value| {
        let mut params = GetPromptRequestParams::new("review");
        params.arguments = arguments.as_object().cloned();
        peer.get_prompt(params)
    };
    let result = get(json!({"code": "fn f() {}", "focus": "speed"}))
        .await
        .unwrap();
    let messages = serde_json::to_value(&result.messages).unwrap();
    assert_eq!(
        messages[0]["content"],
        json!({"type": "text", "text": "Review for speed:\nfn f() {}"})
    );
    assert_eq!(messages[1]["content"]["type"], "image");
    assert_eq!(messages[1]["content"]["mimeType"], "image/png");
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"]["type"], "resource");
    assert_eq!(messages[2]["content"]["resource"]["uri"], "config://app");
    assert_eq!(
        result.description.as_deref(),
        Some("Asks for a review of some code.")
    );

    for (arguments, says) in [
        (json!({}), "needs the argument(s) code"),
        (
            json!({"code": "x", "colour": "red"}),
            "no argument `colour`",
        ),
        (json!({"code": 7}), "`code` must be a string"),
    ] {
        let (code, message) = error_code(get(arguments).await.unwrap_err());
        assert_eq!(code, ErrorCode::INVALID_PARAMS);
        assert!(message.contains(says), "{message}");
    }
    let (code, message) = error_code(
        peer.get_prompt(GetPromptRequestParams::new("nope"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert!(message.contains("no prompt named `nope`"), "{message}");

    let completion = peer
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("review"),
            ArgumentInfo::new("focus", "s"),
        ))
        .await
        .unwrap()
        .completion;
    assert_eq!(completion.values, ["security", "speed", "style"]);
    client.cancel().await.unwrap();
}

// rmcp marks `resources/subscribe` legacy: it is how 2025 sessions subscribe.
#[allow(deprecated)]
#[tokio::test]
async fn a_2025_session_hears_of_updates_to_what_it_subscribed_to_until_it_unsubscribes() {
    let server = server();
    let running = serve_on_loopback(server.clone(), HttpOptions::default()).await;
    let (client, mut updates) = session(&running).await;
    let (bystander, _bystander_updates) = session(&running).await;
    let peer = client.peer();

    // A URI nothing answers to cannot be subscribed to.
    let (code, _) = error_code(
        peer.subscribe(SubscribeRequestParams::new("nothing://here"))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND);

    peer.subscribe(SubscribeRequestParams::new("users://alice/profile"))
        .await
        .unwrap();
    // Only the subscribed session is told, and only of the URI it named.
    assert_eq!(server.resource_updated("users://bob/profile").await, 0);
    assert_eq!(server.resource_updated("users://alice/profile").await, 1);
    let uri = within("the update", updates.recv()).await.unwrap();
    assert_eq!(uri, "users://alice/profile");

    peer.unsubscribe(UnsubscribeRequestParams::new("users://alice/profile"))
        .await
        .unwrap();
    assert_eq!(server.resource_updated("users://alice/profile").await, 0);

    // A closed session is dropped, not told.
    peer.subscribe(SubscribeRequestParams::new("config://app"))
        .await
        .unwrap();
    client.cancel().await.unwrap();
    eventually("the closed session is dropped", async || {
        server.resource_updated("config://app").await == 0
    })
    .await;
    bystander.cancel().await.unwrap();
}

/// The `_meta` a 2026-07-28 request carries.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// One 2026-07-28 request, as the caller `token` names (if any).
async fn request(addr: SocketAddr, token: Option<&str>, method: &str, mut params: Value) -> Reply {
    if params.get("_meta").is_none() {
        params["_meta"] = meta();
    }
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("MCP-Protocol-Version", VERSION), ("Mcp-Method", method)];
    // What the `Mcp-Name` header mirrors: a prompt's name, or the URI read.
    let name = params["name"]
        .as_str()
        .or(params["uri"].as_str())
        .map(str::to_owned);
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    raw_http::post(addr, None, &headers, &raw_http::rpc(3, method, params))
        .await
        .unwrap()
}

async fn result(addr: SocketAddr, token: Option<&str>, method: &str, params: Value) -> Value {
    let reply = request(addr, token, method, params).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let answer = reply.answer().unwrap();
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].clone()
}

#[tokio::test]
async fn a_2026_request_reads_with_caching_hints_and_gets_minus_32602_for_nothing() {
    let server = server();
    let running = serve_on_loopback(server, HttpOptions::default()).await;
    let addr = running.addr;

    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let listed = result(addr, None, method, json!({})).await;
        assert_eq!(listed["ttlMs"], json!(0), "{method}: {listed}");
        assert_eq!(listed["cacheScope"], json!("private"), "{method}: {listed}");
    }
    let read = result(
        addr,
        None,
        "resources/read",
        json!({"uri": "users://bob/profile"}),
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "profile of bob");
    assert_eq!(read["contents"][0]["mimeType"], "text/plain");
    assert_eq!(read["cacheScope"], "private");
    assert!(read["ttlMs"].is_u64(), "{read}");

    let reply = request(
        addr,
        None,
        "resources/read",
        json!({"uri": "nothing://here"}),
    )
    .await;
    let error = &reply.answer().unwrap()["error"];
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("nothing://here"),
        "{error}"
    );

    let prompt = result(
        addr,
        None,
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "x"}}),
    )
    .await;
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Review for anything:\nx"
    );
    let completion = result(
        addr,
        None,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "review"},
               "argument": {"name": "focus", "value": "st"}}),
    )
    .await;
    assert_eq!(completion["completion"]["values"], json!(["style"]));
}

#[tokio::test]
async fn a_listen_stream_hears_of_the_resources_it_named_and_of_list_changes() {
    let server = server();
    let running = serve_on_loopback(server.clone(), HttpOptions::default()).await;
    let mut stream = Listen::open(
        running.addr,
        json!({"resourceSubscriptions": ["users://alice/profile"],
               "resourcesListChanged": true, "promptsListChanged": true}),
        None,
    )
    .await;
    let ack = stream.next().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    eventually("the stream is open", async || {
        server.open_listen_streams() == 1
    })
    .await;

    // A URI the stream did not name is not sent to it.
    assert_eq!(server.resource_updated("users://bob/profile").await, 0);
    assert_eq!(server.resource_updated("users://alice/profile").await, 1);
    let update = stream.next().await.unwrap();
    assert_eq!(update["method"], "notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "users://alice/profile");

    let mut fewer = ResourceSet::new();
    fewer
        .add_resource_arc(resources().resources()[0].clone())
        .unwrap();
    server.replace_resources(fewer).await;
    let changed = stream.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/resources/list_changed");
    server.replace_prompts(PromptSet::new()).await;
    let changed = stream.next().await.unwrap();
    assert_eq!(changed["method"], "notifications/prompts/list_changed");

    let listed = result(running.addr, None, "resources/list", json!({})).await;
    assert_eq!(listed["resources"].as_array().unwrap().len(), 1);
    let listed = result(running.addr, None, "prompts/list", json!({})).await;
    assert_eq!(listed["prompts"], json!([]));
}

#[tokio::test]
async fn a_listen_stream_never_hears_of_a_resource_its_caller_may_not_read() {
    let tokens = StaticTokens::new()
        .with_token(
            "admin-token",
            Principal::new("admin").with_scopes(["admin"]),
        )
        .with_token("guest-token", Principal::new("guest"));
    let server = server();
    let options = HttpOptions::default().with_auth(HttpAuth::new(tokens));
    let running = serve_on_loopback(server.clone(), options).await;
    let filter = json!({"resourceSubscriptions": ["secret://plans", "config://app"]});
    let mut guest = Listen::open(running.addr, filter.clone(), Some("guest-token")).await;
    let mut admin = Listen::open(running.addr, filter, Some("admin-token")).await;
    for stream in [&mut guest, &mut admin] {
        let ack = stream.next().await.unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    }
    eventually("both streams are open", async || {
        server.open_listen_streams() == 2
    })
    .await;

    // The guest named the admin's resource in its filter: only the admin is told.
    assert_eq!(server.resource_updated("secret://plans").await, 1);
    let update = admin.next().await.unwrap();
    assert_eq!(update["params"]["uri"], "secret://plans");
    // A resource both may read reaches both; the guest's first notice is this one, so
    // it was never told of the one it may not read.
    assert_eq!(server.resource_updated("config://app").await, 2);
    let update = guest.next().await.unwrap();
    assert_eq!(update["params"]["uri"], "config://app");
    let update = admin.next().await.unwrap();
    assert_eq!(update["params"]["uri"], "config://app");
}

#[tokio::test]
async fn items_that_need_scopes_do_not_exist_for_callers_without_them() {
    let tokens = StaticTokens::new()
        .with_token(
            "reader-token",
            Principal::new("reader").with_scopes(["files:read"]),
        )
        .with_token("guest-token", Principal::new("guest"));
    let options = HttpOptions::default().with_auth(HttpAuth::new(tokens));
    let running = serve_on_loopback(server(), options).await;
    let addr = running.addr;

    let listed = result(addr, Some("guest-token"), "resources/list", json!({})).await;
    let uris: Vec<&Value> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["uri"])
        .collect();
    assert_eq!(uris, [&json!("config://app"), &json!("logo://png")]);
    let reply = request(
        addr,
        Some("reader-token"),
        "resources/read",
        json!({"uri": "secret://plans"}),
    )
    .await;
    assert_eq!(reply.answer().unwrap()["error"]["code"], json!(-32602));
    let listed = result(
        addr,
        Some("guest-token"),
        "resources/templates/list",
        json!({}),
    )
    .await;
    assert_eq!(
        listed["resourceTemplates"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
    let reply = request(
        addr,
        Some("guest-token"),
        "resources/read",
        json!({"uri": "file:///etc/shadow"}),
    )
    .await;
    assert_eq!(reply.answer().unwrap()["error"]["code"], json!(-32602));
    let prompts = result(addr, Some("guest-token"), "prompts/list", json!({})).await;
    assert!(
        prompts["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["name"] != "admin"),
        "{prompts}"
    );
    let reply = request(
        addr,
        Some("guest-token"),
        "prompts/get",
        json!({"name": "admin"}),
    )
    .await;
    assert_eq!(reply.answer().unwrap()["error"]["code"], json!(-32602));
    let reply = request(
        addr,
        Some("guest-token"),
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "admin"},
               "argument": {"name": "x", "value": ""}}),
    )
    .await;
    assert_eq!(reply.answer().unwrap()["error"]["code"], json!(-32602));

    // With the scope, the template is there, and the read sees who asked.
    let read = result(
        addr,
        Some("reader-token"),
        "resources/read",
        json!({"uri": "file:///etc/shadow"}),
    )
    .await;
    assert_eq!(read["contents"][0]["text"], "etc/shadow read by reader");
}

#[tokio::test]
async fn our_client_lists_reads_gets_and_completes_on_both_protocol_versions() {
    let running = serve_on_loopback(server(), HttpOptions::default()).await;
    let url = format!("http://{}/mcp", running.addr);
    for version in ["2025-11-25", "2026-07-28"] {
        let options = HttpClientOptions::new().with_protocol_version(version);
        let client = McpClient::connect_http_with(&url, &options).await.unwrap();
        assert_eq!(client.protocol_version(), version);

        let listed = client.list_resources().await.unwrap();
        assert_eq!(listed[0].uri, "config://app");
        assert_eq!(
            listed[0].info.mime_type.as_deref(),
            Some("application/json")
        );
        let templates = client.list_resource_templates().await.unwrap();
        assert_eq!(templates[0].template, "users://{id}/profile");

        let read = client.read_resource("users://bob/profile").await.unwrap();
        assert_eq!(read[0].body, ResourceBody::Text("profile of bob".into()));
        assert_eq!(read[0].uri.as_deref(), Some("users://bob/profile"));
        let logo = client.read_resource("logo://png").await.unwrap();
        assert_eq!(logo[0].body, ResourceBody::Blob(PIXEL.into()));
        // As context for an agent: an embedded resource block.
        let context = client.resource_content("config://app").await.unwrap();
        assert_eq!(
            context,
            [Content::text_resource(
                "config://app",
                "application/json",
                r#"{"debug":false}"#
            )]
        );
        let missing = client.read_resource("nothing://here").await.unwrap_err();
        assert!(missing.message().contains("nothing://here"), "{missing}");

        let prompts = client.list_prompts().await.unwrap();
        assert_eq!(prompts[0].name, "review");
        assert_eq!(
            prompts[0].arguments,
            [
                PromptArgument::required("code", "The code"),
                PromptArgument::optional("focus", "What to look at")
            ]
        );
        let arguments = [("code".to_owned(), "x".to_owned())].into_iter().collect();
        let messages = client.get_prompt("review", &arguments).await.unwrap();
        assert_eq!(messages[0], PromptMessage::user("Review for anything:\nx"));
        assert_eq!(messages[2].role, PromptRole::Assistant);
        let refused = client
            .get_prompt("review", &Default::default())
            .await
            .unwrap_err();
        assert_eq!(refused.kind(), FeatureErrorKind::InvalidArguments);

        let focus = client
            .complete_prompt_argument("review", "focus", "se")
            .await
            .unwrap();
        assert_eq!(focus, ["security"]);
        let ids = client
            .complete_template_variable("users://{id}/profile", "id", "b")
            .await
            .unwrap();
        assert_eq!(ids, ["bob"]);
        client.close().await;
    }
}

/// A server whose prompt and tool, both named `ask`, ask their caller for a word.
fn asking_server() -> McpServer {
    fn question() -> InputRequest {
        let schema = json!({"type": "object", "properties": {"word": {"type": "string"}}});
        InputRequest::elicit("word", "Which word?", schema)
    }
    let mut prompts = PromptSet::new();
    prompts
        .add(FnPrompt::new(
            "ask",
            "Asks for a word.",
            Vec::new(),
            |_args, ctx| async move {
                let peer = ctx.state::<McpPeer>().unwrap();
                let answer = peer.ask(question()).await?;
                Ok(vec![PromptMessage::user(format!(
                    "the word is {}",
                    answer["content"]["word"]
                ))])
            },
        ))
        .unwrap();
    /// Asks for a word.
    #[tool]
    async fn ask(peer: State<McpPeer>) -> Result<String, ToolError> {
        let answer = peer.ask(question()).await?;
        Ok(answer.to_string())
    }
    McpServer::new(tools![ask]).with_prompts(prompts)
}

#[tokio::test]
async fn a_2026_prompt_asks_its_caller_in_rounds_and_its_state_is_its_own() {
    let running = serve_on_loopback(asking_server(), HttpOptions::default()).await;
    let addr = running.addr;
    // Asked of a client that cannot answer, the prompt fails saying so, asking nothing.
    let reply = request(addr, None, "prompts/get", json!({"name": "ask"})).await;
    let error = &reply.answer().unwrap()["error"];
    assert_eq!(error["code"], json!(-32603), "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("capability, which this client did not declare"),
        "{error}"
    );

    let mut can_elicit = meta();
    can_elicit["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    let get = |extra: Value| {
        let mut params = json!({"name": "ask", "_meta": can_elicit});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        request(addr, None, "prompts/get", params)
    };
    let first = get(json!({})).await.answer().unwrap()["result"].clone();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(
        first["inputRequests"]["word"]["method"], "elicitation/create",
        "{first}"
    );
    let state = first["requestState"].as_str().unwrap().to_owned();
    let answer = json!({"word": {"action": "accept", "content": {"word": "tern"}}});
    let second = get(json!({"inputResponses": answer, "requestState": state}))
        .await
        .answer()
        .unwrap()["result"]
        .clone();
    assert_eq!(
        second["messages"][0]["content"]["text"],
        "the word is \"tern\""
    );

    // The state of the tool's round, which has the same name, does not answer the
    // prompt's; nor is a state taken twice.
    let call = result(
        addr,
        None,
        "tools/call",
        json!({"name": "ask", "arguments": {}, "_meta": can_elicit}),
    )
    .await;
    let tool_state = call["requestState"].as_str().unwrap().to_owned();
    for state in [tool_state, state] {
        let reply = get(json!({"inputResponses": answer, "requestState": state})).await;
        let error = &reply.answer().unwrap()["error"];
        assert_eq!(error["code"], json!(-32602), "{error}");
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("`requestState` was refused"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn long_lists_come_in_pages_and_a_foreign_cursor_is_refused() {
    let mut options = toolwright_mcp::ServerOptions::default();
    options.page_size = 1;
    let server = McpServer::with_options(ToolSet::new(), options)
        .with_resources(resources())
        .with_prompts(prompts());
    let running = serve_on_loopback(server, HttpOptions::default()).await;
    let (client, _updates) = session(&running).await;
    let peer = client.peer();

    let first = peer.list_resources(None).await.unwrap();
    assert_eq!(first.resources.len(), 1);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = peer
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.resources[0].uri, "logo://png");
    assert!(second.next_cursor.is_some());
    assert_eq!(peer.list_all_resources().await.unwrap().len(), 3);
    // Every page, as rmcp's client walks them.
    assert_eq!(peer.list_all_resource_templates().await.unwrap().len(), 2);
    assert_eq!(peer.list_all_prompts().await.unwrap().len(), 2);

    // A resources cursor is not a prompts cursor; garbage is no cursor at all.
    let resources_cursor = first.next_cursor.unwrap();
    for cursor in [
        resources_cursor,
        "prompts-zz".to_owned(),
        "\u{0}".to_owned(),
    ] {
        let refused = peer
            .list_prompts(Some(
                PaginatedRequestParams::default().with_cursor(Some(cursor.clone())),
            ))
            .await
            .unwrap_err();
        let (code, message) = error_code(refused);
        assert_eq!(code, ErrorCode::INVALID_PARAMS, "{cursor}");
        assert!(message.contains("invalid cursor"), "{message}");
    }
    client.cancel().await.unwrap();
}

/// rmcp's client, counting `notifications/resources/list_changed` and
/// `notifications/prompts/list_changed`.
#[derive(Clone)]
struct ListChanges(mpsc::UnboundedSender<&'static str>);

impl ClientHandler for ListChanges {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send("resources");
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts");
    }
}

#[tokio::test]
async fn a_2025_session_is_told_when_the_resources_or_prompts_change() {
    let server = server();
    let running = serve_on_loopback(server.clone(), HttpOptions::default()).await;
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (tx, mut changes) = mpsc::unbounded_channel();
    let client = ListChanges(tx)
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "http://{}/mcp",
            running.addr
        )))
        .await
        .unwrap();
    eventually("the session joins", async || {
        server.connected_clients() == 1
    })
    .await;

    server.replace_resources(ResourceSet::new()).await;
    assert_eq!(within("a notice", changes.recv()).await, Some("resources"));
    assert!(
        client
            .peer()
            .list_resources(None)
            .await
            .unwrap()
            .resources
            .is_empty()
    );
    server.replace_prompts(PromptSet::new()).await;
    assert_eq!(within("a notice", changes.recv()).await, Some("prompts"));
    assert!(
        client
            .peer()
            .list_prompts(None)
            .await
            .unwrap()
            .prompts
            .is_empty()
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn hostile_uris_are_not_found_and_the_server_keeps_answering() {
    let running = serve_on_loopback(server(), HttpOptions::default()).await;
    let (client, _updates) = session(&running).await;
    let peer = client.peer();
    let long = format!("users://{}/profile", "a/".repeat(50_000));
    for uri in [
        "",
        "users://{id}/profile",
        "users://%zz/profile",
        "users://%ff%fe/profile",
        "users://\u{0}/profile",
        "users://名前/profile",
        "file:///",
        long.as_str(),
    ] {
        let outcome = peer
            .read_resource(ReadResourceRequestParams::new(uri))
            .await;
        match outcome {
            // `file:///{+path}` takes an empty path: a read, not a failure.
            Ok(read) => assert_eq!(uri, "file:///", "{read:?}"),
            Err(error) => {
                let (code, _) = error_code(error);
                assert_eq!(code, ErrorCode::RESOURCE_NOT_FOUND, "{uri:.40}");
            }
        }
    }
    let config = peer
        .read_resource(ReadResourceRequestParams::new("config://app"))
        .await
        .unwrap();
    assert_eq!(config.contents.len(), 1);
    client.cancel().await.unwrap();
}

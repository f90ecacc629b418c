//! Approval over MCP: a call that needs a person's approval asks the client's user
//! (elicitation) and runs only when they accept; a client that cannot ask runs nothing.
//! A call waiting for its client's user holds no place under the server's limit.

#[path = "support/events.rs"]
mod events;

use events::{Counter, within};
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientJsonRpcMessage,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};
use sse_stream::Sse;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Semaphore, mpsc};
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolError, ToolErrorKind, ToolSet, async_trait,
    tool::{ApprovalPolicy, ToolAnnotations},
    toolset::ToolConfig,
};
use toolwright_mcp::{ApprovalMode, McpClient, McpHttpServer, McpPeer, McpServer, ServerOptions};

/// Counts its runs; needs approval for production only (its own rule).
struct Deploy(Arc<AtomicUsize>);

#[async_trait]
impl Tool for Deploy {
    fn name(&self) -> &'static str {
        "deploy"
    }

    fn description(&self) -> &'static str {
        "Deploys the service."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"environment": {"type": "string"}}})
    }

    fn approval(&self, args: &Value) -> ApprovalPolicy {
        ApprovalPolicy::from(args["environment"] == "production")
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(vec![Content::text("deployed")])
    }
}

/// Counts its runs; destructive, with no approval rule of its own.
struct Wipe(Arc<AtomicUsize>);

#[async_trait]
impl Tool for Wipe {
    fn name(&self) -> &'static str {
        "wipe"
    }

    fn description(&self) -> &'static str {
        "Deletes every record."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            destructive: Some(true),
            ..ToolAnnotations::default()
        }
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(vec![Content::text("wiped")])
    }
}

struct Server {
    url: String,
    deploys: Arc<AtomicUsize>,
    wipes: Arc<AtomicUsize>,
    stop: tokio_util::sync::CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve(options: ServerOptions) -> Server {
    let (deploys, wipes) = (Arc::default(), Arc::default());
    let mut tools = ToolSet::new();
    tools
        .register_tool(Deploy(Arc::clone(&deploys)))
        .unwrap()
        .register_tool(Wipe(Arc::clone(&wipes)))
        .unwrap();
    let http = McpHttpServer::bind(McpServer::with_options(tools, options), "127.0.0.1:0")
        .await
        .unwrap();
    let server = Server {
        url: http.url(),
        deploys,
        wipes,
        stop: http.shutdown_token(),
    };
    tokio::spawn(http.run());
    server
}

/// A client whose user answers every elicitation with `action` once `answers` lets
/// them, and what they were asked (`questions` counts the questions as they come).
#[derive(Clone)]
struct Person {
    action: ElicitationAction,
    asked: Arc<Mutex<Vec<String>>>,
    questions: Counter,
    answers: Arc<Semaphore>,
}

impl Person {
    /// Answers at once.
    fn prompt(action: ElicitationAction) -> Self {
        Self::slow(action, Semaphore::MAX_PERMITS)
    }

    /// Answers only as permits are added to `answers`.
    fn slow(action: ElicitationAction, answers: usize) -> Self {
        Self {
            action,
            asked: Arc::default(),
            questions: Counter::default(),
            answers: Arc::new(Semaphore::new(answers)),
        }
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("person", "0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        self.questions.add();
        self.answers.acquire().await.unwrap().forget();
        Ok(ElicitResult::new(self.action.clone()))
    }
}

async fn connect(
    url: &str,
    action: ElicitationAction,
) -> (RunningService<RoleClient, Person>, Person) {
    connect_as(url, Person::prompt(action)).await
}

async fn connect_as(url: &str, person: Person) -> (RunningService<RoleClient, Person>, Person) {
    // reqwest's rustls has no built-in crypto provider in this workspace (see
    // `McpClient::connect_http`); a process-wide one must exist before a client is built.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = person
        .clone()
        .serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
        .await
        .unwrap();
    (client, person)
}

async fn call(
    client: &RunningService<RoleClient, Person>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let args = args.as_object().cloned().unwrap();
    client
        .peer()
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn gated_calls_ask_the_user_and_run_only_once_accepted() {
    let server = serve(ServerOptions::default()).await;
    let (client, person) = connect(&server.url, ElicitationAction::Accept).await;

    // Needs no approval: runs without asking.
    let result = call(&client, "deploy", json!({"environment": "staging"})).await;
    assert_eq!(result.is_error, Some(false));
    assert!(person.asked.lock().unwrap().is_empty());

    // The tool's own rule, then the destructive default: each asks, then runs.
    let result = call(&client, "deploy", json!({"environment": "production"})).await;
    assert_eq!(text(&result), "deployed");
    let result = call(&client, "wipe", json!({})).await;
    assert_eq!(text(&result), "wiped");
    assert_eq!(server.deploys.load(Ordering::SeqCst), 2);
    assert_eq!(server.wipes.load(Ordering::SeqCst), 1);

    let asked = person.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[0].contains("`deploy`") && asked[0].contains("production"));
    assert!(asked[1].contains("`wipe`") && asked[1].contains("Deletes every record."));
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_declined_or_dismissed_approval_runs_nothing() {
    let server = serve(ServerOptions::default()).await;
    for (action, says) in [
        (ElicitationAction::Decline, "declined"),
        (ElicitationAction::Cancel, "dismissed"),
    ] {
        let (client, person) = connect(&server.url, action).await;
        for (name, args) in [
            ("deploy", json!({"environment": "production"})),
            ("wipe", json!({})),
        ] {
            let result = call(&client, name, args).await;
            assert_eq!(result.is_error, Some(true), "{name}");
            let text = text(&result);
            assert!(
                text.contains(says) && text.contains("did not run"),
                "{text}"
            );
            let meta = serde_json::to_value(&result).unwrap()["_meta"].to_string();
            assert!(meta.contains(r#""denied""#), "the kind is kept: {meta}");
        }
        assert_eq!(person.asked.lock().unwrap().len(), 2);
        let _ = client.cancel().await;
    }
    assert_eq!(server.deploys.load(Ordering::SeqCst), 0);
    assert_eq!(server.wipes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_client_that_cannot_ask_its_user_runs_nothing_gated() {
    let server = serve(ServerOptions::default()).await;
    // Our own client declares no elicitation.
    let client = McpClient::connect_http(&server.url).await.unwrap();
    let set = client.toolset().unwrap();
    let ctx = ToolContext::default();
    for (name, args) in [
        ("deploy", json!({"environment": "production"})),
        ("wipe", json!({})),
    ] {
        let error = set.call(name, &args, &ctx).await.unwrap_err();
        assert_eq!(
            error.tool_error_kind(),
            Some(ToolErrorKind::Denied),
            "{name}"
        );
        assert!(
            error.to_string().contains("does not support elicitation"),
            "{error}"
        );
    }
    let out = set
        .call("deploy", &json!({"environment": "staging"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out, vec![Content::text("deployed")]);
    assert_eq!(server.deploys.load(Ordering::SeqCst), 1, "only staging ran");
    assert_eq!(server.wipes.load(Ordering::SeqCst), 0);
    client.close().await;
}

#[tokio::test]
async fn trusting_the_client_or_the_config_runs_without_asking() {
    // The host confirms calls itself.
    let mut options = ServerOptions::default();
    options.approval = ApprovalMode::TrustClient;
    let trusting = serve(options).await;
    // Destructive tools need no approval under this config; a tool's own rule still does.
    let mut options = ServerOptions::default();
    options.tool_config = ToolConfig::default();
    options.tool_config.destructive_requires_approval = false;
    let lenient = serve(options).await;

    let (client, person) = connect(&trusting.url, ElicitationAction::Decline).await;
    assert_eq!(text(&call(&client, "wipe", json!({})).await), "wiped");
    let result = call(&client, "deploy", json!({"environment": "production"})).await;
    assert_eq!(text(&result), "deployed");
    assert!(person.asked.lock().unwrap().is_empty());
    let _ = client.cancel().await;

    let (client, person) = connect(&lenient.url, ElicitationAction::Decline).await;
    assert_eq!(text(&call(&client, "wipe", json!({})).await), "wiped");
    let result = call(&client, "deploy", json!({"environment": "production"})).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    assert_eq!(lenient.deploys.load(Ordering::SeqCst), 0);
    let _ = client.cancel().await;
}

type Headers = HashMap<HeaderName, HeaderValue>;
type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;
type StreamResult =
    Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<reqwest::Error>>;

/// rmcp's HTTP client, reporting each message the server took (the POST was answered)
/// to `taken`. The server queues a session's messages, in the order it took them, for
/// its one service loop.
#[derive(Clone)]
struct Reporting {
    http: reqwest::Client,
    taken: mpsc::UnboundedSender<Value>,
}

impl Reporting {
    fn report(&self, message: Value, posted: &PostResult) {
        if posted.is_ok() {
            let _ = self.taken.send(message);
        }
    }
}

impl StreamableHttpClient for Reporting {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
    ) -> PostResult {
        let sent = serde_json::to_value(&message).unwrap();
        let posted = self
            .http
            .post_message(uri, message, session_id, auth, headers)
            .await;
        self.report(sent, &posted);
        posted
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> PostResult {
        let sent = serde_json::to_value(&message).unwrap();
        let posted = self
            .http
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth,
                headers,
                max_sse_event_size,
            )
            .await;
        self.report(sent, &posted);
        posted
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        let sent = serde_json::to_value(&message).unwrap();
        let posted = self
            .http
            .post_message_with_response_limits(uri, message, session_id, auth, headers, limits)
            .await;
        self.report(sent, &posted);
        posted
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        self.http
            .delete_session(uri, session_id, auth, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
    ) -> StreamResult {
        self.http
            .get_stream(uri, session_id, last_event_id, auth, headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> StreamResult {
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth,
                headers,
                max_sse_event_size,
            )
            .await
    }
}

/// Waits until the server has taken a message `matching`, skipping others.
async fn taken(
    taken: &mut mpsc::UnboundedReceiver<Value>,
    what: &str,
    matching: impl Fn(&Value) -> bool,
) {
    within(what, async {
        loop {
            let message = taken.recv().await.expect("the client is running");
            if matching(&message) {
                return;
            }
        }
    })
    .await;
}

#[tokio::test]
async fn a_call_cancelled_while_its_user_decides_never_runs_even_if_they_accept() {
    let server = serve(ServerOptions::default()).await;
    let person = Person::slow(ElicitationAction::Accept, 0);
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (reported, mut taken_by_server) = mpsc::unbounded_channel();
    let http = Reporting {
        http: reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap(),
        taken: reported,
    };
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(server.url.clone()),
    );
    let client = person.clone().serve(transport).await.unwrap();
    let production = || {
        let args = json!({"environment": "production"});
        CallToolRequestParams::new("deploy").with_arguments(args.as_object().cloned().unwrap())
    };
    // The request is dropped (and cancelled) while the question is open.
    tokio::select! {
        _ = client.peer().call_tool(production()) => panic!("answered before the user decided"),
        () = person.questions.reaches(1, "the user was asked") => {}
    }
    taken(
        &mut taken_by_server,
        "the server took the cancellation",
        |message| message["method"] == "notifications/cancelled",
    )
    .await;
    // Then the user accepts: too late, the call was cancelled.
    person.answers.add_permits(1);
    taken(
        &mut taken_by_server,
        "the server took the user's acceptance",
        |message| message["result"]["action"] == "accept",
    )
    .await;
    // Another gated call, sent once the server had the acceptance, so its service loop
    // handles it after the acceptance: by its answer the first call would have run.
    person.answers.add_permits(1);
    let result = call(&client, "deploy", json!({"environment": "production"})).await;
    assert_eq!(text(&result), "deployed", "{result:?}");
    assert_eq!(
        person.questions.get(),
        2,
        "the second call was not asked about"
    );
    assert_eq!(
        server.deploys.load(Ordering::SeqCst),
        1,
        "the call cancelled while its user decided ran once they accepted"
    );
    let _ = client.cancel().await;
}

/// Asks its client's user to go on (as a tool asking for input or sampling does), and
/// answers once they do.
struct AsksItsUser;

#[async_trait]
impl Tool for AsksItsUser {
    fn name(&self) -> &str {
        "asks_its_user"
    }

    fn description(&self) -> &str {
        "Asks the calling client's user to go on."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let peer = ctx
            .state::<McpPeer>()
            .ok_or_else(|| ToolError::execution("no MCP peer"))?;
        let question = json!({
            "mode": "form",
            "message": "Go on?",
            "requestedSchema": {"type": "object", "properties": {}},
        });
        let answer = peer.request("elicitation/create", question).await?;
        Ok(vec![Content::text(answer["action"].to_string())])
    }
}

// Eight calls wait on their users under a limit of eight calls in flight: each gives its
// place back while it waits, so a ninth client's call runs meanwhile; each takes a place
// again once its user answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_waiting_on_their_users_do_not_starve_a_ninth_clients_call() {
    let mut tools = ToolSet::new();
    tools
        .register_tool(AsksItsUser)
        .unwrap()
        .register_tool(Wipe(Arc::default()))
        .unwrap();
    let mut options = ServerOptions::default();
    options.tool_config = ToolConfig::default().with_max_concurrency(8);
    options.approval = ApprovalMode::TrustClient;
    let http = McpHttpServer::bind(McpServer::with_options(tools, options), "127.0.0.1:0")
        .await
        .unwrap();
    let (url, stop) = (http.url(), http.shutdown_token());
    tokio::spawn(http.run());

    let person = Person::slow(ElicitationAction::Accept, 0);
    let mut waiting = Vec::new();
    for _ in 0..8 {
        let (client, _) = connect_as(&url, person.clone()).await;
        waiting.push(tokio::spawn(async move {
            let result = call(&client, "asks_its_user", json!({})).await;
            let _ = client.cancel().await;
            result
        }));
    }
    person
        .questions
        .reaches(8, "eight calls asked their users")
        .await;

    // Unanswered, the eight calls go on waiting: the ninth runs only if they gave back
    // their places.
    let (ninth, _) = connect(&url, ElicitationAction::Accept).await;
    let wiped = within(
        "the ninth client's call ran while eight calls waited on their users",
        call(&ninth, "wipe", json!({})),
    )
    .await;
    assert_eq!(text(&wiped), "wiped");

    person.answers.add_permits(8);
    for waiting in waiting {
        let result = within("a call finished once its user answered", waiting)
            .await
            .unwrap();
        assert_eq!(text(&result), "\"accept\"", "{result:?}");
    }
    let _ = ninth.cancel().await;
    stop.cancel();
}

//! Tools that run as tasks (`#[tool(task)]`, the MCP tasks extension), over Streamable
//! HTTP as a 2026-07-28 client speaks it: a task kept in the SQLite run store outlives
//! its server, finished or waiting on its caller's answers; a task belongs to the caller
//! that started it, and nobody else can read, answer or cancel it; a forged id is a
//! clear error; a caller's unfinished tasks are bounded; a `task = "on_demand"` tool
//! asks on the call and becomes a task once answered (once, however often that round is
//! retried); a shutdown lets running tasks finish within its grace, recording those
//! it stops as failed; and a task handed to a runner runs there with its caller's
//! principal, is bounded until it ends there, and is refused when its tool would ask.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_http.rs"]
mod raw_http;
#[path = "support/task_tools.rs"]
mod task_tools;

use events::{Counter, Flag, eventually, within};
use raw_http::{Running, serve_on_loopback};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use task_tools::{confirm, double};
use toolwright_core::run::{RunStatus, RunStore};
use toolwright_core::{Principal, State, ToolContext, ToolError, tool, tools};
use toolwright_mcp::rmcp::model::TaskStatus;
use toolwright_mcp::tasks::{
    MemoryTaskStore, TaskOptions, TaskRecord, TaskRunner, TaskStart, TaskStore,
};
use toolwright_mcp::{
    HttpAuth, HttpClientOptions, HttpOptions, InputRequest, McpClient, McpPeer, McpServer,
    ServerOptions, StaticTokens,
};
use toolwright_store::SqliteStore;

const VERSION: &str = "2026-07-28";
const TASKS: &str = "io.modelcontextprotocol/tasks";

fn server(tasks: TaskOptions) -> McpServer {
    let mut options = ServerOptions::default();
    options.tasks = tasks;
    McpServer::with_options(tools![double, confirm], options)
}

/// A client of 2026-07-28 that declares the tasks extension and elicitation, with
/// `token` as its bearer token, if any.
struct Client {
    addr: SocketAddr,
    token: Option<String>,
    capabilities: Value,
}

impl Client {
    fn new(running: &Running, token: Option<&str>) -> Self {
        Self {
            addr: running.addr,
            token: token.map(|t| format!("Bearer {t}")),
            capabilities: json!({"elicitation": {}, "extensions": {TASKS: {}}}),
        }
    }

    /// The same client, declaring elicitation only (not the tasks extension).
    fn without_tasks(mut self) -> Self {
        self.capabilities = json!({"elicitation": {}});
        self
    }

    /// The JSON-RPC answer (`result` or `error`) to `method` with `params`, named (the
    /// `Mcp-Name` header) `name`.
    async fn request(&self, method: &str, name: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        });
        let mut headers = vec![
            ("MCP-Protocol-Version", VERSION),
            ("Mcp-Method", method),
            ("Mcp-Name", name),
        ];
        if let Some(token) = &self.token {
            headers.push(("Authorization", token));
        }
        let reply = raw_http::post(self.addr, None, &headers, &raw_http::rpc(1, method, params))
            .await
            .unwrap();
        reply
            .answer()
            .unwrap_or_else(|| panic!("no answer to {method}: {reply:?}"))
    }

    /// Starts `tool` with `arguments`: its task id.
    async fn start(&self, tool: &str, arguments: Value) -> String {
        let answer = self
            .request(
                "tools/call",
                tool,
                json!({"name": tool, "arguments": arguments}),
            )
            .await;
        assert_eq!(answer["result"]["resultType"], "task", "{answer}");
        answer["result"]["taskId"].as_str().unwrap().to_owned()
    }

    async fn get(&self, id: &str) -> Value {
        self.request("tasks/get", id, json!({"taskId": id})).await
    }

    /// The task once its status is `status`.
    async fn until(&self, id: &str, status: &str) -> Value {
        let mut last = Value::Null;
        eventually(&format!("task {id} {status}"), async || {
            last = self.get(id).await;
            last["result"]["status"] == status
        })
        .await;
        last["result"].clone()
    }
}

fn store_path(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "toolwright-mcp-tasks-{name}-{}.sqlite",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// A server keeping its tasks in the SQLite store at `path`.
async fn serve_on_store(path: &std::path::Path) -> Running {
    let store = Arc::new(SqliteStore::open(path).await.unwrap());
    serve_on_loopback(
        server(TaskOptions::default().run_store(store)),
        HttpOptions::default(),
    )
    .await
}

#[tokio::test]
async fn a_task_outlives_its_server_in_the_run_store() {
    let path = store_path("restart");
    let (done, waiting) = {
        let running = serve_on_store(&path).await;
        let client = Client::new(&running, None);
        let done = client.start("double", json!({"n": 21})).await;
        let finished = client.until(&done, "completed").await;
        assert_eq!(finished["result"]["content"][0]["text"], "42", "{finished}");
        let waiting = client.start("confirm", json!({})).await;
        let asked = client.until(&waiting, "input_required").await;
        assert_eq!(asked["inputRequests"]["ok"]["method"], "elicitation/create");
        (done, waiting)
        // The server and its store are dropped here.
    };
    let running = serve_on_store(&path).await;
    let client = Client::new(&running, None);
    // The finished task reads as it did, result and all.
    let finished = client.get(&done).await["result"].clone();
    assert_eq!(finished["status"], "completed", "{finished}");
    assert_eq!(finished["result"]["content"][0]["text"], "42");
    // The waiting one still waits, and the new server takes its answer and runs it.
    let asked = client.get(&waiting).await["result"].clone();
    assert_eq!(asked["status"], "input_required", "{asked}");
    let ack = client
        .request(
            "tasks/update",
            &waiting,
            json!({"taskId": waiting, "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}}),
        )
        .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let answered = client.until(&waiting, "completed").await;
    assert_eq!(
        answered["result"]["content"][0]["text"], "confirmed: true",
        "{answered}"
    );
    let _ = std::fs::remove_file(&path);
}

fn authenticated() -> HttpOptions {
    HttpOptions::default().with_auth(HttpAuth::new(
        StaticTokens::new()
            .with_token("alice-token", Principal::new("alice"))
            .with_token("mallory-token", Principal::new("mallory")),
    ))
}

/// Asserts that `reply` is an error whose message says `words`.
fn refused_saying(reply: &Value, words: &str) {
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(words), "{reply}");
}

/// The error message of `answer`, which must be the -32602 of an unknown task.
fn unknown(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("unknown task"), "{message}");
    message
}

#[tokio::test]
async fn another_callers_task_cannot_be_read_answered_or_cancelled() {
    let running = serve_on_loopback(server(TaskOptions::default()), authenticated()).await;
    let alice = Client::new(&running, Some("alice-token"));
    let mallory = Client::new(&running, Some("mallory-token"));
    let id = alice.start("confirm", json!({})).await;
    alice.until(&id, "input_required").await;
    // To mallory, alice's task does not exist: the same answer as for a made-up id.
    unknown(&mallory.get(&id).await);
    let forged = "0".repeat(32);
    unknown(&mallory.get(&forged).await);
    let approve = json!({"taskId": id, "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}});
    unknown(&mallory.request("tasks/update", &id, approve).await);
    unknown(
        &mallory
            .request("tasks/cancel", &id, json!({"taskId": id}))
            .await,
    );
    // Alice's task is untouched: still waiting on her answer, which she gives.
    let still = alice.get(&id).await["result"].clone();
    assert_eq!(still["status"], "input_required", "{still}");
    let deny = json!({"taskId": id, "inputResponses": {"ok": {"action": "accept", "content": {"ok": false}}}});
    alice.request("tasks/update", &id, deny).await;
    let done = alice.until(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "confirmed: false");
}

#[tokio::test]
async fn forged_task_ids_are_refused_with_a_clear_error() {
    let running = serve_on_loopback(server(TaskOptions::default()), HttpOptions::default()).await;
    let client = Client::new(&running, None);
    for forged in ["nope", "../../etc/passwd", "mcp-task:x", &"f".repeat(32)] {
        let message = unknown(&client.get(forged).await);
        assert!(message.contains(forged), "the id is named: {message}");
        unknown(
            &client
                .request("tasks/cancel", forged, json!({"taskId": forged}))
                .await,
        );
    }
}

#[tokio::test]
async fn a_callers_unfinished_tasks_are_bounded() {
    let running = serve_on_loopback(
        server(TaskOptions::default().max_per_caller(2)),
        authenticated(),
    )
    .await;
    let alice = Client::new(&running, Some("alice-token"));
    let mallory = Client::new(&running, Some("mallory-token"));
    let first = mallory.start("confirm", json!({})).await;
    mallory.start("confirm", json!({})).await;
    // A third unfinished task is refused, saying why; no task is made.
    for _ in 0..3 {
        let refused = mallory.call("confirm", json!({}), None).await;
        refused_saying(&refused, "unfinished tasks");
    }
    // Another caller has an allowance of its own.
    alice.start("confirm", json!({})).await;
    // A finished task frees its place.
    mallory
        .request("tasks/cancel", &first, json!({"taskId": first}))
        .await;
    mallory.until(&first, "cancelled").await;
    mallory.start("double", json!({"n": 1})).await;
}

/// Our client, connected to `running` over protocol `version`, answering every form with
/// `{"ok": ok}`.
async fn our_client(running: &Running, version: &str, ok: bool) -> McpClient {
    let options = HttpClientOptions::new()
        .with_protocol_version(version)
        .with_elicitation(move |_message, _schema| async move {
            Some(serde_json::Map::from_iter([("ok".to_owned(), json!(ok))]))
        });
    McpClient::connect_http_with(&format!("http://{}/mcp", running.addr), &options)
        .await
        .unwrap()
}

fn text(result: &toolwright_mcp::rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

#[tokio::test]
async fn our_client_calls_task_tools_awaiting_and_answering_their_tasks() {
    for version in ["2026-07-28", "2025-11-25"] {
        let running =
            serve_on_loopback(server(TaskOptions::default()), HttpOptions::default()).await;
        let client = our_client(&running, version, true).await;
        // As a tool of the set, a task is awaited and its question answered by the
        // client's elicitation handler.
        let tools = client.toolset().unwrap();
        let output = tools
            .call("confirm", &json!({}), &ToolContext::default())
            .await
            .unwrap();
        assert_eq!(output[0].as_text(), Some("confirmed: true"), "{version}");
        // By hand: started, awaited.
        let TaskStart::Task(task) = client.start_task("double", json!({"n": 4})).await.unwrap()
        else {
            panic!("double did not run as a task ({version})");
        };
        assert_eq!(text(&task.wait().await.unwrap()), "8", "{version}");
    }
}

#[tokio::test]
async fn our_client_answers_and_cancels_a_task_by_hand() {
    let running = serve_on_loopback(server(TaskOptions::default()), HttpOptions::default()).await;
    let client = our_client(&running, VERSION, true).await;
    let TaskStart::Task(task) = client.start_task("confirm", json!({})).await.unwrap() else {
        panic!("confirm did not run as a task");
    };
    let mut asked = None;
    eventually("the task asks", async || {
        asked = Some(task.get().await.unwrap());
        asked.as_ref().unwrap().status() == TaskStatus::InputRequired
    })
    .await;
    let answer = json!({"action": "accept", "content": {"ok": false}});
    task.answer([("ok".to_owned(), answer)].into_iter().collect())
        .await
        .unwrap();
    assert_eq!(text(&task.wait().await.unwrap()), "confirmed: false");

    let TaskStart::Task(task) = client.start_task("confirm", json!({})).await.unwrap() else {
        panic!("confirm did not run as a task");
    };
    eventually("the task asks", async || {
        task.get().await.unwrap().status() == TaskStatus::InputRequired
    })
    .await;
    task.cancel().await.unwrap();
    assert_eq!(task.get().await.unwrap().status(), TaskStatus::Cancelled);
    let error = task.wait().await.unwrap_err();
    assert!(error.to_string().contains("cancelled"), "{error}");
}

/// How often each part of `greet_later` ran: the part before `continue_as_task` (on
/// the call, then again in the task), and the part after it (in the task only).
#[derive(Clone, Default)]
struct Runs {
    asked: Counter,
    finished: Counter,
}

fn name_form(key: &str) -> InputRequest {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    InputRequest::elicit(key, "Your name?", schema)
}

/// Asks a name on the call, then greets as a task.
#[tool(task = "on_demand")]
async fn greet_later(
    /// Said before the name.
    greeting: String,
    peer: State<McpPeer>,
    runs: State<Runs>,
) -> Result<String, ToolError> {
    runs.asked.add();
    let answer = peer.ask(name_form("name")).await?;
    peer.continue_as_task().await?;
    runs.finished.add();
    Ok(format!(
        "{greeting}, {}",
        answer["content"]["name"].as_str().unwrap_or("?")
    ))
}

/// Asks a name on the call, then a nickname inside the task.
#[tool(task = "on_demand")]
async fn greet_twice(peer: State<McpPeer>) -> Result<String, ToolError> {
    let name = peer.ask(name_form("name")).await?;
    peer.continue_as_task().await?;
    let nickname = peer.ask(name_form("nickname")).await?;
    Ok(format!(
        "{} alias {}",
        name["content"]["name"].as_str().unwrap_or("?"),
        nickname["content"]["name"].as_str().unwrap_or("?")
    ))
}

fn on_demand_server(runs: &Runs) -> McpServer {
    McpServer::new(tools![greet_later, greet_twice].with_state(runs.clone()))
}

fn named(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

impl Client {
    /// Calls `tool` with `arguments` and, when given, a round's answers and state.
    async fn call(&self, tool: &str, arguments: Value, round: Option<(Value, &Value)>) -> Value {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some((responses, state)) = round {
            params["inputResponses"] = responses;
            params["requestState"] = state.clone();
        }
        self.request("tools/call", tool, params).await
    }
}

#[tokio::test]
async fn an_on_demand_tool_asks_on_the_call_and_becomes_a_task_once_answered() {
    let runs = Runs::default();
    let running = serve_on_loopback(on_demand_server(&runs), HttpOptions::default()).await;
    let client = Client::new(&running, None);
    let arguments = json!({"greeting": "Hello"});
    // Round 1: the question, on the call; no task.
    let asked = client.call("greet_later", arguments.clone(), None).await;
    let asked = &asked["result"];
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert!(asked.get("taskId").is_none(), "{asked}");
    assert_eq!(
        asked["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    // Round 2: the answer; the call becomes a task, without the round's state.
    let answer = json!({"name": named("Alice")});
    let started = client
        .call(
            "greet_later",
            arguments.clone(),
            Some((answer.clone(), &asked["requestState"])),
        )
        .await;
    let started = &started["result"];
    assert_eq!(started["resultType"], "task", "{started}");
    assert!(started.get("requestState").is_none(), "{started}");
    assert!(started.get("inputRequests").is_none(), "{started}");
    let id = started["taskId"].as_str().unwrap().to_owned();
    // The task runs the tool again, with the answer given on the call.
    let done = client.until(&id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Alice",
        "{done}"
    );
    assert_eq!(
        runs.asked.get(),
        3,
        "asked on rounds 1 and 2, and again in the task"
    );
    assert_eq!(runs.finished.get(), 1, "the work after the switch ran once");

    // Round 2 sent again (its reply was lost, say): the same task, not a second one.
    let again = client
        .call(
            "greet_later",
            arguments,
            Some((answer, &asked["requestState"])),
        )
        .await;
    assert_eq!(again["result"]["resultType"], "task", "{again}");
    assert_eq!(again["result"]["taskId"], id.as_str(), "{again}");
    assert_eq!(again["result"]["status"], "completed", "{again}");
    assert_eq!(runs.finished.get(), 1, "no second task ran");
}

#[tokio::test]
async fn the_state_of_a_composing_call_is_refused_tampered_or_from_another_caller() {
    let runs = Runs::default();
    let running = serve_on_loopback(on_demand_server(&runs), authenticated()).await;
    let alice = Client::new(&running, Some("alice-token"));
    let mallory = Client::new(&running, Some("mallory-token"));
    let arguments = json!({"greeting": "Hi"});
    let asked = alice.call("greet_later", arguments.clone(), None).await;
    let state = asked["result"]["requestState"].clone();
    let answer = json!({"name": named("Mallory")});
    let refused_because = |reply: &Value| {
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
        refused_saying(reply, "`requestState` was refused");
    };
    // Another caller with alice's state, and alice with a changed state, other
    // arguments, or a state made up: refused, no task started.
    refused_because(
        &mallory
            .call(
                "greet_later",
                arguments.clone(),
                Some((answer.clone(), &state)),
            )
            .await,
    );
    // One character changed mid-way (the last may carry only padding bits).
    let mut tampered = state.as_str().unwrap().to_owned().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = json!(String::from_utf8(tampered).unwrap());
    for (arguments, state) in [
        (arguments.clone(), &tampered),
        (json!({"greeting": "Bye"}), &state),
        (arguments.clone(), &json!("made-up")),
    ] {
        let round = Some((answer.clone(), state));
        refused_because(&alice.call("greet_later", arguments, round).await);
    }
    assert_eq!(runs.finished.get(), 0, "no task ran");
    // The refusals did not use alice's state up: her own round starts her task.
    let started = alice
        .call(
            "greet_later",
            arguments,
            Some((json!({"name": named("Alice")}), &state)),
        )
        .await;
    let id = started["result"]["taskId"].as_str().unwrap().to_owned();
    let done = alice.until(&id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hi, Alice", "{done}");
    // Which mallory can neither read nor have answered for her state.
    unknown(&mallory.get(&id).await);
}

#[tokio::test]
async fn an_on_demand_tool_asks_inside_its_task_keeping_the_answers_from_the_call() {
    let running =
        serve_on_loopback(on_demand_server(&Runs::default()), HttpOptions::default()).await;
    let client = Client::new(&running, None);
    let asked = client.call("greet_twice", json!({}), None).await;
    let started = client
        .call(
            "greet_twice",
            json!({}),
            Some((
                json!({"name": named("Ada")}),
                &asked["result"]["requestState"],
            )),
        )
        .await;
    let id = started["result"]["taskId"].as_str().unwrap().to_owned();
    // Only the question asked inside the task is open.
    let waiting = client.until(&id, "input_required").await;
    let open: Vec<&String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(open, ["nickname"], "{waiting}");
    client
        .request(
            "tasks/update",
            &id,
            json!({"taskId": id, "inputResponses": {"nickname": named("Countess")}}),
        )
        .await;
    let done = client.until(&id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Ada alias Countess",
        "{done}"
    );
}

#[tokio::test]
async fn an_on_demand_tool_called_without_tasks_stays_a_plain_call() {
    let runs = Runs::default();
    let running = serve_on_loopback(on_demand_server(&runs), HttpOptions::default()).await;
    let client = Client::new(&running, None).without_tasks();
    let arguments = json!({"greeting": "Hey"});
    let asked = client.call("greet_later", arguments.clone(), None).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let answered = client
        .call(
            "greet_later",
            arguments,
            Some((
                json!({"name": named("Bo")}),
                &asked["result"]["requestState"],
            )),
        )
        .await;
    let result = &answered["result"];
    assert_eq!(result["resultType"], "complete", "{answered}");
    assert_eq!(result["content"][0]["text"], "Hey, Bo", "{answered}");
    assert_eq!(runs.finished.get(), 1);
}

/// When `held` has started, and when it may finish.
#[derive(Clone, Default)]
struct Gate {
    started: Counter,
    release: Flag,
}

/// Works until released, as a task.
#[tool(task)]
async fn held(gate: State<Gate>) -> &'static str {
    gate.started.add();
    gate.release.wait("the test releases the task").await;
    "released"
}

/// A server of `held` and `confirm`, keeping its tasks in `store`.
fn shutdown_server(gate: &Gate, store: TaskOptions) -> McpServer {
    let mut options = ServerOptions::default();
    options.tasks = store;
    McpServer::with_options(tools![held, confirm].with_state(gate.clone()), options)
}

/// Whether `future` is still pending when polled once.
async fn pending<F: Future + Unpin>(future: &mut F) -> bool {
    tokio::select! {
        biased;
        _ = future => false,
        () = std::future::ready(()) => true,
    }
}

#[tokio::test]
async fn a_shutdown_lets_running_tasks_finish_and_starts_or_resumes_none_meanwhile() {
    let gate = Gate::default();
    let store = Arc::new(MemoryTaskStore::default());
    let server = shutdown_server(&gate, TaskOptions::default().store(store.clone()));
    let running = serve_on_loopback(server.clone(), HttpOptions::default()).await;
    let client = Client::new(&running, None);
    let waiting = client.start("confirm", json!({})).await;
    client.until(&waiting, "input_required").await;
    let working = client.start("held", json!({})).await;
    gate.started.reaches(1, "the task starts").await;

    let shutdown = server.shutdown_tasks(events::PATIENCE);
    let mut shutdown = std::pin::pin!(shutdown);
    assert!(
        pending(&mut shutdown).await,
        "the shutdown waits for the task"
    );
    // Meanwhile no task starts, and the waiting one takes no answer (it keeps waiting).
    refused_saying(&client.call("held", json!({}), None).await, "shutting down");
    let answer = json!({"taskId": waiting, "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}});
    let refused = client.request("tasks/update", &waiting, answer).await;
    refused_saying(&refused, "shutting down");

    gate.release.set();
    within("the shutdown ends once the task finished", shutdown).await;
    let finished = store.load(&working).await.unwrap().unwrap();
    assert_eq!(finished.status(), TaskStatus::Completed);
    let kept = store.load(&waiting).await.unwrap().unwrap();
    assert_eq!(kept.status(), TaskStatus::InputRequired);
    assert_eq!(gate.started.get(), 1, "the refused call started nothing");
}

#[tokio::test]
async fn a_task_still_running_after_the_shutdown_grace_is_recorded_failed() {
    let path = store_path("shutdown");
    let gate = Gate::default();
    let id = {
        let store = Arc::new(SqliteStore::open(&path).await.unwrap());
        let tasks = TaskOptions::default().run_store(store.clone());
        let running =
            serve_on_loopback(shutdown_server(&gate, tasks), HttpOptions::default()).await;
        let client = Client::new(&running, None);
        let id = client.start("held", json!({})).await;
        gate.started.reaches(1, "the task starts").await;
        // The HTTP server shuts down, with its grace (100 ms here), and records the
        // task it stopped as failed (in its run, as `TaskOptions::run_store` says).
        drop(running);
        let run = format!("mcp-task:{id}");
        eventually("the stopped task is recorded failed", async || {
            let record = store.load(&run).await.unwrap().unwrap();
            record.status == RunStatus::Failed
        })
        .await;
        id
    };
    // A server opening the store later reads the task as failed, saying why; nothing
    // runs it.
    let running = serve_on_store(&path).await;
    let client = Client::new(&running, None);
    let failed = client.get(&id).await["result"].clone();
    assert_eq!(failed["status"], "failed", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("server shut down"), "{failed}");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn our_client_calls_an_on_demand_tool_on_either_protocol() {
    for version in ["2026-07-28", "2025-11-25"] {
        let runs = Runs::default();
        let running = serve_on_loopback(on_demand_server(&runs), HttpOptions::default()).await;
        let options = HttpClientOptions::new()
            .with_protocol_version(version)
            .with_elicitation(|_message, _schema| async {
                Some(serde_json::Map::from_iter([(
                    "name".to_owned(),
                    json!("Grace"),
                )]))
            });
        let client =
            McpClient::connect_http_with(&format!("http://{}/mcp", running.addr), &options)
                .await
                .unwrap();
        // On 2026-07-28 the question comes on the call and the answered round becomes a
        // task; on 2025-11-25 the call is a task at once, asking inside it. Either way the
        // client's tool answers with the name given.
        let output = client
            .toolset()
            .unwrap()
            .call(
                "greet_later",
                &json!({"greeting": "Welcome"}),
                &ToolContext::default(),
            )
            .await
            .unwrap();
        assert_eq!(output[0].as_text(), Some("Welcome, Grace"), "{version}");
        assert_eq!(runs.finished.get(), 1, "{version}");
    }
}

/// The record of task `id` once its revision is past `revision`.
async fn saved_past(store: &MemoryTaskStore, id: &str, revision: u64) -> u64 {
    let mut now = 0;
    eventually(
        &format!("task {id} saved past revision {revision}"),
        async || {
            now = store.load(id).await.unwrap().unwrap().revision();
            now > revision
        },
    )
    .await;
    now
}

#[tokio::test]
async fn servers_sharing_a_store_answer_for_a_task_running_on_one_of_them() {
    let gate = Gate::default();
    let store = Arc::new(MemoryTaskStore::default());
    // A short lease, so that it lapses several times while the task runs; long enough
    // that a loaded machine renews it in time (every 500 ms).
    let options = || {
        TaskOptions::default()
            .store(store.clone())
            .lease(std::time::Duration::from_millis(1500))
    };
    let runner = serve_on_loopback(shutdown_server(&gate, options()), HttpOptions::default()).await;
    let other = serve_on_loopback(shutdown_server(&gate, options()), HttpOptions::default()).await;
    let (on_runner, on_other) = (Client::new(&runner, None), Client::new(&other, None));
    let id = on_runner.start("held", json!({})).await;
    gate.started.reaches(1, "the task starts").await;

    // The runner renews its lease: the other server reads the task as working, each time
    // (without the lease, it would take the task for one whose server died, and fail it).
    let mut revision = store.load(&id).await.unwrap().unwrap().revision();
    for _ in 0..4 {
        revision = saved_past(&store, &id, revision).await;
        let read = on_other.get(&id).await;
        assert_eq!(read["result"]["status"], "working", "{read}");
    }

    // Cancelled through the other server, the task stops on the runner.
    let ack = on_other
        .request("tasks/cancel", &id, json!({"taskId": id}))
        .await;
    assert!(ack.get("error").is_none(), "{ack}");
    on_runner.until(&id, "cancelled").await;
    eventually("the runner's round stops", async || {
        store.load(&id).await.unwrap().unwrap().revision() > revision + 1
            && store.load(&id).await.unwrap().unwrap().status() == TaskStatus::Cancelled
    })
    .await;
    gate.release.set();
    // Released now, the stopped round does not finish the task after all.
    let settled = on_runner.get(&id).await;
    assert_eq!(settled["result"]["status"], "cancelled", "{settled}");
    assert_eq!(gate.started.get(), 1);
}

#[tokio::test]
async fn a_task_whose_server_died_reads_failed_once_its_lease_runs_out() {
    let gate = Gate::default();
    let store = Arc::new(MemoryTaskStore::default());
    let options = || {
        TaskOptions::default()
            .store(store.clone())
            .lease(std::time::Duration::from_millis(300))
    };
    // The server that dies runs on a runtime of its own, stopped with no shutdown: as a
    // killed process, it neither finishes its task nor records it failed.
    let doomed = tokio::runtime::Runtime::new().unwrap();
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
    let server = shutdown_server(&gate, options());
    doomed.spawn(async move {
        let running = serve_on_loopback(server, HttpOptions::default()).await;
        let _ = addr_tx.send(running.addr);
        std::future::pending::<()>().await;
        drop(running);
    });
    let addr = addr_rx.await.unwrap();
    let dying = Client {
        addr,
        token: None,
        capabilities: json!({"elicitation": {}, "extensions": {TASKS: {}}}),
    };
    let id = dying.start("held", json!({})).await;
    gate.started.reaches(1, "the task starts").await;
    doomed.shutdown_background();

    let survivor =
        serve_on_loopback(shutdown_server(&gate, options()), HttpOptions::default()).await;
    let failed = Client::new(&survivor, None).until(&id, "failed").await;
    let message = failed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("stopped before it finished"), "{failed}");
    assert_eq!(gate.started.get(), 1, "nothing ran it again");
}

/// Says who called it, as a task.
#[tool(task)]
async fn whoami_later(principal: State<Principal>) -> String {
    principal.subject.clone()
}

/// Wipes everything, once a person approves, as a task.
#[tool(task, require_approval)]
async fn wipe() -> &'static str {
    "wiped"
}

/// Runs each task's work on `worker`, in a task of this process, and settles the record
/// in `store`, as a durable runner would on its own workers.
struct LocalRunner {
    worker: McpServer,
    store: Arc<MemoryTaskStore>,
    started: Counter,
    settled: Counter,
}

impl LocalRunner {
    fn new(worker: McpServer, store: Arc<MemoryTaskStore>) -> Arc<Self> {
        Arc::new(Self {
            worker,
            store,
            started: Counter::default(),
            settled: Counter::default(),
        })
    }

    /// A server of `tools`, its tasks kept in this runner's store and handed to it, for
    /// callers authenticated by token, with `max` unfinished tasks each.
    async fn serve(self: &Arc<Self>, tools: toolwright_core::ToolSet, max: usize) -> Running {
        let mut options = ServerOptions::default();
        options.tasks = TaskOptions::default()
            .store(self.store.clone())
            .runner(self.clone())
            .max_per_caller(max);
        serve_on_loopback(McpServer::with_options(tools, options), authenticated()).await
    }
}

#[toolwright_core::async_trait]
impl TaskRunner for LocalRunner {
    async fn start(&self, record: &TaskRecord) -> Result<(), toolwright_core::run::StoreError> {
        assert!(record.handed_off(), "{record:?}");
        self.started.add();
        let (worker, store, record) = (self.worker.clone(), self.store.clone(), record.clone());
        let settled = self.settled.clone();
        tokio::spawn(async move {
            let outcome = worker.run_task(&record).await;
            let mut stored = store.load(record.id()).await.unwrap().unwrap();
            if stored.settle(outcome) {
                store.save(&stored).await.unwrap();
            }
            settled.add();
        });
        Ok(())
    }

    async fn cancel(&self, _id: &str) -> Result<(), toolwright_core::run::StoreError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_task_handed_to_a_runner_runs_there_and_one_that_would_ask_is_refused() {
    let runner = LocalRunner::new(
        McpServer::new(tools![whoami_later, wipe, greet_later]),
        Arc::default(),
    );
    let running = runner
        .serve(tools![whoami_later, wipe, greet_later], 32)
        .await;
    let alice = Client::new(&running, Some("alice-token"));
    let id = alice.start("whoami_later", json!({})).await;
    let done = alice.until(&id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "alice",
        "the worker's call has its caller's principal: {done}"
    );

    let wiped = alice.call("wipe", json!({}), None).await;
    refused_saying(&wiped, "needs a person's approval");
    refused_saying(&wiped, "task runner");
    let greeted = alice
        .call("greet_later", json!({"greeting": "hi"}), None)
        .await;
    refused_saying(&greeted, "on_demand");
    assert_eq!(
        runner.started.get(),
        1,
        "only the first call was handed over"
    );
}

#[tokio::test]
async fn a_callers_handed_off_tasks_are_bounded_until_they_end_on_the_runner() {
    let gate = Gate::default();
    let runner = LocalRunner::new(
        McpServer::new(tools![held, whoami_later].with_state(gate.clone())),
        Arc::default(),
    );
    let running = runner.serve(tools![held, whoami_later], 1).await;
    let alice = Client::new(&running, Some("alice-token"));
    alice.start("held", json!({})).await;
    gate.started.reaches(1, "the task runs on the runner").await;
    let refused = alice.call("whoami_later", json!({}), None).await;
    refused_saying(&refused, "unfinished tasks");
    gate.release.set();
    runner
        .settled
        .reaches(1, "the runner settles the task")
        .await;
    // Never asked about on this server since: its record says it ended, which frees
    // its place.
    alice.start("whoami_later", json!({})).await;
}

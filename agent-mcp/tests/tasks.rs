//! Tools that run as tasks (`#[tool(task)]`, the MCP tasks extension), over Streamable
//! HTTP as a 2026-07-28 client speaks it: a task kept in the SQLite run store outlives
//! its server, finished or waiting on its caller's answers; a task belongs to the caller
//! that started it, and nobody else can read, answer or cancel it; a forged id is a
//! clear error; and a caller's unfinished tasks are bounded.

#[path = "support/events.rs"]
mod events;
#[path = "support/raw_http.rs"]
mod raw_http;
#[path = "support/task_tools.rs"]
mod task_tools;

use events::eventually;
use raw_http::{Running, serve_on_loopback};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use task_tools::{confirm, double};
use toolwright_core::{Principal, ToolContext, tools};
use toolwright_mcp::rmcp::model::TaskStatus;
use toolwright_mcp::tasks::{TaskOptions, TaskStart};
use toolwright_mcp::{
    HttpAuth, HttpClientOptions, HttpOptions, McpClient, McpServer, ServerOptions, StaticTokens,
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
}

impl Client {
    fn new(running: &Running, token: Option<&str>) -> Self {
        Self {
            addr: running.addr,
            token: token.map(|t| format!("Bearer {t}")),
        }
    }

    /// The JSON-RPC answer (`result` or `error`) to `method` with `params`, named (the
    /// `Mcp-Name` header) `name`.
    async fn request(&self, method: &str, name: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {TASKS: {}}},
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
        let refused = mallory
            .request(
                "tools/call",
                "confirm",
                json!({"name": "confirm", "arguments": {}}),
            )
            .await;
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("unfinished tasks"), "{refused}");
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

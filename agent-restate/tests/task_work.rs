//! MCP tasks whose work runs on Restate (`RestateTaskStore` as the servers' task runner,
//! `TaskWork` on a worker), on a real Restate server (`scripts/restate.sh` starts one and
//! prints `RESTATE_INGRESS_URL`/`RESTATE_ADMIN_URL`): a task outlives the MCP server that
//! started it and is answered by one started afterwards; a cancellation taken by another
//! server stops the work; a worker killed with SIGKILL during the call is replaced and
//! the task completes, its side effect done once.
//!
//! The worker is this test binary run again with `TOOLWRIGHT_TASK_WORKER` set (the
//! ignored test `worker`): it holds the tools, the MCP servers in the test process do
//! not (their tool has no gate to run with). It says what its tool does on stdout, one
//! line per event, opens the tool's gate when told so on stdin, and records each attempt
//! and, keyed by the idempotency key, each side effect in files of its folder. The tests
//! wait on those lines and on answers, never on time.

#[path = "../../agent-mcp/tests/support/raw_http.rs"]
mod raw_http;
#[path = "support/services.rs"]
mod services;
#[path = "support/task_client.rs"]
mod task_client;

use raw_http::{Running, serve_on_loopback};
use serde_json::json;
use services::{Urls, Worker, append, effect_once, effects, folder, free_port, lines, say};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use task_client::{request, start, until};
use toolwright_core::{State, ToolContext, tool, tools};
use toolwright_mcp::tasks::TaskOptions;
use toolwright_mcp::{HttpOptions, McpServer, ServerOptions};
use toolwright_restate::restate_sdk::prelude::Endpoint;
use toolwright_restate::{RestateTaskStore, TaskRecords, TaskWork};

const WORKER: &str = "TOOLWRIGHT_TASK_WORKER";

// ---- the worker ----------------------------------------------------------------------

/// What the tool waits on, and where it records what it did.
#[derive(Clone)]
struct Gate {
    open: tokio::sync::watch::Receiver<bool>,
    dir: Arc<PathBuf>,
}

/// Says `stopped` when the tool's call is dropped before it ends.
struct StopGuard(bool);

impl Drop for StopGuard {
    fn drop(&mut self) {
        if !self.0 {
            say("stopped");
        }
    }
}

/// Ships an order once the gate opens, as a task.
#[tool(task, timeout = "5m")]
async fn ship(
    /// The order to ship.
    order: u32,
    gate: State<Gate>,
    ctx: &ToolContext,
) -> String {
    let key = ctx.idempotency_key();
    append(&gate.dir.join("attempts.log"), &key);
    let mut guard = StopGuard(false);
    say("started");
    let mut open = gate.open.clone();
    let _ = open.wait_for(|open| *open).await;
    // The side effect, once per key however often the call runs.
    effect_once(&gate.dir, &key);
    guard.0 = true;
    say(&format!("shipped {order}"));
    format!("shipped order {order}")
}

/// The worker, when this binary is run as one: serves `McpTask` and `McpTaskWork` on the
/// port and folder it is given; the gate is open from the start if the folder holds
/// `gate-open`, and opens when stdin says `open`.
#[test]
#[ignore = "run by the tests below as a separate process"]
fn worker() {
    let Some((port, dir)) = services::worker_spec(WORKER) else {
        return;
    };
    let (opener, open) = tokio::sync::watch::channel(dir.join("gate-open").exists());
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            if line.is_ok_and(|line| line.trim() == "open") {
                let _ = opener.send(true);
            }
        }
    });
    let tools = tools![ship].with_state(Gate { open, dir });
    services::serve_worker(port, || {
        Endpoint::builder()
            .bind(TaskRecords)
            .bind(TaskWork::new(McpServer::new(tools)))
            .build()
    });
}

// ---- the tests -----------------------------------------------------------------------

/// One test at a time: each registers its worker as the services' latest deployment.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Starts a worker in `dir` and registers it.
async fn start_worker(restate: &Urls, dir: &Path) -> Worker {
    let port = free_port();
    let worker = Worker::start(WORKER, port, dir).await;
    services::register(&restate.admin, port).await;
    worker
}

/// An MCP server whose tasks are kept and run on Restate, through a store (and
/// runner) of its own. The shortest lease, shorter than a round trip to Restate: a
/// task the server counted as its own would read as failed once the server is gone.
async fn serve(restate: &Urls) -> Running {
    let store = Arc::new(RestateTaskStore::new(&restate.ingress).unwrap());
    let mut options = ServerOptions::default();
    options.tasks = TaskOptions::default()
        .store(store.clone())
        .runner(store)
        .lease(Duration::from_millis(3))
        .poll_interval(Duration::from_millis(10));
    serve_on_loopback(
        McpServer::with_options(tools![ship], options),
        HttpOptions::default(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_outlives_the_server_that_started_it() {
    let Some(restate) = services::urls() else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let dir = folder("outlives");
    let mut worker = start_worker(&restate, &dir).await;
    let id = {
        let first = serve(&restate).await;
        let id = start(&first, "ship", json!({"order": 7})).await;
        worker.wait_for("started").await;
        id
        // The server that started the task shuts down here, the call still running.
    };
    let second = serve(&restate).await;
    // Its lease, had it taken one, ran out long ago: the task still runs.
    let task = request(&second, "tasks/get", &id, json!({"taskId": id})).await;
    assert_eq!(task["result"]["status"], "working", "{task}");
    worker.tell("open").await;
    worker.wait_for("shipped 7").await;
    let task = until(&second, &id, "completed").await;
    assert_eq!(
        task["result"]["content"][0]["text"], "shipped order 7",
        "{task}"
    );
    assert_eq!(effects(&dir), 1, "the side effect happened once");
    assert_eq!(lines(&dir.join("attempts.log")), 1, "the call ran once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_taken_by_another_server_stops_the_work() {
    let Some(restate) = services::urls() else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let dir = folder("cancel");
    let mut worker = start_worker(&restate, &dir).await;
    let id = {
        let first = serve(&restate).await;
        let id = start(&first, "ship", json!({"order": 8})).await;
        worker.wait_for("started").await;
        id
    };
    let second = serve(&restate).await;
    let ack = request(&second, "tasks/cancel", &id, json!({"taskId": id})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    worker.wait_for("stopped").await;
    until(&second, &id, "cancelled").await;
    // The gate opens after the cancellation: nothing is left to pass it.
    worker.tell("open").await;
    let again = request(&second, "tasks/get", &id, json!({"taskId": id})).await;
    assert_eq!(again["result"]["status"], "cancelled", "{again}");
    assert_eq!(effects(&dir), 0, "the cancelled call did nothing");
    assert_eq!(lines(&dir.join("attempts.log")), 1, "nor ran again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_during_the_call_is_replaced_and_the_task_completes() {
    let Some(restate) = services::urls() else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let dir = folder("sigkill");
    let mut worker = start_worker(&restate, &dir).await;
    let running = serve(&restate).await;
    let id = start(&running, "ship", json!({"order": 9})).await;
    worker.wait_for("started").await;
    let port = worker.port;
    worker.kill().await;
    // The next worker, on the same deployment, finds its gate open.
    std::fs::write(dir.join("gate-open"), "").expect("writable");
    let mut replacement = Worker::start(WORKER, port, &dir).await;
    replacement.wait_for("shipped 9").await;
    let task = until(&running, &id, "completed").await;
    assert_eq!(
        task["result"]["content"][0]["text"], "shipped order 9",
        "{task}"
    );
    assert_eq!(lines(&dir.join("attempts.log")), 2, "the call ran again");
    assert_eq!(effects(&dir), 1, "the side effect happened once");
}

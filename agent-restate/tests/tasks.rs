//! MCP tasks kept in Restate (`RestateTaskStore`, feature `mcp`), on a real Restate server
//! (`scripts/restate.sh` starts one and prints `RESTATE_INGRESS_URL`/`RESTATE_ADMIN_URL`):
//! a task started on one MCP server, which is then dropped, is read, answered and
//! finished by another server that shares nothing with the first but Restate; the
//! object refuses a save that does not follow the stored revision; and ids a client
//! makes up read as unknown, whatever characters they hold.
//!
//! The worker serving the `McpTask` object runs in this process, on its own port, and the
//! two MCP servers each have their own store (their own HTTP client): the state of a task
//! is in Restate only, as it is for two servers on two machines.

#[path = "../../agent-mcp/tests/support/raw_http.rs"]
mod raw_http;
#[path = "support/services.rs"]
mod services;
#[path = "support/task_client.rs"]
mod task_client;
#[path = "../../agent-mcp/tests/support/task_tools.rs"]
mod task_tools;

use raw_http::{Running, serve_on_loopback};
use serde_json::json;
use services::Urls;
use std::sync::Arc;
use std::time::Duration;
use task_client::{request, start, until};
use task_tools::{confirm, double};
use toolwright_core::run::StoreError;
use toolwright_core::tools;
use toolwright_mcp::tasks::{TaskOptions, TaskStore};
use toolwright_mcp::{HttpOptions, McpServer, ServerOptions};
use toolwright_restate::restate_sdk::prelude::{Endpoint, HttpServer};
use toolwright_restate::{RestateTaskStore, TaskRecords};

/// One test at a time: each registers the worker as the object's latest deployment.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The server's ingress, with this process's `McpTask` worker registered. Missing, the
/// test fails (a machine without the server must not pass by skipping), unless
/// `TOOLWRIGHT_SKIP_SERVICES` names `restate`.
async fn restate() -> Option<String> {
    let Urls { ingress, admin } = services::urls()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(HttpServer::new(Endpoint::builder().bind(TaskRecords).build()).serve(listener));
    services::register(&admin, port).await;
    Some(ingress)
}

/// An MCP server whose tasks live in Restate, through a store of its own.
async fn serve(ingress: &str) -> Running {
    let mut options = ServerOptions::default();
    options.tasks = TaskOptions::default()
        .store(Arc::new(RestateTaskStore::new(ingress).unwrap()))
        .poll_interval(Duration::from_millis(10));
    serve_on_loopback(
        McpServer::with_options(tools![double, confirm], options),
        HttpOptions::default(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_on_one_server_is_finished_by_another() {
    let Some(ingress) = restate().await else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let (done, waiting) = {
        let first = serve(&ingress).await;
        let done = start(&first, "double", json!({"n": 21})).await;
        let finished = until(&first, &done, "completed").await;
        assert_eq!(finished["result"]["content"][0]["text"], "42", "{finished}");
        let waiting = start(&first, "confirm", json!({})).await;
        let asked = until(&first, &waiting, "input_required").await;
        assert_eq!(asked["inputRequests"]["ok"]["method"], "elicitation/create");
        (done, waiting)
        // The first server and its store are dropped here.
    };
    let second = serve(&ingress).await;
    let finished = request(&second, "tasks/get", &done, json!({"taskId": done})).await;
    assert_eq!(finished["result"]["status"], "completed", "{finished}");
    assert_eq!(finished["result"]["result"]["content"][0]["text"], "42");
    let asked = request(&second, "tasks/get", &waiting, json!({"taskId": waiting})).await;
    assert_eq!(asked["result"]["status"], "input_required", "{asked}");
    let answer = json!({"taskId": waiting, "inputResponses": {"ok": {"action": "accept", "content": {"ok": true}}}});
    let ack = request(&second, "tasks/update", &waiting, answer).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let answered = until(&second, &waiting, "completed").await;
    assert_eq!(
        answered["result"]["content"][0]["text"], "confirmed: true",
        "{answered}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_that_does_not_follow_the_stored_revision_is_a_conflict() {
    let Some(ingress) = restate().await else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let running = serve(&ingress).await;
    let id = start(&running, "double", json!({"n": 1})).await;
    until(&running, &id, "completed").await;
    // Another server's view of the task: the record as stored, saved again as is.
    let store = RestateTaskStore::new(&ingress).unwrap();
    let stored = store.load(&id).await.unwrap().expect("the task is stored");
    assert!(
        stored.revision() >= 2,
        "created, then completed: {stored:?}"
    );
    match store.save(&stored).await {
        Err(StoreError::Conflict {
            run_id,
            expected,
            found,
        }) => {
            assert_eq!(run_id, id);
            assert_eq!(expected, stored.revision() - 1);
            assert_eq!(found, Some(stored.revision()));
        }
        other => panic!("a stale save must conflict: {other:?}"),
    }
    assert_eq!(store.load(&id).await.unwrap(), Some(stored));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_task_ids_read_as_unknown() {
    let Some(ingress) = restate().await else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let store = RestateTaskStore::new(&ingress).unwrap();
    for forged in [
        "nope",
        "../../admin/deployments",
        "a/b?c#d",
        "%2e%2e",
        "ünïcode",
    ] {
        assert_eq!(store.load(forged).await.unwrap(), None, "{forged}");
    }
    let running = serve(&ingress).await;
    let forged = "../../McpTask/x/load";
    let answer = request(&running, "tasks/get", forged, json!({"taskId": forged})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown task"),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_tasks_record_is_deleted_from_restate() {
    let Some(ingress) = restate().await else {
        return;
    };
    let _serial = SERIAL.lock().await;
    let store = Arc::new(RestateTaskStore::new(&ingress).unwrap());
    let mut options = ServerOptions::default();
    options.tasks = TaskOptions::default()
        .store(store.clone())
        .ttl(Duration::from_secs(2));
    let running = serve_on_loopback(
        McpServer::with_options(tools![double, confirm], options),
        HttpOptions::default(),
    )
    .await;
    let id = start(&running, "double", json!({"n": 4})).await;
    let done = until(&running, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "8", "{done}");
    let stored = store
        .load(&id)
        .await
        .unwrap()
        .expect("kept until it expires");
    assert!(stored.expires_at_ms() > 0);
    // The timer the first save set fires once the task expires: asked again after each
    // answer, within a bound on a hang.
    let gone = async {
        while store.load(&id).await.unwrap().is_some() {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), gone)
        .await
        .expect("the record is deleted once the task expires");
    let unknown = request(&running, "tasks/get", &id, json!({"taskId": id})).await;
    assert!(unknown.get("error").is_some(), "{unknown}");
}

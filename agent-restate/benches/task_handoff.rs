//! What moving an MCP task to Restate costs: one call of a task tool that answers at
//! once (`echo`), from `tools/call` to `tasks/get` reading it `completed`, through an MCP
//! server over loopback HTTP, measured side by side in one process:
//!
//! - `memory`: the record in memory, the call run in the server (the baseline);
//! - `restate_store`: the record in Restate (`RestateTaskStore`), the call run in the
//!   server;
//! - `restate_runner`: the record in Restate and the call run on Restate (the store as
//!   the server's task runner too, `TaskWork` on a worker in this process): the task
//!   outlives its server.
//!
//! After the criterion group, rounds in which each setup runs a task once in turn, so
//! that load changing during the bench falls on each alike; printed from the medians:
//! how long `tools/call` takes to answer with the task (the hand-off is in it), and how
//! long until the task reads `completed` (asked again as soon as each answer arrives).
//!
//! `cargo bench -p toolwright-restate --features mcp --bench task_handoff`, after
//! `eval "$(bash scripts/restate.sh)"`; without `RESTATE_INGRESS_URL` the bench fails,
//! unless `TOOLWRIGHT_SKIP_SERVICES` names `restate`.

#[path = "../../agent-mcp/tests/support/raw_http.rs"]
mod raw_http;
#[path = "../tests/support/task_client.rs"]
mod task_client;

use criterion::{Criterion, criterion_group, criterion_main};
use raw_http::{Running, serve_on_loopback};
use serde_json::json;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use task_client::request;
use tokio::runtime::Runtime;
use toolwright_core::{tool, tools};
use toolwright_mcp::tasks::TaskOptions;
use toolwright_mcp::{HttpOptions, McpServer, ServerOptions};
use toolwright_restate::restate_sdk::prelude::{Endpoint, HttpServer};
use toolwright_restate::{RestateTaskStore, TaskRecords, TaskWork};

/// Answers `n`, as a task.
#[tool(task)]
async fn echo(n: u32) -> u32 {
    n
}

fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Runs one task on `running`: how long until `tools/call` answered, and until the task
/// read `completed`.
async fn one_task(running: &Running) -> (Duration, Duration) {
    let started = Instant::now();
    let params = json!({"name": "echo", "arguments": {"n": 7}});
    let answer = request(running, "tools/call", "echo", params).await;
    let answered = started.elapsed();
    let id = answer["result"]["taskId"].as_str().unwrap().to_owned();
    loop {
        let task = request(running, "tasks/get", &id, json!({"taskId": id})).await;
        match task["result"]["status"].as_str() {
            Some("completed") => break,
            Some("working") => {}
            _ => panic!("{task}"),
        }
    }
    (answered, started.elapsed())
}

/// A server of `echo` with `tasks`.
async fn serve(tasks: TaskOptions) -> Running {
    let mut options = ServerOptions::default();
    options.tasks = tasks;
    serve_on_loopback(
        McpServer::with_options(tools![echo], options),
        HttpOptions::default(),
    )
    .await
}

/// The setups there are, the baseline first.
async fn setups() -> Vec<(&'static str, Running)> {
    let mut setups = vec![("memory", serve(TaskOptions::default()).await)];
    let (Ok(ingress), Ok(admin)) = (
        std::env::var("RESTATE_INGRESS_URL"),
        std::env::var("RESTATE_ADMIN_URL"),
    ) else {
        let named = std::env::var("TOOLWRIGHT_SKIP_SERVICES")
            .is_ok_and(|names| names.split(',').any(|name| name.trim() == "restate"));
        assert!(
            named,
            "RESTATE_INGRESS_URL is not set: eval \"$(bash scripts/restate.sh)\" starts a \
             server, or TOOLWRIGHT_SKIP_SERVICES=restate skips the restate figures"
        );
        note("restate: skipped, TOOLWRIGHT_SKIP_SERVICES names it");
        return setups;
    };
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let endpoint = Endpoint::builder()
        .bind(TaskRecords)
        .bind(TaskWork::new(McpServer::new(tools![echo])))
        .build();
    tokio::spawn(HttpServer::new(endpoint).serve(listener));
    let response = reqwest::Client::new()
        .post(format!("{admin}/deployments"))
        .json(&json!({"uri": format!("http://127.0.0.1:{port}"), "force": true}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let store = Arc::new(RestateTaskStore::new(&ingress).unwrap());
    setups.push((
        "restate_store",
        serve(TaskOptions::default().store(store.clone())).await,
    ));
    setups.push((
        "restate_runner",
        serve(TaskOptions::default().store(store.clone()).runner(store)).await,
    ));
    setups
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let setups = rt.block_on(setups());
    let mut group = c.benchmark_group("task");
    for (name, running) in &setups {
        group.bench_function(*name, |b| {
            b.iter(|| rt.block_on(one_task(running)));
        });
    }
    group.finish();

    let rounds = if std::env::args().any(|arg| arg == "--quick") {
        5
    } else {
        30
    };
    let mut answered = vec![Vec::new(); setups.len()];
    let mut completed = vec![Vec::new(); setups.len()];
    for _ in 0..rounds {
        for (i, (_, running)) in setups.iter().enumerate() {
            let (answer, done) = rt.block_on(one_task(running));
            answered[i].push(answer);
            completed[i].push(done);
        }
    }
    note(&format!(
        "task_handoff: medians of {rounds} rounds, each setup in turn; one task of a tool \
         that answers at once"
    ));
    for (i, (name, _)) in setups.iter().enumerate() {
        note(&format!(
            "  {name}: tools/call answered in {:.2?}, completed after {:.2?}",
            median(answered[i].clone()),
            median(completed[i].clone()),
        ));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);

//! What a durable backend adds to each step of an agent run: the same agent (a scripted
//! model, a trivial tool) runs a run of [`STEPS`] steps, each a model call and a tool
//! call, measured side by side in one process:
//!
//! - in memory, nothing persisted (the baseline);
//! - checkpointed to SQLite (a file in WAL mode) after every step;
//! - checkpointed to Postgres (the server `DATABASE_URL` names) after every step;
//! - as a Restate workflow: a real worker ([`AgentRuns`] on an HTTP/2 endpoint) and the
//!   real server (`RESTATE_INGRESS_URL`, `RESTATE_ADMIN_URL`), the run started through the
//!   ingress and every model and tool call a journaled step.
//!
//! Beside them, one model round trip: the OpenAI client posting a turn to a loopback
//! server that answers at once, which is the least a model call can cost.
//!
//! After the criterion groups, the bench runs rounds in which each backend runs once in
//! turn, a run of [`STEPS`] steps and a run of one step, so that load changing during the
//! bench falls on every backend alike, and prints from the medians each backend's added
//! cost per step (its run's time minus the in-memory run's, over [`STEPS`]) against the
//! model round trip, split by the two lengths into what each step adds and what a run
//! pays once (starting it, and for Restate the trip through the ingress).
//!
//! A service that is not there fails the bench, unless `TOOLWRIGHT_SKIP_SERVICES` names
//! it (`postgres`, `restate`): a CI whose server did not start must not pass quietly.
//!
//! `cargo bench -p toolwright-restate --bench journal`, after
//! `eval "$(bash scripts/postgres.sh)"` and `eval "$(bash scripts/restate.sh)"`.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::runtime::Runtime;
use toolwright_core::llm::{AssistantMessage, LlmRequest, ToolCall};
use toolwright_core::testing::FnLlm;
use toolwright_core::{Agent, AgentResult, LlmClient, Message, RunOutcome, RunStore, tool, tools};
use toolwright_llm::OpenAiClient;
use toolwright_restate::AgentRuns;
use toolwright_restate::restate_sdk::prelude::{Endpoint, HttpServer};
use toolwright_store::{PostgresStore, SqliteStore};

/// Steps in a measured run: each a model call asking for a tool, then that tool's call.
/// A last model call gives the answer.
const STEPS: usize = 10;
const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

/// Look up an order.
#[tool]
async fn lookup(
    /// The order.
    order: u32,
) -> String {
    format!("order {order}: paid")
}

/// The user's message asking for a run of `steps` steps.
fn input(steps: usize) -> String {
    format!("Look up {steps} orders.")
}

/// Asks for `lookup` until as many results as the user asked for are in the
/// conversation, then answers. Its answers depend on the conversation only, as a
/// replayed Restate run needs.
fn scripted(request: &LlmRequest<'_>) -> AgentResult<AssistantMessage> {
    let asked = request
        .messages
        .iter()
        .find_map(|m| match m {
            Message::User { content } => content.split(' ').nth(2)?.parse().ok(),
            _ => None,
        })
        .unwrap_or(0);
    let done = request
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool(_)))
        .count();
    Ok(if done < asked {
        AssistantMessage::tool_calls([ToolCall::new(
            format!("c{done}"),
            "lookup",
            json!({"order": done}),
        )])
    } else {
        AssistantMessage::text("All orders are paid.")
    })
}

fn agent(store: Option<Arc<dyn RunStore>>) -> Agent {
    let builder = Agent::builder(FnLlm(scripted))
        .tools(tools![lookup])
        .max_turns(u32::try_from(STEPS).unwrap_or(u32::MAX) + 1)
        .state_key(KEY);
    match store {
        Some(store) => builder.checkpoints(store),
        None => builder,
    }
    .build()
    .unwrap()
}

fn note(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Whether `TOOLWRIGHT_SKIP_SERVICES` names `service`; panics when the service is missing
/// and not named, saying how to start it.
fn skip(service: &str, missing: &str, start: &str) {
    let named = std::env::var("TOOLWRIGHT_SKIP_SERVICES")
        .is_ok_and(|names| names.split(',').any(|name| name.trim() == service));
    assert!(
        named,
        "{missing} is not set: {start} starts a server, or TOOLWRIGHT_SKIP_SERVICES={service} \
         skips the {service} figures"
    );
    note(&format!(
        "{service}: skipped, TOOLWRIGHT_SKIP_SERVICES names it"
    ));
}

/// The same agent on each backend there is.
struct Backends {
    memory: Agent,
    sqlite: Agent,
    postgres: Option<Postgres>,
    restate: Option<Restate>,
}

struct Postgres {
    agent: Agent,
    store: Arc<dyn RunStore>,
    /// The runs measured, to take out of the shared table afterwards.
    ran: Mutex<Vec<String>>,
}

impl Backends {
    /// The backends' names, those that are there, the baseline first.
    fn names(&self) -> Vec<&'static str> {
        let mut names = vec!["memory", "sqlite"];
        if self.postgres.is_some() {
            names.push("postgres");
        }
        if self.restate.is_some() {
            names.push("restate");
        }
        names
    }

    /// One run of `steps` steps on `backend`, to its end.
    async fn run(&self, backend: &str, steps: usize) {
        match backend {
            "memory" => drop(run_in_process(&self.memory, steps).await),
            "sqlite" => drop(run_in_process(&self.sqlite, steps).await),
            "postgres" => {
                if let Some(pg) = &self.postgres {
                    let run_id = run_in_process(&pg.agent, steps).await;
                    pg.ran.lock().unwrap().push(run_id);
                }
            }
            "restate" => {
                if let Some(restate) = &self.restate {
                    restate.run(steps).await;
                }
            }
            other => unreachable!("no backend {other}"),
        }
    }
}

/// A run of `agent` to its end, checked: a bench that measured failing runs would lie.
async fn run_in_process(agent: &Agent, steps: usize) -> String {
    let mut run = agent.start(input(steps));
    let outcome = agent.run(&mut run).await.unwrap();
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    run.run_id
}

struct Restate {
    ingress: String,
    http: reqwest::Client,
    /// Workflow ids are used once: each run gets the prefix and the next number.
    prefix: String,
    next: AtomicU64,
}

impl Restate {
    /// Serves `AgentRun` from this process on a free port and registers it.
    async fn start(admin: &str, ingress: String) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let runs = AgentRuns::new(Arc::new(agent(None)));
        tokio::spawn(HttpServer::new(Endpoint::builder().bind(runs).build()).serve(listener));
        let http = reqwest::Client::new();
        let response = http
            .post(format!("{admin}/deployments"))
            .json(&json!({"uri": format!("http://127.0.0.1:{port}"), "force": true}))
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "registering the worker: {}",
            response.text().await.unwrap_or_default()
        );
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            ingress,
            http,
            prefix: format!("bench-{}-{}", std::process::id(), since_epoch.as_millis()),
            next: AtomicU64::new(0),
        }
    }

    /// Starts a run through the ingress and waits for its report.
    async fn run(&self, steps: usize) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let response = self
            .http
            .post(format!("{}/AgentRun/{}-{n}/run", self.ingress, self.prefix))
            .json(&json!({"input": input(steps)}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let report: serde_json::Value = response.json().await.unwrap();
        assert!(
            status.is_success() && report["status"] == "finished",
            "{status}: {report}"
        );
    }
}

/// A loopback HTTP/1.1 server answering every request at once with one Chat Completions
/// answer (a tool call), over kept-alive connections: a model round trip with no model.
async fn instant_model_server() -> String {
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1741570283,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "lookup", "arguments": "{\"order\":1}"}}]}}],
        "usage": {"prompt_tokens": 60, "completion_tokens": 12, "total_tokens": 72}
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let response = Arc::new(response);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let response = response.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut read = BufReader::new(read);
                let mut line = String::new();
                let mut body = Vec::new();
                loop {
                    // The head, line by line, for the body's length; the body, unread.
                    let mut length = 0;
                    loop {
                        line.clear();
                        if read.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    body.resize(length, 0);
                    if read.read_exact(&mut body).await.is_err()
                        || write.write_all(response.as_bytes()).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// One model turn through the OpenAI client, against the loopback server.
struct ModelTurn {
    client: OpenAiClient,
    messages: Vec<Message>,
    tools: Vec<Arc<toolwright_core::toolset::ToolDefinition>>,
}

impl ModelTurn {
    async fn new() -> Self {
        let client = OpenAiClient::builder("gpt-4o-mini")
            .base_url(instant_model_server().await)
            .api_key("bench")
            .build()
            .unwrap();
        Self {
            client,
            messages: vec![Message::user(input(STEPS))],
            tools: tools![lookup]
                .definition("lookup")
                .cloned()
                .into_iter()
                .collect(),
        }
    }

    async fn call(&self) {
        let answer = self
            .client
            .complete(LlmRequest::new(&self.messages, &self.tools))
            .await
            .unwrap();
        assert_eq!(answer.tool_calls.len(), 1);
    }
}

/// Times `one` (awaited once an iteration) as `group/name`.
fn timed<Fut: Future<Output = ()>>(
    c: &mut Criterion,
    rt: &Runtime,
    group: &str,
    name: &str,
    one: impl Fn() -> Fut,
) {
    let mut group = c.benchmark_group(group);
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    one().await;
                }
                started.elapsed()
            })
        });
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    // reqwest is built over rustls with no provider chosen: the bench picks ring, as an
    // application would.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("toolwright-journal-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sqlite: Arc<dyn RunStore> =
        Arc::new(rt.block_on(SqliteStore::open(dir.join("runs.db"))).unwrap());
    let postgres = match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => {
            let store: Arc<dyn RunStore> =
                Arc::new(rt.block_on(PostgresStore::connect(&url)).unwrap());
            Some(Postgres {
                agent: agent(Some(store.clone())),
                store,
                ran: Mutex::default(),
            })
        }
        _ => {
            skip(
                "postgres",
                "DATABASE_URL",
                "eval \"$(bash scripts/postgres.sh)\"",
            );
            None
        }
    };
    let restate = match (
        std::env::var("RESTATE_INGRESS_URL"),
        std::env::var("RESTATE_ADMIN_URL"),
    ) {
        (Ok(ingress), Ok(admin)) => Some(rt.block_on(Restate::start(&admin, ingress))),
        _ => {
            skip(
                "restate",
                "RESTATE_INGRESS_URL or RESTATE_ADMIN_URL",
                "eval \"$(bash scripts/restate.sh)\"",
            );
            None
        }
    };
    let backends = Backends {
        memory: agent(None),
        sqlite: agent(Some(sqlite)),
        postgres,
        restate,
    };
    let model = rt.block_on(ModelTurn::new());

    for name in backends.names() {
        timed(c, &rt, "journal/run_of_10_steps", name, || {
            backends.run(name, STEPS)
        });
    }
    timed(
        c,
        &rt,
        "journal/model_round_trip",
        "openai_loopback",
        || model.call(),
    );

    // Criterion's quick mode asks for a short run; so does the summary.
    let rounds = if std::env::args().any(|arg| arg == "--quick") {
        5
    } else {
        30
    };
    rt.block_on(summary(&backends, &model, rounds));

    if let Some(pg) = backends.postgres {
        rt.block_on(async {
            for run_id in pg.ran.into_inner().unwrap() {
                // Each ended at its last checkpoint: deleted at the revision stored.
                if let Some(record) = pg.store.load(&run_id).await.unwrap() {
                    pg.store.delete(&run_id, record.revision).await.unwrap();
                }
            }
        });
    }
    drop(backends.sqlite);
    let _ = std::fs::remove_dir_all(&dir);
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// Runs `rounds` rounds, each backend once in turn per round (a run of [`STEPS`] steps,
/// a run of one step) and one model turn, then prints each backend's added cost per
/// step and per run, from the medians, against the model turn.
async fn summary(backends: &Backends, model: &ModelTurn, rounds: usize) {
    let names = backends.names();
    let mut long = vec![Vec::new(); names.len()];
    let mut short = vec![Vec::new(); names.len()];
    let mut turns = Vec::new();
    for _ in 0..rounds {
        for (i, name) in names.iter().enumerate() {
            for (steps, times) in [(STEPS, &mut long[i]), (1, &mut short[i])] {
                let started = Instant::now();
                backends.run(name, steps).await;
                times.push(started.elapsed());
            }
        }
        let started = Instant::now();
        model.call().await;
        turns.push(started.elapsed());
    }
    let long: Vec<_> = long.into_iter().map(median).collect();
    let short: Vec<_> = short.into_iter().map(median).collect();
    let turn = median(turns);
    let steps = u32::try_from(STEPS).unwrap_or(u32::MAX);
    let ratio = |d: Duration| d.as_secs_f64() / turn.as_secs_f64();
    note(&format!(
        "journal: medians of {rounds} rounds, each backend in turn; a step is a model call \
         and a tool call; a run of {STEPS} steps, and of 1"
    ));
    note(&format!(
        "  model round trip, OpenAI client to a loopback server answering at once: {turn:.2?}"
    ));
    for (i, name) in names.iter().enumerate() {
        if i == 0 {
            note(&format!(
                "  {name}: {:.2?} a run of {STEPS} steps, {:.2?} a run of 1",
                long[0], short[0]
            ));
            continue;
        }
        let added = long[i].saturating_sub(long[0]);
        let added_short = short[i].saturating_sub(short[0]);
        let per_step = added / steps;
        // Split by the two lengths: what one more step adds, and what is left for a run.
        let each_step = added.saturating_sub(added_short) / (steps - 1);
        let each_run = added_short.saturating_sub(each_step);
        note(&format!(
            "  {name}: {:.2?} a run of {STEPS} steps, {:.2?} a run of 1; adds {per_step:.2?} a \
             step over {STEPS} steps ({:.2}x the model round trip): {each_step:.2?} each step \
             ({:.2}x), {each_run:.2?} once a run",
            long[i],
            short[i],
            ratio(per_step),
            ratio(each_step),
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

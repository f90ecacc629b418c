//! Runs on a real Restate server (`scripts/restate.sh` starts one and prints
//! `RESTATE_INGRESS_URL`/`RESTATE_ADMIN_URL`): a worker process killed with SIGKILL in a
//! tool call and right after one, then started again; approvals, refused and accepted,
//! including one sent while no worker is up.
//!
//! The worker is this test binary run again with `TOOLWRIGHT_RESTATE_WORKER` set (the
//! ignored test `worker`). It reports what it does on stdout, one line per event, and the
//! tests wait on those lines and on HTTP answers, never on time. Its tool records each
//! attempt and, keyed by the idempotency key, each side effect, in files of its folder.

#[path = "support/services.rs"]
mod services;

use serde_json::{Value, json};
use services::{Urls, Worker, append, effect_once, effects, folder, free_port, lines, say};
use std::path::PathBuf;
use std::sync::Arc;
use toolwright_core::llm::{AssistantMessage, LlmClient, LlmRequest, Message, ToolCall};
use toolwright_core::tool::{ApprovalPolicy, ExternalTool, State, ToolError};
use toolwright_core::{Agent, AgentResult, ToolContext, tool, tools};
use toolwright_restate::AgentRuns;
use toolwright_restate::restate_sdk::prelude::Endpoint;

const WORKER: &str = "TOOLWRIGHT_RESTATE_WORKER";

// ---- the worker ----------------------------------------------------------------------

#[derive(Clone)]
struct Folder(Arc<PathBuf>);

/// Charge an order.
#[tool]
async fn charge(
    /// The order to charge.
    order: u32,
    folder: State<Folder>,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    let dir: &PathBuf = &folder.0.0;
    let key = ctx.idempotency_key();
    append(&dir.join("attempts.log"), &key);
    // The side effect, once per key however often the call runs: what a tool does with
    // its idempotency key.
    effect_once(dir, &key);
    say(&format!("charged {order}"));
    if dir.join("hold-tool").exists() {
        say("holding tool");
        std::future::pending::<()>().await;
    }
    Ok(format!("charged order {order}"))
}

/// Asks for `charge` until a tool result is in the conversation, then answers with it.
struct Model(Arc<PathBuf>);

#[async_trait::async_trait]
impl LlmClient for Model {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        append(&self.0.join("model.log"), "asked");
        let result = request.messages.iter().find_map(|m| match m {
            Message::Tool(result) => Some(result.clone()),
            _ => None,
        });
        let Some(result) = result else {
            say("model asks for charge");
            return Ok(AssistantMessage::tool_calls([ToolCall::new(
                "c1",
                "charge",
                json!({"order": 7}),
            )]));
        };
        if self.0.join("hold-model").exists() {
            say("holding model");
            std::future::pending::<()>().await;
        }
        let text = serde_json::to_string(&result.content).unwrap_or_default();
        Ok(AssistantMessage::text(format!("done: {text}")))
    }
}

/// The worker, when this binary is run as one: serves `AgentRun` on the port and folder
/// it is given.
#[test]
#[ignore = "run by the tests below as a separate process"]
fn worker() {
    let Some((port, dir)) = services::worker_spec(WORKER) else {
        return;
    };
    let approval = dir.join("approval").exists();
    // `external`: `charge` is done by another service, which supplies its output.
    let tools = if dir.join("external").exists() {
        let schema = json!({"type": "object", "properties": {"order": {"type": "integer"}}, "required": ["order"]});
        toolwright_core::ToolSet::new()
            .with_tool(ExternalTool::new("charge", "Charge an order.", schema))
            .expect("one tool")
    } else {
        tools![charge]
    };
    let agent = Agent::builder(Model(dir.clone()))
        .tools(tools)
        .state(Folder(dir.clone()))
        .approval_rule(move |_, _| {
            if approval {
                ApprovalPolicy::Required
            } else {
                ApprovalPolicy::NotRequired
            }
        })
        .state_key(b"a test key of at least sixteen bytes")
        .build()
        .expect("the agent builds");
    services::serve_worker(port, || {
        let mut runs = AgentRuns::new(Arc::new(agent));
        if let Ok(ms) = std::fs::read_to_string(dir.join("approval-timeout-ms")) {
            let ms = ms.trim().parse().expect("milliseconds");
            runs = runs.approval_timeout(std::time::Duration::from_millis(ms));
        }
        Endpoint::builder().bind(runs).build()
    });
}

// ---- the tests -----------------------------------------------------------------------

/// One test at a time: each registers its worker as the service's latest deployment.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

struct Restate {
    ingress: String,
    admin: String,
    http: reqwest::Client,
}

/// The server's URLs, and a client for them.
fn restate() -> Option<Restate> {
    let Urls { ingress, admin } = services::urls()?;
    Some(Restate {
        ingress,
        admin,
        http: reqwest::Client::new(),
    })
}

impl Restate {
    async fn register(&self, port: u16) {
        services::register(&self.admin, port).await;
    }

    /// Starts run `run_id` without waiting for it: the invocation's id.
    async fn start(&self, run_id: &str) -> String {
        let response = self
            .http
            .post(format!("{}/AgentRun/{run_id}/run/send", self.ingress))
            .json(&json!({"input": "Charge order 7"}))
            .send()
            .await
            .expect("the ingress answers");
        assert!(response.status().is_success(), "{}", response.status());
        let sent: Value = response.json().await.expect("a JSON answer");
        sent["invocationId"]
            .as_str()
            .unwrap_or_else(|| panic!("no invocation id: {sent}"))
            .to_owned()
    }

    /// The run's report once it ends: Restate answers when the workflow does.
    async fn outcome(&self, run_id: &str) -> Value {
        let response = self
            .http
            .get(format!(
                "{}/restate/workflow/AgentRun/{run_id}/attach",
                self.ingress
            ))
            .send()
            .await
            .expect("the ingress answers");
        assert!(response.status().is_success(), "{}", response.status());
        response.json().await.expect("a JSON report")
    }

    /// Calls `handler` of run `run_id`: the status and the body.
    async fn call(&self, run_id: &str, handler: &str, body: Value) -> (u16, Value) {
        let request = self
            .http
            .post(format!("{}/AgentRun/{run_id}/{handler}", self.ingress));
        // A handler that takes no input takes no body.
        let request = if body.is_null() {
            request
        } else {
            request.json(&body)
        };
        let response = request.send().await.expect("the ingress answers");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
}

impl Restate {
    /// Sends `body` to `handler` of run `run_id` in the background: its status, once
    /// Restate answers (which, with no worker up, waits for one).
    fn send(
        &self,
        run_id: &str,
        handler: &str,
        body: Value,
    ) -> tokio::task::JoinHandle<reqwest::Result<u16>> {
        let request = self
            .http
            .post(format!("{}/AgentRun/{run_id}/{handler}", self.ingress))
            .json(&body);
        tokio::spawn(async move { request.send().await.map(|r| r.status().as_u16()) })
    }

    /// The run's report once it records its pause, or its end (the status handler
    /// answers 404 before the run starts): asked again on each answer, not on a clock.
    async fn paused(&self, run_id: &str) -> Value {
        loop {
            let (status, report) = self.call(run_id, "status", Value::Null).await;
            if status == 200 && report["status"] != "ready" {
                return report;
            }
            tokio::task::yield_now().await;
        }
    }
}

/// A worker whose calls all need approval, its folder, and a run paused on one.
async fn paused_run(
    restate: &Restate,
    name: &str,
    timeout_ms: Option<u64>,
) -> (Worker, PathBuf, String) {
    let dir = folder(name);
    std::fs::write(dir.join("approval"), "").expect("writable");
    if let Some(ms) = timeout_ms {
        std::fs::write(dir.join("approval-timeout-ms"), ms.to_string()).expect("writable");
    }
    let port = free_port();
    let worker = Worker::start(WORKER, port, &dir).await;
    restate.register(port).await;
    let run = run_id(name);
    restate.start(&run).await;
    restate.paused(&run).await;
    (worker, dir, run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_waiting_for_approval_is_cancelled() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let (_worker, dir, run) = paused_run(&restate, "cancel", None).await;
    let (status, body) = restate.call(&run, "cancel", Value::Null).await;
    assert_eq!(status, 200, "{body}");
    let report = restate.outcome(&run).await;
    assert_eq!(report["status"], "cancelled", "{report}");
    assert_eq!(effects(&dir), 0, "the call never ran");
    let (status, body) = restate
        .call(
            &run,
            "approve",
            json!({"call_id": "c1", "decision": "approved", "decider": {"who": "alice"}}),
        )
        .await;
    assert_eq!(status, 409, "a cancelled run takes no decision: {body}");
    assert!(body.to_string().contains("Cancelled"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_timer_denies_a_call_nobody_decided() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let (_worker, dir, run) = paused_run(&restate, "timer", Some(300)).await;
    let report = restate.outcome(&run).await;
    assert_eq!(report["status"], "finished", "{report}");
    let record = &report["approvals"][0];
    assert_eq!(record["decision"], "denied", "{report}");
    assert!(
        record["who"]
            .as_str()
            .unwrap_or_default()
            .contains("timeout"),
        "{report}"
    );
    assert!(
        report["answer"]
            .as_str()
            .unwrap_or_default()
            .contains("denied"),
        "{report}"
    );
    assert_eq!(effects(&dir), 0, "the call never ran");
}

fn run_id(name: &str) -> String {
    format!("{name}-{}-{}", std::process::id(), free_port())
}

/// Starts a run on a worker that stops at `hold` (a file the worker looks for) and
/// says `held` there, kills the worker with SIGKILL, starts it again without the hold,
/// and answers the run's folder and its final report.
async fn killed_and_restarted(
    restate: &Restate,
    name: &str,
    hold: &str,
    held: &str,
) -> (PathBuf, Value) {
    let dir = folder(name);
    std::fs::write(dir.join(hold), "").expect("writable");
    let port = free_port();
    let mut worker = Worker::start(WORKER, port, &dir).await;
    restate.register(port).await;
    let run = run_id(name);
    restate.start(&run).await;
    worker.wait_for(held).await;
    worker.kill().await;

    std::fs::remove_file(dir.join(hold)).expect("writable");
    let _worker = Worker::start(WORKER, port, &dir).await;
    let report = restate.outcome(&run).await;
    assert_eq!(report["status"], "finished", "{report}");
    let answer = report["answer"].as_str().unwrap_or_default();
    assert!(answer.contains("charged order 7"), "{report}");
    assert_eq!(effects(&dir), 1, "the side effect happened once");
    (dir, report)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_tool_call_the_run_finishes_with_the_effect_once() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let (dir, _) = killed_and_restarted(&restate, "during", "hold-tool", "holding tool").await;
    // The call had no journaled result: it ran again, with the same key, and the effect
    // happened once. The model's first answer was journaled: asked twice in all, not three.
    assert_eq!(lines(&dir.join("attempts.log")), 2);
    assert_eq!(lines(&dir.join("model.log")), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_right_after_a_tool_call_the_call_is_replayed_not_run() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    // The model is asked again only once the tool's result is journaled: the kill comes
    // after the tool's step.
    let (dir, _) = killed_and_restarted(&restate, "after", "hold-model", "holding model").await;
    assert_eq!(lines(&dir.join("attempts.log")), 1, "the tool ran once");
    // The first answer replayed; the second asked twice (the kill cut the first ask).
    assert_eq!(lines(&dir.join("model.log")), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_are_checked_and_one_sent_with_no_worker_up_completes() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let (worker, dir, run) = paused_run(&restate, "approval", None).await;
    let pending = restate.paused(&run).await;
    assert_eq!(pending["pending"][0]["call"]["id"], "c1", "{pending}");
    let alice = json!({"who": "alice", "reason": "order 8 is the right one"});

    let (status, body) = restate
        .call(
            &run,
            "approve",
            json!({"call_id": "c9", "decision": "approved", "decider": alice}),
        )
        .await;
    assert_eq!(status, 404, "an unknown call id is refused: {body}");
    let (status, body) = restate
        .call(
            &run,
            "approve",
            json!({"call_id": "c1", "decision": "approved", "decider": alice, "arguments": {"order": "eight"}}),
        )
        .await;
    assert_eq!(status, 422, "arguments off the schema are refused: {body}");
    assert!(
        body.to_string().contains("order"),
        "the refusal names the field: {body}"
    );
    assert_eq!(effects(&dir), 0, "nothing ran");

    // No worker up: the decision waits in Restate.
    let port = worker.port;
    worker.kill().await;
    let body = json!({"call_id": "c1", "decision": "approved", "decider": {"who": "alice", "reason": "order 8 is the right one"}, "arguments": {"order": 8}});
    let decide = restate.send(&run, "approve", body);
    let _worker = Worker::start(WORKER, port, &dir).await;
    assert_eq!(decide.await.expect("joined").expect("answered"), 200);
    let report = restate.outcome(&run).await;
    assert_eq!(report["status"], "finished", "{report}");
    assert!(
        report["answer"]
            .as_str()
            .unwrap_or_default()
            .contains("charged order 8"),
        "{report}"
    );
    let record = &report["approvals"][0];
    assert_eq!(record["who"], "alice");
    assert_eq!(record["reason"], "order 8 is the right one");
    assert_eq!(record["corrected_from"], json!({"order": 7}));
    assert!(record["at_ms"].as_u64().unwrap_or_default() > 0, "{record}");

    let (status, body) = restate
        .call(
            &run,
            "approve",
            json!({"call_id": "c1", "decision": "approved", "decider": alice}),
        )
        .await;
    assert_eq!(status, 409, "a replayed approval is refused: {body}");
    assert_eq!(effects(&dir), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_reviewers_deciding_at_once_exactly_one_is_told_they_decided() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let (_worker, dir, run) = paused_run(&restate, "race", None).await;
    // Sent together, so that every request passes the "decided already?" check before
    // any of them resolves the promise.
    let reviewers = ["alice", "bob", "carol", "dave", "erin", "frank"];
    let answers = futures::future::join_all(reviewers.iter().enumerate().map(|(i, who)| {
        let verdict = if i % 2 == 0 { "approved" } else { "denied" };
        restate.call(
            &run,
            "approve",
            json!({"call_id": "c1", "decision": verdict, "decider": {"who": who, "reason": "mine"}}),
        )
    }))
    .await;
    let told: Vec<&str> = reviewers
        .iter()
        .zip(&answers)
        .filter(|(_, (status, _))| *status == 200)
        .map(|(who, _)| *who)
        .collect();
    assert_eq!(
        told.len(),
        1,
        "one decision holds, one reviewer is told so: {answers:?}"
    );
    for (status, body) in answers.iter().filter(|(status, _)| *status != 200) {
        assert_eq!(*status, 409, "the others are told it was decided: {body}");
    }
    let report = restate.outcome(&run).await;
    assert_eq!(
        report["approvals"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert_eq!(
        report["approvals"][0]["who"], told[0],
        "the decision the run took is the one its sender was told of: {report}"
    );
    let approved = report["approvals"][0]["decision"] == "approved";
    assert_eq!(effects(&dir), usize::from(approved), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_output_is_checked_and_one_sent_with_no_worker_up_completes() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let dir = folder("external");
    std::fs::write(dir.join("external"), "").expect("writable");
    let port = free_port();
    let worker = Worker::start(WORKER, port, &dir).await;
    restate.register(port).await;
    let run = run_id("external");
    restate.start(&run).await;
    let paused = restate.paused(&run).await;
    assert_eq!(paused["pending"][0]["call"]["id"], "c1", "{paused}");
    let output = |text: &str| json!([{"type": "text", "text": text}]);

    let (status, body) = restate
        .call(
            &run,
            "supply",
            json!({"call_id": "c9", "output": output("no")}),
        )
        .await;
    assert_eq!(status, 404, "an unknown call id is refused: {body}");
    let (status, body) = restate
        .call(
            &run,
            "approve",
            json!({"call_id": "c1", "decision": "approved", "decider": {"who": "alice"}}),
        )
        .await;
    assert_eq!(
        status, 404,
        "a call waiting for output is not approved: {body}"
    );

    // No worker up: the output waits in Restate.
    worker.kill().await;
    let body = json!({"call_id": "c1", "output": output("billing service: order 7 charged")});
    let supply = restate.send(&run, "supply", body);
    let _worker = Worker::start(WORKER, port, &dir).await;
    assert_eq!(supply.await.expect("joined").expect("answered"), 200);
    let report = restate.outcome(&run).await;
    assert_eq!(report["status"], "finished", "{report}");
    assert!(
        report["answer"]
            .as_str()
            .unwrap_or_default()
            .contains("billing service: order 7 charged"),
        "the model read the supplied output: {report}"
    );
    let (status, body) = restate
        .call(
            &run,
            "supply",
            json!({"call_id": "c1", "output": output("again")}),
        )
        .await;
    assert_eq!(status, 409, "a second output is refused: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_cancelled_during_a_tool_call_ends_cancelled_and_runs_nothing_more() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let dir = folder("mid-step");
    std::fs::write(dir.join("hold-tool"), "").expect("writable");
    let port = free_port();
    let mut worker = Worker::start(WORKER, port, &dir).await;
    restate.register(port).await;
    let run = run_id("mid-step");
    let invocation = restate.start(&run).await;
    worker.wait_for("holding tool").await;

    // Cancelled through Restate, as its admin API does it, while the tool runs.
    let response = restate
        .http
        .patch(format!("{}/invocations/{invocation}/cancel", restate.admin))
        .send()
        .await
        .expect("the admin API answers");
    assert!(response.status().is_success(), "{}", response.status());
    let report = restate.outcome(&run).await;
    assert_eq!(report["status"], "cancelled", "{report}");
    assert!(report.get("answer").is_none(), "{report}");
    assert_eq!(effects(&dir), 1, "the call in flight ran once");
    assert_eq!(
        lines(&dir.join("model.log")),
        1,
        "the model was not asked again"
    );
    let (status, last) = restate.call(&run, "status", Value::Null).await;
    assert_eq!(status, 200);
    assert_eq!(
        last["status"], "cancelled",
        "the record says so too: {last}"
    );
}

/// A TCP proxy on a free port, forwarding each connection to the first of `backends`
/// that accepts it: the one deployment Restate knows, with two workers behind it.
async fn proxy(backends: [u16; 2]) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let port = listener.local_addr().expect("its address").port();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                for backend in backends {
                    if let Ok(mut outbound) =
                        tokio::net::TcpStream::connect(("127.0.0.1", backend)).await
                    {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        return;
                    }
                }
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_share_runs_and_one_resumes_the_run_of_the_other() {
    let Some(restate) = restate() else { return };
    let _serial = SERIAL.lock().await;
    let dir = folder("fleet");
    std::fs::write(dir.join("hold-tool"), "").expect("writable");
    let (first_port, second_port) = (free_port(), free_port());
    let mut first = Worker::start(WORKER, first_port, &dir).await;
    let mut second = Worker::start(WORKER, second_port, &dir).await;
    restate
        .register(proxy([first_port, second_port]).await)
        .await;
    let run = run_id("fleet");
    restate.start(&run).await;
    first.wait_for("holding tool").await;
    std::fs::remove_file(dir.join("hold-tool")).expect("writable");
    first.kill().await;

    // The other worker, up all along, replays the run and finishes it.
    second.wait_for("charged 7").await;
    let report = restate.outcome(&run).await;
    assert_eq!(report["status"], "finished", "{report}");
    assert_eq!(effects(&dir), 1, "the side effect happened once");
    assert_eq!(lines(&dir.join("attempts.log")), 2);
    assert_eq!(
        lines(&dir.join("model.log")),
        2,
        "the model's first answer was replayed"
    );
}

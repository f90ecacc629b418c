//! The call pipeline used directly, one call at a time: each step refuses or shapes the
//! call as the executor and the MCP server rely on.

mod waiting;

use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use toolwright_core::{
    CallRunner, Content, Tool, ToolContext, ToolError, ToolErrorKind, ToolSet, async_trait,
    exec::{ApprovalDecision, ApproveAll, Approver},
    llm::ToolCall,
    tool::{ExternalTool, ToolAnnotations, ToolExposure, ToolOutcome},
    toolset::ToolConfig,
};
use waiting::{Latch, OpensOnDrop, within};

/// What a test tool does when called.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Answers `n` characters of text.
    Text(usize),
    /// Sleeps (cooperatively) this long, then answers.
    Sleeps(Duration),
    /// Blocks its thread until the test opens its latch, then answers.
    Blocks,
    /// Fails its first `n` runs, then answers.
    FailsFirst(usize),
    /// Fails with a message of `n` characters.
    FailsLong(usize),
    /// Waits until told to go on.
    WaitsForGate,
}

struct Probe {
    name: &'static str,
    behaviour: Behaviour,
    exposure: ToolExposure,
    annotations: ToolAnnotations,
    timeout_ms: Option<u64>,
    runs: Arc<AtomicUsize>,
    gate: Arc<Notify>,
    /// Notified as each run starts.
    started: Arc<Notify>,
    latch: Arc<Latch>,
}

impl Probe {
    fn new(name: &'static str, behaviour: Behaviour) -> Self {
        Self {
            name,
            behaviour,
            exposure: ToolExposure::Direct,
            annotations: ToolAnnotations::default(),
            timeout_ms: None,
            runs: Arc::default(),
            gate: Arc::default(),
            started: Arc::default(),
            latch: Arc::default(),
        }
    }
}

#[async_trait]
impl Tool for Probe {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "A tool whose behaviour the test chooses."
    }

    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer"}}})
    }

    fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations.clone()
    }

    fn timeout_ms(&self) -> Option<u64> {
        self.timeout_ms
    }

    async fn call(
        &self,
        _args: &Value,
        _ctx: &ToolContext,
    ) -> toolwright_core::AgentResult<Vec<Content>> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        self.started.notify_one();
        match self.behaviour {
            Behaviour::Text(n) => Ok(vec![Content::text("x".repeat(n))]),
            Behaviour::Sleeps(time) => {
                tokio::time::sleep(time).await;
                Ok(vec![Content::text("slept")])
            }
            Behaviour::Blocks => {
                self.latch.wait();
                Ok(vec![Content::text("blocked")])
            }
            Behaviour::FailsFirst(n) if run <= n => {
                Err(ToolError::execution(format!("run {run} failed")).into())
            }
            Behaviour::FailsFirst(_) => Ok(vec![Content::text(format!("run {run} worked"))]),
            Behaviour::FailsLong(n) => Err(ToolError::execution("e".repeat(n)).into()),
            Behaviour::WaitsForGate => {
                self.gate.notified().await;
                Ok(vec![Content::text("through the gate")])
            }
        }
    }
}

fn runner(tools: Vec<Probe>, config: ToolConfig) -> CallRunner {
    let mut set = ToolSet::new();
    for tool in tools {
        set.register_tool(tool).unwrap();
    }
    CallRunner::new(Arc::new(set), config)
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall::new("call_1", name, arguments)
}

fn error(outcome: &ToolOutcome) -> &ToolError {
    outcome
        .error()
        .unwrap_or_else(|| panic!("not an error: {outcome:?}"))
}

/// Refuses every call, counting the questions.
#[derive(Default)]
struct Refuses(AtomicUsize);

#[async_trait]
impl Approver for Refuses {
    async fn approve(&self, call: &ToolCall, _tool: &dyn Tool) -> ApprovalDecision {
        self.0.fetch_add(1, Ordering::SeqCst);
        ApprovalDecision::Denied(ToolError::denied(format!("no to {}", call.name)))
    }
}

#[tokio::test]
async fn hidden_and_unknown_tools_are_refused_as_unknown_and_never_run() {
    let mut hidden = Probe::new("hidden", Behaviour::Text(1));
    hidden.exposure = ToolExposure::Hidden;
    let runs = hidden.runs.clone();
    let runner = runner(
        vec![hidden, Probe::new("shown", Behaviour::Text(1))],
        ToolConfig::default(),
    );
    for name in ["hidden", "missing"] {
        let result = runner
            .run(call(name, json!({})), ToolContext::default(), &ApproveAll)
            .await;
        let error = error(&result.outcome);
        assert_eq!(error.kind(), ToolErrorKind::UnknownTool, "{error}");
        // The model hears which tools it may call: the offered one, never the hidden one.
        assert!(error.message().contains("shown"), "{error}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_refused_before_the_tool_runs() {
    let tool = Probe::new("probe", Behaviour::Text(1));
    let runs = tool.runs.clone();
    let runner = runner(vec![tool], ToolConfig::default());
    let result = runner
        .run(
            call("probe", json!([1, 2])),
            ToolContext::default(),
            &ApproveAll,
        )
        .await;
    let error = error(&result.outcome);
    assert_eq!(error.kind(), ToolErrorKind::InvalidArguments);
    assert!(
        error
            .message()
            .contains("expected a JSON object, got an array"),
        "{error}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_refused_approval_runs_nothing_and_the_refusal_is_the_answer() {
    let mut tool = Probe::new("wipe", Behaviour::Text(1));
    tool.annotations.destructive = Some(true);
    let runs = tool.runs.clone();
    let runner = runner(vec![tool], ToolConfig::default());
    let refuses = Refuses::default();
    let result = runner
        .run(call("wipe", json!({})), ToolContext::default(), &refuses)
        .await;
    let error = error(&result.outcome);
    assert_eq!(error.kind(), ToolErrorKind::Denied);
    assert_eq!(error.message(), "no to wipe");
    assert_eq!(
        (
            refuses.0.load(Ordering::SeqCst),
            runs.load(Ordering::SeqCst)
        ),
        (1, 0)
    );

    // A call that needs no approval is not asked about.
    let runner = self::runner(
        vec![Probe::new("read", Behaviour::Text(1))],
        ToolConfig::default(),
    );
    let result = runner
        .run(call("read", json!({})), ToolContext::default(), &refuses)
        .await;
    assert!(result.outcome.content().is_some(), "{:?}", result.outcome);
    assert_eq!(refuses.0.load(Ordering::SeqCst), 1);
}

/// Approves every call, after checking that no global permit is free: the call asked
/// about holds none while it waits for a person.
struct ApprovesWhileTheLimitIsTaken(Arc<Notify>);

#[async_trait]
impl Approver for ApprovesWhileTheLimitIsTaken {
    async fn approve(&self, _call: &ToolCall, _tool: &dyn Tool) -> ApprovalDecision {
        // Asked while another call holds the only permit: asking does not wait for it.
        self.0.notify_one();
        ApprovalDecision::Approved
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_is_asked_before_permits_are_taken() {
    let gated = Probe::new("gated", Behaviour::WaitsForGate);
    let (gate, gated_started) = (gated.gate.clone(), gated.started.clone());
    let mut wipe = Probe::new("wipe", Behaviour::Text(1));
    wipe.annotations.destructive = Some(true);
    let runner = runner(
        vec![gated, wipe],
        ToolConfig::default().with_max_concurrency(1),
    );
    // The gated call takes the only permit and keeps it.
    let first = tokio::spawn({
        let runner = runner.clone();
        async move {
            runner
                .run(
                    call("gated", json!({})),
                    ToolContext::default(),
                    &ApproveAll,
                )
                .await
        }
    });
    // Running means it has its permits.
    within("the gated call starting", gated_started.notified()).await;
    let asked = Arc::new(Notify::new());
    let approver = ApprovesWhileTheLimitIsTaken(asked.clone());
    let second = tokio::spawn({
        let runner = runner.clone();
        async move {
            runner
                .run(call("wipe", json!({})), ToolContext::default(), &approver)
                .await
        }
    });
    within(
        "the approver being asked while the permit was taken",
        asked.notified(),
    )
    .await;
    gate.notify_one();
    assert!(first.await.unwrap().outcome.content().is_some());
    assert!(second.await.unwrap().outcome.content().is_some());
}

// On the paused clock: the tool's five seconds and the call's 100ms take no real time.
#[tokio::test(start_paused = true)]
async fn a_call_past_its_timeout_is_answered_as_a_timeout() {
    let mut sleeps = Probe::new("sleeps", Behaviour::Sleeps(Duration::from_secs(5)));
    sleeps.timeout_ms = Some(100);
    let runner = runner(vec![sleeps], ToolConfig::default());
    let result = runner
        .run(
            call("sleeps", json!({})),
            ToolContext::default(),
            &ApproveAll,
        )
        .await;
    let error = error(&result.outcome);
    assert_eq!(
        error.kind(),
        ToolErrorKind::Timeout,
        "the call outliving its timeout was not answered as timed out: {error}"
    );
    assert!(
        error.message().contains("100ms"),
        "the message does not name the timeout: {error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_blocking_its_thread_past_its_timeout_is_answered_while_it_still_blocks() {
    // Blocks its thread until the call has its answer: a runner that waited for the
    // tool would never answer.
    let mut blocks = Probe::new("blocks", Behaviour::Blocks);
    blocks.timeout_ms = Some(100);
    let latch = blocks.latch.clone();
    let _release = OpensOnDrop(latch.clone());
    let runner = runner(vec![blocks], ToolConfig::default());
    let result = within(
        "the call's answer while its tool still blocks its thread",
        runner.run(
            call("blocks", json!({})),
            ToolContext::default(),
            &ApproveAll,
        ),
    )
    .await;
    latch.open();
    let error = error(&result.outcome);
    assert_eq!(
        error.kind(),
        ToolErrorKind::Timeout,
        "the blocking call was not answered as timed out: {error}"
    );
    assert!(
        error.message().contains("100ms"),
        "the message does not name the timeout: {error}"
    );
}

// On the paused clock: the tool's thirty seconds take no real time.
#[tokio::test(start_paused = true)]
async fn a_cancelled_context_cancels_the_call() {
    let tool = Probe::new("sleeps", Behaviour::Sleeps(Duration::from_secs(30)));
    let started = tool.started.clone();
    let runner = runner(vec![tool], ToolConfig::default());
    let ctx = ToolContext::default();
    let token = ctx.cancellation().clone();
    // Cancelled while the tool runs.
    tokio::spawn(async move {
        started.notified().await;
        token.cancel();
    });
    let result = runner
        .run(call("sleeps", json!({})), ctx, &ApproveAll)
        .await;
    assert_eq!(
        error(&result.outcome).kind(),
        ToolErrorKind::Cancelled,
        "the running call was not answered as cancelled"
    );
}

#[tokio::test]
async fn failed_calls_of_idempotent_tools_are_retried_others_are_not() {
    let mut idempotent = Probe::new("idempotent", Behaviour::FailsFirst(1));
    idempotent.annotations.idempotent = Some(true);
    let other = Probe::new("other", Behaviour::FailsFirst(1));
    let (retried, once) = (idempotent.runs.clone(), other.runs.clone());
    let runner = runner(
        vec![idempotent, other],
        ToolConfig::default().with_max_retries(2),
    );
    let result = runner
        .run(
            call("idempotent", json!({})),
            ToolContext::default(),
            &ApproveAll,
        )
        .await;
    assert_eq!(
        result.outcome.content().unwrap()[0].as_text(),
        Some("run 2 worked")
    );
    assert_eq!(retried.load(Ordering::SeqCst), 2);
    let result = runner
        .run(
            call("other", json!({})),
            ToolContext::default(),
            &ApproveAll,
        )
        .await;
    assert_eq!(error(&result.outcome).message(), "run 1 failed");
    assert_eq!(once.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn output_and_error_messages_are_held_to_the_budget() {
    let runner = runner(
        vec![
            Probe::new("long", Behaviour::Text(10_000)),
            Probe::new("fails_long", Behaviour::FailsLong(10_000)),
        ],
        ToolConfig::default().with_max_output_chars(200),
    );
    let result = runner
        .run(call("long", json!({})), ToolContext::default(), &ApproveAll)
        .await;
    let text = result.outcome.content().unwrap()[0]
        .as_text()
        .unwrap()
        .to_owned();
    assert!(
        text.chars().count() <= 200,
        "{} characters",
        text.chars().count()
    );
    assert!(text.starts_with("xxx") && text.ends_with("xxx"), "{text}");
    let result = runner
        .run(
            call("fails_long", json!({})),
            ToolContext::default(),
            &ApproveAll,
        )
        .await;
    let message = error(&result.outcome).message().to_owned();
    assert!(
        message.chars().count() <= 200,
        "{} characters",
        message.chars().count()
    );
}

#[tokio::test]
async fn an_external_tools_call_is_handed_back_pending() {
    let mut set = ToolSet::new();
    set.register_tool(ExternalTool::new(
        "lookup",
        "Looks up.",
        json!({"type": "object"}),
    ))
    .unwrap();
    let runner = CallRunner::new(Arc::new(set), ToolConfig::default());
    let result = runner
        .run(
            call("lookup", json!({})),
            ToolContext::default(),
            &ApproveAll,
        )
        .await;
    assert_eq!(result.outcome, ToolOutcome::PendingExternal);
    assert_eq!(result.call.name, "lookup");
}

#[tokio::test(start_paused = true)]
async fn a_runner_for_a_changed_set_counts_the_calls_still_running_on_the_old_one() {
    let gated = Probe::new("gated", Behaviour::WaitsForGate);
    let (gate, runs) = (gated.gate.clone(), gated.runs.clone());
    let old = runner(vec![gated], ToolConfig::default().with_max_concurrency(1));
    let first = tokio::spawn({
        let old = old.clone();
        async move {
            old.run(
                call("gated", json!({})),
                ToolContext::default(),
                &ApproveAll,
            )
            .await
        }
    });
    while runs.load(Ordering::SeqCst) == 0 {
        tokio::task::yield_now().await;
    }

    let mut changed = ToolSet::clone(old.tools());
    changed
        .register_tool(Probe::new("quick", Behaviour::Text(1)))
        .unwrap();
    let new = old.with_tools(Arc::new(changed));
    let quick = new.run(
        call("quick", json!({})),
        ToolContext::default(),
        &ApproveAll,
    );
    tokio::pin!(quick);
    // The only place under the global limit is the old runner's running call's.
    assert!(
        tokio::time::timeout(Duration::from_secs(1), &mut quick)
            .await
            .is_err(),
        "the new runner's call ran beside the old one's, past max_concurrency 1"
    );
    gate.notify_one();
    assert!(first.await.unwrap().outcome.content().is_some());
    assert_eq!(
        quick.await.outcome.content().unwrap()[0].as_text(),
        Some("x")
    );
}

//! The executor: one turn's calls under every policy.

#[path = "runtime_tools.rs"]
mod runtime_tools;
mod waiting;

use runtime_tools::{FnTool, InFlight, first_text};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use toolwright_core::{
    Content, Progress, ToolErrorKind, ToolSet,
    agent::{AgentEvent, EventSink},
    exec::{AppContext, Executor, RunControl, TurnContext},
    llm::ToolCall,
    tool::{
        ApprovalPolicy, ErrorPolicy, FromToolContext, ToolOutcome, TypedTool, truncate_output,
        truncate_text,
    },
    toolset::{ParallelRule, ToolConfig},
};
use waiting::{Latch, OpensOnDrop, within};

fn executor(tools: Vec<FnTool>, config: ToolConfig) -> Executor {
    let mut set = ToolSet::new();
    for tool in tools {
        set.register_tool(tool).unwrap();
    }
    Executor::new(Arc::new(set), config)
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall::new(id, name, json!({}))
}

fn err_kind(outcome: &ToolOutcome) -> Option<ToolErrorKind> {
    outcome.error().map(|e| e.kind())
}

/// Notifies when dropped: the event of a tool's future being dropped (aborted).
struct NotifiesOnDrop(Arc<Notify>);

impl Drop for NotifiesOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

// ---------------------------------------------------------------- timeouts

#[tokio::test(start_paused = true)]
async fn timeout_cancels_the_calls_token_and_reports_a_timeout() {
    let heard = Arc::new(Notify::new());
    let notice = heard.clone();
    let slow = FnTool::new("slow", move |_, ctx| {
        let notice = notice.clone();
        async move {
            // A cooperative tool hands its token to work it starts elsewhere.
            let token = ctx.cancellation().clone();
            tokio::spawn(async move {
                token.cancelled().await;
                notice.notify_one();
            });
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(vec![])
        }
    })
    .timeout_ms(50);
    let exec = executor(vec![slow], ToolConfig::default());
    let started = tokio::time::Instant::now();
    let results = exec
        .execute(&[call("c1", "slow")], &TurnContext::new())
        .await;
    let error = results[0].outcome.error().expect("a timeout error");
    assert_eq!(error.kind(), ToolErrorKind::Timeout, "{error}");
    assert!(error.message().contains("50ms"), "{error}");
    // The paused clock moves only while every task waits, and then straight to the next
    // timer: no real time passes, and the call was answered at its deadline, not when
    // the tool's hour was up.
    assert_eq!(
        started.elapsed(),
        Duration::from_millis(50),
        "the call was not answered at its 50ms deadline"
    );
    within(
        "the work the tool started hearing that its call's token was cancelled",
        heard.notified(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_ignoring_cancellation_still_times_out_on_time_and_is_dropped() {
    let dropped = Arc::new(Notify::new());
    let notice = dropped.clone();
    let stubborn = FnTool::new("stubborn", move |_, _| {
        let notice = notice.clone();
        async move {
            let _guard = NotifiesOnDrop(notice);
            // Never looks at its token.
            loop {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        }
    })
    .timeout_ms(100);
    // Blocks its thread outright, until the turn has answered: no future can be
    // interrupted here, so an executor that waited for it would never answer.
    let latch = Arc::new(Latch::default());
    let _release = OpensOnDrop(latch.clone());
    let held = latch.clone();
    let blocking = FnTool::new("blocking", move |_, _| {
        let held = held.clone();
        async move {
            held.wait();
            Ok(vec![])
        }
    })
    .timeout_ms(100);
    let exec = executor(
        vec![stubborn, blocking],
        ToolConfig::default().with_parallel(ParallelRule::All),
    );
    let results = within(
        "the turn's answer while one of its tools still blocks its thread",
        exec.execute(
            &[call("a", "stubborn"), call("b", "blocking")],
            &TurnContext::new(),
        ),
    )
    .await;
    assert_eq!(
        err_kind(&results[0].outcome),
        Some(ToolErrorKind::Timeout),
        "the call ignoring its token was not answered as timed out"
    );
    assert_eq!(
        err_kind(&results[1].outcome),
        Some(ToolErrorKind::Timeout),
        "the call blocking its thread was not answered as timed out"
    );
    latch.open();
    // The abandoned call's future is dropped (aborted), not left running.
    within(
        "the timed-out call's future being dropped",
        dropped.notified(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_blocking_its_thread_does_not_hold_up_its_neighbours() {
    // Holds one of the two runtime threads until the turn has answered: its neighbours
    // are answered while it blocks, or never.
    let latch = Arc::new(Latch::default());
    let _release = OpensOnDrop(latch.clone());
    let held = latch.clone();
    let blocking = FnTool::new("blocking", move |_, _| {
        let held = held.clone();
        async move {
            held.wait();
            Ok(vec![])
        }
    })
    .read_only()
    .timeout_ms(300);
    let quick = FnTool::new("quick", |_, _| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(vec![Content::text("done")])
    })
    .read_only()
    .timeout_ms(5_000);
    let exec = executor(vec![blocking, quick], ToolConfig::default());
    // One batch: a call that blocks one of the two runtime threads, and well-behaved
    // calls, which the other thread must carry.
    let mut calls = vec![call("b", "blocking")];
    calls.extend((0..7).map(|i| call(&format!("q{i}"), "quick")));
    let expected = calls.clone();
    // Given by value: the blocked call still holds the turn when the others are
    // answered, so the calls cannot be moved back out; each result still has its own.
    let results = within(
        "the turn's answer while one of its tools still blocks its thread",
        exec.execute(calls, &TurnContext::new()),
    )
    .await;
    latch.open();
    let answered: Vec<&ToolCall> = results.iter().map(|result| &result.call).collect();
    assert_eq!(
        answered,
        expected.iter().collect::<Vec<_>>(),
        "the results do not carry their calls in call order"
    );
    assert_eq!(
        err_kind(&results[0].outcome),
        Some(ToolErrorKind::Timeout),
        "the blocking call was not answered as timed out"
    );
    for result in &results[1..] {
        assert_eq!(
            result.outcome.content().map_or("", first_text),
            "done",
            "a quick call did not finish"
        );
    }
}

// The turn answers a call whose poll outlives its timeout without waiting for it; when
// that poll returns at last, the call has its answer and its `tool_finished` already.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_given_up_on_is_announced_finished_once() {
    let returned = Arc::new(AtomicBool::new(false));
    let flag = returned.clone();
    let latch = Arc::new(Latch::default());
    let _release = OpensOnDrop(latch.clone());
    let held = latch.clone();
    let blocking = FnTool::new("blocking", move |_, _| {
        let (flag, held) = (flag.clone(), held.clone());
        async move {
            held.wait();
            flag.store(true, Ordering::SeqCst);
            Ok(vec![Content::text("too late")])
        }
    })
    .timeout_ms(100);
    let exec = executor(vec![blocking], ToolConfig::default());
    let (sink, mut events) = EventSink::channel();
    let turn = TurnContext::new().with_events(sink);
    let results = within(
        "the turn's answer while its tool still blocks its thread",
        exec.execute(&[call("b", "blocking")], &turn),
    )
    .await;
    assert_eq!(
        err_kind(&results[0].outcome),
        Some(ToolErrorKind::Timeout),
        "the blocking call was not answered as timed out"
    );
    assert!(
        !returned.load(Ordering::SeqCst),
        "the tool returned before the test let it"
    );
    // The event sink is kept by the turn and by what runs the call, and by nothing else:
    // once the test drops its turn and lets the tool return, the channel closes when the
    // driver is done with the call, whatever it did when the poll came back.
    drop(turn);
    latch.open();
    let mut finished = Vec::new();
    within(
        "the driver letting go of the call once its poll returned",
        async {
            while let Some(event) = events.recv().await {
                if let AgentEvent::ToolFinished { outcome, .. } = event {
                    finished.push(err_kind(&outcome));
                }
            }
        },
    )
    .await;
    assert!(
        returned.load(Ordering::SeqCst),
        "the event channel closed while the tool was still blocked"
    );
    assert_eq!(
        finished,
        [Some(ToolErrorKind::Timeout)],
        "the call was not announced finished exactly once, as timed out"
    );
}

// Work a blocking tool started elsewhere hears of its timeout when the call is given up
// on, not when the rest of its batch is done; from then on the call is no longer active,
// and its end is announced then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_given_up_on_is_cancelled_ended_and_announced_at_once() {
    // The blocking call's token, handed to the test as work started elsewhere would get
    // it; the tool then blocks its thread until the test has seen the call given up on.
    let (tokens, mut token_of_call) = tokio::sync::mpsc::unbounded_channel();
    let latch = Arc::new(Latch::default());
    let _release = OpensOnDrop(latch.clone());
    let held = latch.clone();
    let blocking = FnTool::new("blocking", move |_, ctx| {
        let (tokens, held) = (tokens.clone(), held.clone());
        async move {
            let _ = tokens.send(ctx.cancellation().clone());
            held.wait();
            Ok(vec![])
        }
    })
    .read_only()
    .timeout_ms(100);
    // Runs until the test lets it finish: the rest of the batch is not done meanwhile.
    let gate = Arc::new(Notify::new());
    let opened = gate.clone();
    let long = FnTool::new("long", move |_, _| {
        let opened = opened.clone();
        async move {
            opened.notified().await;
            Ok(vec![Content::text("done")])
        }
    })
    .read_only();
    let exec = executor(vec![blocking, long], ToolConfig::default());
    let control = RunControl::new();
    let (sink, mut events) = EventSink::channel();
    let turn = TurnContext::new()
        .with_control(control.clone())
        .with_events(sink);
    let calls = [call("b", "blocking"), call("l", "long")];
    let (results, ()) = tokio::join!(
        within(
            "the turn's answer once the test let its calls finish",
            exec.execute(&calls, &turn),
        ),
        within("the blocking call being given up on", async {
            let token = token_of_call
                .recv()
                .await
                .expect("the blocking call's token");
            token.cancelled().await;
            // Cancelled, ended, then announced: once announced, it is ended too.
            loop {
                match events.recv().await.expect("the turn's events") {
                    AgentEvent::ToolFinished {
                        call_id, outcome, ..
                    } => {
                        assert_eq!(
                            (call_id.as_str(), err_kind(&outcome)),
                            ("b", Some(ToolErrorKind::Timeout)),
                            "the first call announced finished is not the timed-out one"
                        );
                        break;
                    }
                    _ => continue,
                }
            }
            assert_eq!(
                control.active_calls(),
                ["l"],
                "a call answered already is still active, or the long one is not"
            );
            assert!(
                !control.cancel_call("b"),
                "a call answered already could still be cancelled"
            );
            latch.open();
            gate.notify_one();
        }),
    );
    assert_eq!(
        err_kind(&results[0].outcome),
        Some(ToolErrorKind::Timeout),
        "the blocking call was not answered as timed out"
    );
    assert_eq!(
        results[1].outcome.content().map_or("", first_text),
        "done",
        "the long call did not finish"
    );
    // Whatever the driver does once the blocked poll returns, the call is not announced
    // again: the channel closes when the driver lets go of the call.
    drop(turn);
    let mut finished = Vec::new();
    within("the driver letting go of the calls", async {
        while let Some(event) = events.recv().await {
            if let AgentEvent::ToolFinished { call_id, .. } = event {
                finished.push(call_id);
            }
        }
    })
    .await;
    assert_eq!(
        finished,
        ["l"],
        "after the timed-out call, only the long one is announced finished, once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_computing_in_one_long_poll_finishes_while_its_neighbours_go_on_without_it() {
    // Works without yielding (as CPU-bound code does), within its timeout, until its
    // three neighbours have finished: they finish while it computes, or never.
    let latch = Arc::new(Latch::default());
    let _release = OpensOnDrop(latch.clone());
    let held = latch.clone();
    let heavy = FnTool::new("heavy", move |_, _| {
        let held = held.clone();
        async move {
            held.wait();
            Ok(vec![Content::text("computed")])
        }
    })
    .read_only()
    .timeout_ms(60_000);
    let quick = FnTool::new("quick", |_, _| async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok(vec![Content::text("done")])
    })
    .read_only();
    let exec = executor(vec![heavy, quick], ToolConfig::default());
    let (sink, mut events) = EventSink::channel();
    let turn = TurnContext::new().with_events(sink);
    let calls = [
        call("h", "heavy"),
        call("q1", "quick"),
        call("q2", "quick"),
        call("q3", "quick"),
    ];
    let (results, ()) = tokio::join!(
        within(
            "the turn's answer once its heavy call may finish",
            exec.execute(&calls, &turn),
        ),
        within(
            "the quick calls finishing while the heavy one computes",
            async {
                let mut finished = Vec::new();
                while finished.len() < 3 {
                    if let AgentEvent::ToolFinished { call_id, .. } =
                        events.recv().await.expect("the turn's events")
                    {
                        finished.push(call_id);
                    }
                }
                finished.sort();
                assert_eq!(
                    finished,
                    ["q1", "q2", "q3"],
                    "the quick calls were not the first to finish"
                );
                latch.open();
            }
        ),
    );
    // Moved off the busy driver, the quick calls finished first; the heavy call's long
    // poll still counts, as it came within its timeout.
    assert_eq!(
        results[0].outcome.content().map_or("", first_text),
        "computed",
        "the heavy call's result was lost"
    );
    for result in &results[1..] {
        assert_eq!(
            result.outcome.content().map_or("", first_text),
            "done",
            "a quick call did not finish"
        );
    }
}

// A current-thread runtime has no second thread to answer from while a tool blocks the
// only one: the call is answered when the tool returns control, and as what it is by then,
// a timeout, as a multi-thread runtime would have answered it.
#[tokio::test(flavor = "current_thread")]
async fn on_one_thread_a_tool_blocking_past_its_timeout_is_still_a_timeout() {
    let blocking = FnTool::new("blocking", |_, _| async {
        std::thread::sleep(Duration::from_millis(300));
        Ok(vec![Content::text("too late")])
    })
    .read_only()
    .timeout_ms(100);
    let quick = FnTool::text("quick", "done").read_only();
    let exec = executor(vec![blocking, quick], ToolConfig::default());
    let results = exec
        .execute(
            &[call("b", "blocking"), call("q", "quick")],
            &TurnContext::new(),
        )
        .await;
    let error = results[0].outcome.error().expect("a timeout");
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
    assert!(error.message().contains("100ms"), "{error}");
    assert_eq!(first_text(results[1].outcome.content().unwrap()), "done");
}

#[tokio::test(start_paused = true)]
async fn the_default_timeout_comes_from_the_config() {
    let slow = FnTool::new("slow", |_, _| async {
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(vec![])
    });
    let exec = executor(
        vec![slow],
        ToolConfig::default().with_default_timeout(Duration::from_millis(250)),
    );
    let results = exec
        .execute(&[call("c", "slow")], &TurnContext::new())
        .await;
    let error = results[0].outcome.error().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Timeout);
    assert!(error.message().contains("250ms"), "{error}");
}

#[tokio::test(start_paused = true)]
async fn the_timeout_does_not_count_time_spent_waiting_for_a_permit() {
    let work = FnTool::new("work", |_, _| async {
        tokio::time::sleep(Duration::from_millis(80)).await;
        Ok(vec![Content::text("done")])
    })
    .read_only()
    .timeout_ms(100);
    let exec = executor(vec![work], ToolConfig::default().with_max_concurrency(1));
    let calls: Vec<ToolCall> = (0..3).map(|n| call(&format!("c{n}"), "work")).collect();
    let results = exec.execute(&calls, &TurnContext::new()).await;
    // The third call waited 160ms for its permit, then ran 80ms of its 100ms.
    for result in &results {
        assert_eq!(first_text(result.outcome.content().unwrap()), "done");
    }
}

#[tokio::test(start_paused = true)]
async fn dropping_a_turn_midway_stops_its_calls() {
    let dropped = Arc::new(Notify::new());
    let notice = dropped.clone();
    let slow = FnTool::new("slow", move |_, _| {
        let notice = notice.clone();
        async move {
            let _guard = NotifiesOnDrop(notice);
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(vec![])
        }
    })
    .timeout_ms(7_200_000);
    let exec = executor(vec![slow], ToolConfig::default());
    let control = RunControl::new();
    let turn = TurnContext::new().with_control(control.clone());
    let calls = [call("s", "slow")];
    let abandoned = tokio::time::timeout(Duration::from_secs(1), exec.execute(&calls, &turn)).await;
    assert!(abandoned.is_err(), "the turn was still running");
    within(
        "the call's future being dropped with its turn",
        dropped.notified(),
    )
    .await;
    assert!(
        control.active_calls().is_empty(),
        "a stale call id stayed cancellable"
    );
}

/// Fails (or hangs past its timeout) on its first `failures` calls, then answers.
fn flaky(name: &'static str, failures: usize, hang: bool, attempts: Arc<AtomicUsize>) -> FnTool {
    FnTool::new(name, move |_, _| {
        let attempts = attempts.clone();
        async move {
            let n = attempts.fetch_add(1, Ordering::SeqCst) + 1;
            if n <= failures {
                if hang {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                }
                return Err(
                    toolwright_core::ToolError::execution(format!("attempt {n} failed")).into(),
                );
            }
            Ok(vec![Content::text(format!("ok on attempt {n}"))])
        }
    })
    .timeout_ms(100)
}

#[tokio::test(start_paused = true)]
async fn read_only_and_idempotent_tools_are_retried_others_never() {
    let (a, b, c) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let exec = executor(
        vec![
            flaky("fetch", 2, false, a.clone()).read_only(),
            flaky("slow_fetch", 1, true, b.clone()).read_only(),
            flaky("charge_card", 1, false, c.clone()),
        ],
        ToolConfig::default().with_max_retries(2),
    );
    let results = exec
        .execute(
            &[
                call("1", "fetch"),
                call("2", "slow_fetch"),
                call("3", "charge_card"),
            ],
            &TurnContext::new(),
        )
        .await;
    assert_eq!(
        first_text(results[0].outcome.content().unwrap()),
        "ok on attempt 3"
    );
    assert_eq!(
        first_text(results[1].outcome.content().unwrap()),
        "ok on attempt 2"
    );
    assert_eq!(
        results[2].outcome.error().unwrap().message(),
        "attempt 1 failed"
    );
    assert_eq!(
        c.load(Ordering::SeqCst),
        1,
        "a tool with side effects ran once"
    );

    // Without retries configured, nothing is retried.
    let d = Arc::new(AtomicUsize::new(0));
    let exec = executor(
        vec![flaky("fetch", 1, false, d.clone()).read_only()],
        ToolConfig::default(),
    );
    let results = exec
        .execute(&[call("1", "fetch")], &TurnContext::new())
        .await;
    assert!(results[0].outcome.error().is_some());
    assert_eq!(d.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------- cancellation

#[tokio::test(start_paused = true)]
async fn cancelling_one_call_leaves_the_others_running() {
    let slow = FnTool::new("slow", |_, _| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(vec![Content::text("never")])
    })
    .read_only()
    .timeout_ms(7_200_000);
    let fine = FnTool::new("fine", |_, _| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok(vec![Content::text("done")])
    })
    .read_only();
    let exec = executor(vec![slow, fine], ToolConfig::default());
    let control = RunControl::new();
    let canceller = control.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(canceller.cancel_call("s"));
    });
    let turn = TurnContext::new().with_control(control.clone());
    let results = exec
        .execute(&[call("s", "slow"), call("f", "fine")], &turn)
        .await;
    let error = results[0].outcome.error().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Cancelled);
    assert_eq!(results[0].policy, ErrorPolicy::ReturnToModel);
    assert_eq!(first_text(results[1].outcome.content().unwrap()), "done");
    assert!(!control.is_cancelled(), "the run itself goes on");
    assert!(
        !control.cancel_call("s"),
        "an ended call is no longer cancellable"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_run_cancels_every_call_including_queued_ones() {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    // Not read-only: each call runs alone, so the second waits behind the first.
    let slow = FnTool::new("slow", move |_, _| {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(vec![])
        }
    })
    .timeout_ms(7_200_000);
    let exec = executor(vec![slow], ToolConfig::default());
    let control = RunControl::new();
    let canceller = control.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        canceller.cancel_run();
    });
    let turn = TurnContext::new().with_control(control);
    let results = exec
        .execute(&[call("a", "slow"), call("b", "slow")], &turn)
        .await;
    assert_eq!(
        err_kind(&results[0].outcome),
        Some(ToolErrorKind::Cancelled)
    );
    assert_eq!(
        err_kind(&results[1].outcome),
        Some(ToolErrorKind::Cancelled)
    );
    assert_eq!(
        ran.load(Ordering::SeqCst),
        1,
        "the queued call never started"
    );
}

#[tokio::test(start_paused = true)]
async fn a_queued_call_can_be_cancelled_by_id_and_an_ended_one_cannot() {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let log = ran.clone();
    let tool = FnTool::new("work", move |args, _| {
        let log = log.clone();
        async move {
            let ms = args["ms"].as_u64().unwrap_or(0);
            log.lock().unwrap().push(ms);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(vec![Content::text("done")])
        }
    })
    .read_only()
    .timeout_ms(60_000);
    // One call at a time: `long` runs while `queued` waits for the permit.
    let exec = executor(vec![tool], ToolConfig::default().with_max_concurrency(1));
    let calls = [
        ToolCall::new("quick", "work", json!({"ms": 0})),
        ToolCall::new("long", "work", json!({"ms": 5_000})),
        ToolCall::new("queued", "work", json!({"ms": 7})),
    ];
    let control = RunControl::new();
    let canceller = control.clone();
    let checks = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut active = canceller.active_calls();
        active.sort();
        assert_eq!(active, ["long", "queued"]);
        assert!(
            !canceller.cancel_call("quick"),
            "an ended call is no longer cancellable, though its turn goes on"
        );
        assert!(canceller.cancel_call("queued"));
    });
    let turn = TurnContext::new().with_control(control.clone());
    let results = exec.execute(&calls, &turn).await;
    checks.await.unwrap();
    assert!(results[0].outcome.content().is_some());
    assert!(results[1].outcome.content().is_some());
    assert_eq!(
        err_kind(&results[2].outcome),
        Some(ToolErrorKind::Cancelled)
    );
    assert_eq!(
        *ran.lock().unwrap(),
        [0, 5_000],
        "the queued call never ran"
    );
    assert!(
        control.active_calls().is_empty(),
        "the turn left nothing behind"
    );
}

// ---------------------------------------------------------------- panics

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_tool_does_not_disturb_its_neighbours() {
    let ok = FnTool::new("ok", |args, _| async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok(vec![Content::text(format!("ok {}", args["n"]))])
    })
    .read_only();
    let boom = FnTool::new("boom", |_, _| async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        panic!("kaboom");
    })
    .read_only();
    let exec = executor(vec![ok, boom], ToolConfig::default());
    let calls = [
        ToolCall::new("1", "ok", json!({"n": 1})),
        ToolCall::new("2", "boom", json!({})),
        ToolCall::new("3", "ok", json!({"n": 3})),
    ];
    let results = exec.execute(&calls, &TurnContext::new()).await;
    assert_eq!(first_text(results[0].outcome.content().unwrap()), "ok 1");
    let error = results[1].outcome.error().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::Execution);
    assert_eq!(error.message(), "tool panicked: kaboom");
    assert_eq!(first_text(results[2].outcome.content().unwrap()), "ok 3");
    // The executor is still usable afterwards.
    let again = exec
        .execute(
            &[ToolCall::new("4", "ok", json!({"n": 4}))],
            &TurnContext::new(),
        )
        .await;
    assert_eq!(first_text(again[0].outcome.content().unwrap()), "ok 4");
}

// ---------------------------------------------------------------- error policy

#[tokio::test]
async fn errors_go_back_to_the_model_by_default_and_fail_the_run_when_asked() {
    let soft = FnTool::new("soft", |_, _| async {
        Err(toolwright_core::ToolError::execution("disk full").into())
    });
    let hard = FnTool::new("hard", |_, _| async {
        Err(toolwright_core::ToolError::execution("corrupted").into())
    })
    .fail_run();
    let exec = executor(vec![soft.clone(), hard.clone()], ToolConfig::default());
    let results = exec
        .execute(&[call("a", "soft"), call("b", "hard")], &TurnContext::new())
        .await;
    assert!(!results[0].fails_run());
    let message = results[0].to_message().unwrap();
    assert!(message.is_error);
    let body: Value = serde_json::from_str(first_text(&message.content)).unwrap();
    assert_eq!(body, json!({"error": "disk full", "kind": "execution"}));
    assert!(results[1].fails_run());

    // The config can set the policy for every tool.
    let mut config = ToolConfig::default();
    config.on_error = Some(ErrorPolicy::FailRun);
    let exec = executor(vec![soft], config);
    let results = exec
        .execute(&[call("a", "soft")], &TurnContext::new())
        .await;
    assert!(results[0].fails_run());
}

#[tokio::test]
async fn unknown_and_hidden_tools_answer_with_the_available_tools() {
    let exec = executor(
        vec![
            FnTool::text("alpha", "a"),
            FnTool::text("beta", "b"),
            FnTool::text("secret", "s").hidden(),
        ],
        ToolConfig::default(),
    );
    let results = exec
        .execute(
            &[call("1", "gamma"), call("2", "secret")],
            &TurnContext::new(),
        )
        .await;
    for result in &results {
        let error = result.outcome.error().unwrap();
        assert_eq!(error.kind(), ToolErrorKind::UnknownTool);
        let (_, listed) = error.message().split_once("Available tools: ").unwrap();
        assert_eq!(listed, "alpha, beta");
        assert!(!result.fails_run());
    }

    let mut config = ToolConfig::default();
    config.on_unknown_tool = ErrorPolicy::FailRun;
    let exec = executor(vec![FnTool::text("alpha", "a")], config);
    let results = exec
        .execute(&[call("1", "gamma")], &TurnContext::new())
        .await;
    assert!(results[0].fails_run());
}

#[tokio::test]
async fn only_offered_tools_can_be_called() {
    let exec = executor(
        vec![FnTool::text("alpha", "a"), FnTool::text("beta", "b")],
        ToolConfig::default(),
    );
    let turn = TurnContext::new().with_offered(["alpha"]);
    let results = exec
        .execute(&[call("1", "alpha"), call("2", "beta")], &turn)
        .await;
    assert_eq!(first_text(results[0].outcome.content().unwrap()), "a");
    let error = results[1].outcome.error().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::UnknownTool);
    assert!(
        error.message().ends_with("Available tools: alpha"),
        "{error}"
    );
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

struct Add;

#[toolwright_core::async_trait]
impl TypedTool for Add {
    type Args = AddArgs;
    type Output = i64;
    fn name(&self) -> &'static str {
        "add"
    }
    fn description(&self) -> &'static str {
        "Add two integers."
    }
    async fn call_typed(
        &self,
        args: AddArgs,
        _ctx: &toolwright_core::ToolContext,
    ) -> toolwright_core::AgentResult<i64> {
        Ok(args.a + args.b)
    }
    fn on_error(&self) -> ErrorPolicy {
        ErrorPolicy::FailRun
    }
}

#[tokio::test]
async fn unreadable_arguments_follow_their_own_policy() {
    let mut set = ToolSet::new();
    set.register_tool(Add).unwrap();
    let set = Arc::new(set);
    let exec = Executor::new(set.clone(), ToolConfig::default());
    let calls = [
        ToolCall::new("1", "add", json!("{not json")),
        ToolCall::new("2", "add", json!({"a": 1, "b": "two"})),
        ToolCall::new("3", "add", json!({"a": 1, "b": 2})),
    ];
    let results = exec.execute(&calls, &TurnContext::new()).await;
    let first = results[0].outcome.error().unwrap();
    assert_eq!(first.kind(), ToolErrorKind::InvalidArguments);
    assert!(first.message().contains("got a string"), "{first}");
    let second = results[1].outcome.error().unwrap();
    assert_eq!(second.kind(), ToolErrorKind::InvalidArguments);
    assert_eq!(
        second.message(),
        r#"Invalid arguments: b: invalid type: string "two", expected i64"#,
        "the message does not name the field `b`, what it got and what was expected"
    );
    // The model's mistake goes back to it, although the tool fails runs on its errors.
    assert!(!results[0].fails_run() && !results[1].fails_run());
    assert_eq!(first_text(results[2].outcome.content().unwrap()), "3");

    let mut config = ToolConfig::default();
    config.on_invalid_arguments = ErrorPolicy::FailRun;
    let exec = Executor::new(set, config);
    let results = exec.execute(&calls[..1], &TurnContext::new()).await;
    assert!(results[0].fails_run());
}

#[tokio::test]
async fn a_repeated_call_id_is_refused_and_the_first_call_runs() {
    let ran = Arc::new(AtomicUsize::new(0));
    let exec = executor(
        vec![FnTool::counting("count", ran.clone())],
        ToolConfig::default(),
    );
    let results = exec
        .execute(
            &[call("x", "count"), call("x", "count")],
            &TurnContext::new(),
        )
        .await;
    assert!(results[0].outcome.content().is_some());
    assert_eq!(
        err_kind(&results[1].outcome),
        Some(ToolErrorKind::InvalidArguments)
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------- concurrency

#[tokio::test(start_paused = true)]
async fn sixty_four_calls_under_a_limit_of_eight_never_exceed_eight_and_keep_call_order() {
    let in_flight = Arc::new(InFlight::default());
    let meter = in_flight.clone();
    let work = FnTool::new("work", move |args, _| {
        let meter = meter.clone();
        async move {
            let _running = meter.enter();
            let n = args["n"].as_u64().unwrap();
            // Later calls finish sooner, so completion order is not call order.
            tokio::time::sleep(Duration::from_millis(100 - n)).await;
            Ok(vec![Content::text(n.to_string())])
        }
    })
    .read_only();
    let exec = executor(vec![work], ToolConfig::default().with_max_concurrency(8));
    let calls: Vec<ToolCall> = (0..64)
        .map(|n| ToolCall::new(format!("c{n}"), "work", json!({"n": n})))
        .collect();
    let results = exec.execute(&calls, &TurnContext::new()).await;
    assert_eq!(
        in_flight.max(),
        8,
        "the limit was exceeded or never reached"
    );
    for (n, result) in results.iter().enumerate() {
        assert_eq!(result.call.id, format!("c{n}"));
        assert_eq!(first_text(result.outcome.content().unwrap()), n.to_string());
    }
}

#[tokio::test(start_paused = true)]
async fn a_per_tool_limit_holds_under_a_larger_global_limit() {
    let in_flight = Arc::new(InFlight::default());
    let meter = in_flight.clone();
    let limited = FnTool::new("limited", move |_, _| {
        let meter = meter.clone();
        async move {
            let _running = meter.enter();
            tokio::time::sleep(Duration::from_millis(10)).await;
            Ok(vec![])
        }
    })
    .read_only()
    .max_in_flight(2);
    let exec = executor(
        vec![limited],
        ToolConfig::default().with_max_concurrency(16),
    );
    let calls: Vec<ToolCall> = (0..10).map(|n| call(&format!("c{n}"), "limited")).collect();
    let results = exec.execute(&calls, &TurnContext::new()).await;
    assert!(results.iter().all(|r| r.outcome.content().is_some()));
    assert_eq!(in_flight.max(), 2);
}

#[tokio::test(start_paused = true)]
async fn tools_of_one_exclusive_group_never_overlap() {
    let group = Arc::new(InFlight::default());
    let others = Arc::new(InFlight::default());
    let make = |name: &'static str, meter: Arc<InFlight>, in_group: bool| {
        let tool = FnTool::new(name, move |_, _| {
            let meter = meter.clone();
            async move {
                let _running = meter.enter();
                tokio::time::sleep(Duration::from_millis(10)).await;
                Ok(vec![])
            }
        })
        .read_only();
        if in_group {
            tool.exclusive_group("db")
        } else {
            tool
        }
    };
    let exec = executor(
        vec![
            make("read_db", group.clone(), true),
            make("write_db", group.clone(), true),
            make("other", others.clone(), false),
        ],
        ToolConfig::default(),
    );
    let calls: Vec<ToolCall> = (0..12)
        .map(|n| {
            let name = ["read_db", "write_db", "other"][n % 3];
            call(&format!("c{n}"), name)
        })
        .collect();
    let results = exec.execute(&calls, &TurnContext::new()).await;
    assert!(results.iter().all(|r| r.outcome.content().is_some()));
    assert_eq!(group.max(), 1, "two calls of the group overlapped");
    assert_eq!(others.max(), 4, "tools outside the group are not held back");
}

/// Records "start name" / "end name" lines in order.
fn logging_tool(name: &'static str, log: Arc<Mutex<Vec<String>>>) -> FnTool {
    FnTool::new(name, move |args, _| {
        let log = log.clone();
        async move {
            let label = format!("{name}{}", args["n"]);
            log.lock().unwrap().push(format!("start {label}"));
            tokio::time::sleep(Duration::from_millis(10)).await;
            log.lock().unwrap().push(format!("end {label}"));
            Ok(vec![])
        }
    })
}

#[tokio::test(start_paused = true)]
async fn tools_without_effect_hints_run_alone_by_default() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let exec = executor(
        vec![
            logging_tool("read", log.clone()).read_only(),
            logging_tool("write", log.clone()),
        ],
        ToolConfig::default(),
    );
    let calls = [
        ToolCall::new("1", "read", json!({"n": 1})),
        ToolCall::new("2", "read", json!({"n": 2})),
        ToolCall::new("3", "write", json!({"n": 3})),
        ToolCall::new("4", "read", json!({"n": 4})),
    ];
    exec.execute(&calls, &TurnContext::new()).await;
    let log = log.lock().unwrap().clone();
    let at = |line: &str| log.iter().position(|l| l == line).unwrap();
    // The two reads overlap; the write waits for both, and the last read for it.
    assert!(at("start read2") < at("end read1"));
    assert!(at("start write3") > at("end read1").max(at("end read2")));
    assert!(at("start read4") > at("end write3"));
}

#[tokio::test(start_paused = true)]
async fn the_parallel_rule_and_sequential_flag_are_configurable() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let exec = executor(
        vec![
            logging_tool("write", log.clone()),
            logging_tool("read", log.clone())
                .read_only()
                .sequential(true),
        ],
        ToolConfig::default().with_parallel(ParallelRule::All),
    );
    let calls = [
        ToolCall::new("1", "write", json!({"n": 1})),
        ToolCall::new("2", "write", json!({"n": 2})),
        ToolCall::new("3", "read", json!({"n": 3})),
    ];
    exec.execute(&calls, &TurnContext::new()).await;
    let log = log.lock().unwrap().clone();
    let at = |line: &str| log.iter().position(|l| l == line).unwrap();
    assert!(
        at("start write2") < at("end write1"),
        "writes overlap under All"
    );
    assert!(
        at("start read3") > at("end write2"),
        "a sequential tool runs alone"
    );
}

// ---------------------------------------------------------------- output budget

#[test]
fn truncation_keeps_head_and_tail_and_never_splits_a_character() {
    let text: String = "héllo wörld 🦀 ".repeat(50);
    let total = text.chars().count();
    for max in 0..total + 3 {
        let cut = truncate_text(&text, max);
        assert!(
            cut.chars().count() <= max,
            "{max}: {} chars",
            cut.chars().count()
        );
        if max >= total {
            assert_eq!(cut, text);
        }
    }
    let cut = truncate_text(&text, 120);
    let (head, rest) = cut.split_once("\n[... ").unwrap();
    let (count, tail) = rest.split_once(" characters cut ...]\n").unwrap();
    assert!(text.starts_with(head));
    assert!(text.ends_with(tail));
    let count: usize = count.parse().unwrap();
    assert_eq!(
        head.chars().count() + count + tail.chars().count(),
        total,
        "the notice reports exactly what was cut"
    );
    assert_eq!(cut.chars().count(), 120);
}

#[test]
fn truncation_of_a_result_shares_one_budget_and_drops_stale_json() {
    let long = "ü".repeat(500);
    let output = vec![
        Content::text(long.clone()),
        Content::json(json!({"data": long})),
        Content::image("aGk=", "image/png"),
    ];
    let cut = truncate_output(output, 100);
    assert_eq!(cut.len(), 2);
    assert_eq!(cut[0].as_text().unwrap().chars().count(), 100);
    assert!(matches!(cut[1], Content::Image { .. }));
    let short = vec![Content::text("short")];
    assert_eq!(truncate_output(short.clone(), 100), short);
}

#[tokio::test]
async fn the_executor_applies_the_output_budget() {
    let big = FnTool::new("big", |_, _| async {
        Ok(vec![Content::text("日本語".repeat(1000))])
    });
    let exec = executor(vec![big], ToolConfig::default().with_max_output_chars(64));
    let results = exec.execute(&[call("1", "big")], &TurnContext::new()).await;
    let text = first_text(results[0].outcome.content().unwrap());
    assert_eq!(text.chars().count(), 64);
    assert!(text.starts_with("日本語"));
    assert!(text.contains("characters cut"));
}

#[test]
fn a_result_of_json_alone_is_counted_and_cut_as_the_json_text_the_model_reads() {
    let rows: Vec<Value> = (0..1000)
        .map(|i| json!({"row": i, "name": "日本語"}))
        .collect();
    let output = vec![
        Content::json(json!({ "rows": rows })),
        Content::image("aGk=", "image/png"),
    ];
    let cut = truncate_output(output, 64);
    assert_eq!(cut.len(), 2);
    let text = cut[0].as_text().expect("the JSON, cut, as text");
    assert_eq!(text.chars().count(), 64);
    assert!(text.starts_with(r#"{"rows":[{"#), "{text}");
    assert!(matches!(cut[1], Content::Image { .. }));
    let small = vec![Content::json(json!({"ok": true}))];
    assert_eq!(
        truncate_output(small.clone(), 64),
        small,
        "within budget, left as is"
    );
}

#[tokio::test]
async fn a_failed_calls_message_is_held_to_the_output_budget() {
    let noisy = FnTool::new("noisy", |_, _| async {
        Err(toolwright_core::ToolError::execution(format!("stderr: {}", "é".repeat(10_000))).into())
    });
    let exec = executor(vec![noisy], ToolConfig::default().with_max_output_chars(64));
    let long_name = "n".repeat(10_000);
    let calls = [call("1", "noisy"), call("2", &long_name)];
    let results = exec.execute(&calls, &TurnContext::new()).await;
    for result in &results {
        let message = result.outcome.error().expect("a failure").message();
        assert_eq!(message.chars().count(), 64, "{message}");
        assert!(message.contains("characters cut"), "{message}");
        // What the model reads is still the error's JSON, the cut message inside.
        let read = result.to_message().unwrap();
        let body: Value = serde_json::from_str(first_text(&read.content)).expect("JSON");
        assert_eq!(body["error"], message);
    }
    assert_eq!(
        err_kind(&results[0].outcome),
        Some(ToolErrorKind::Execution)
    );
    assert!(
        results[0]
            .outcome
            .error()
            .unwrap()
            .message()
            .starts_with("stderr: é")
    );
    // The model's own mistake (a name it made up) is cut the same way.
    assert_eq!(
        err_kind(&results[1].outcome),
        Some(ToolErrorKind::UnknownTool)
    );
}

// A tool that hands its context to a thread of its own may report through it after the
// call answered: the run's events show no progress for a call announced finished.
#[tokio::test]
async fn progress_after_the_call_was_answered_is_not_published() {
    // The thread reports once the test has its answer, and says when it has.
    let answered = Arc::new(Latch::default());
    let _release = OpensOnDrop(answered.clone());
    let reported = Arc::new(Notify::new());
    let (wait, notice) = (answered.clone(), reported.clone());
    let worker = FnTool::new("worker", move |_, ctx| {
        let (wait, notice) = (wait.clone(), notice.clone());
        async move {
            let late = ctx.clone();
            std::thread::spawn(move || {
                wait.wait();
                let _ = late.emit_progress(json!({"late": true}));
                late.set_context(json!({"late": true}));
                notice.notify_one();
            });
            Ok(vec![Content::text("done")])
        }
    });
    let exec = executor(vec![worker], ToolConfig::default());
    let (sink, mut events) = EventSink::channel();
    let turn = TurnContext::new().with_events(sink);
    let results = exec.execute(&[call("w", "worker")], &turn).await;
    assert_eq!(
        results[0].outcome.content().map_or("", first_text),
        "done",
        "the call did not answer"
    );
    answered.open();
    // Reports are published as they are made: had these been, they are in the channel.
    within("the late reports being made", reported.notified()).await;
    let mut kinds = Vec::new();
    while let Ok(event) = events.try_recv() {
        let event = serde_json::to_value(&event).unwrap();
        kinds.push(event["type"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        kinds,
        ["tool_started", "tool_finished"],
        "a report made after the call was answered was published"
    );
}

// ---------------------------------------------------------------- the calls in the results

#[tokio::test]
async fn calls_given_by_value_are_moved_into_their_results_and_by_reference_copied() {
    let exec = executor(
        vec![
            FnTool::text("echo", "ok").read_only(),
            FnTool::text("deploy", "deployed").require_approval(),
            FnTool::text("write", "written").sequential(true),
        ],
        ToolConfig::default(),
    );
    let big = "x".repeat(10_000);
    // One call of each path: run in a batch, run alone, refused before running
    // (unknown tool, repeated id), and left waiting for approval.
    let calls = vec![
        ToolCall::new("a", "echo", json!({"text": big})),
        ToolCall::new("b", "write", json!({})),
        ToolCall::new("c", "nope", json!({})),
        ToolCall::new("a", "echo", json!({})),
        ToolCall::new("d", "deploy", json!({})),
    ];
    let expected = calls.clone();
    let where_ids_live: Vec<*const u8> = calls.iter().map(|call| call.id.as_ptr()).collect();
    let where_text_lives = calls[0].arguments["text"].as_str().unwrap().as_ptr();

    let results = exec.execute(&calls, &TurnContext::new()).await;
    let answered: Vec<&ToolCall> = results.iter().map(|result| &result.call).collect();
    assert_eq!(answered, expected.iter().collect::<Vec<_>>());
    assert_ne!(
        results[0].call.id.as_ptr(),
        where_ids_live[0],
        "borrowed: copied"
    );

    let results = exec.execute(calls, &TurnContext::new()).await;
    let answered: Vec<&ToolCall> = results.iter().map(|result| &result.call).collect();
    assert_eq!(answered, expected.iter().collect::<Vec<_>>());
    let moved: Vec<*const u8> = results
        .iter()
        .map(|result| result.call.id.as_ptr())
        .collect();
    assert_eq!(moved, where_ids_live, "every call moved, none copied");
    let text = results[0].call.arguments["text"].as_str().unwrap();
    assert_eq!(
        text.as_ptr(),
        where_text_lives,
        "arguments moved with their call"
    );
    assert_eq!(first_text(results[0].outcome.content().unwrap()), "ok");
    assert_eq!(first_text(results[1].outcome.content().unwrap()), "written");
    assert_eq!(
        err_kind(&results[2].outcome),
        Some(ToolErrorKind::UnknownTool)
    );
    assert_eq!(
        err_kind(&results[3].outcome),
        Some(ToolErrorKind::InvalidArguments)
    );
    assert_eq!(results[4].outcome, ToolOutcome::PendingApproval);
}

// ---------------------------------------------------------------- approval

#[tokio::test]
async fn calls_needing_approval_wait_and_never_run_until_approved() {
    let ran = Arc::new(AtomicUsize::new(0));
    let deploy = FnTool::counting("deploy", ran.clone())
        .approval(|args| ApprovalPolicy::from(args["environment"] == "production"));
    let exec = executor(vec![deploy], ToolConfig::default());
    let calls = [
        ToolCall::new("p", "deploy", json!({"environment": "production"})),
        ToolCall::new("s", "deploy", json!({"environment": "staging"})),
    ];
    let results = exec.execute(&calls, &TurnContext::new()).await;
    assert_eq!(results[0].outcome, ToolOutcome::PendingApproval);
    assert!(results[0].to_message().is_none());
    assert!(results[1].outcome.content().is_some());
    assert_eq!(ran.load(Ordering::SeqCst), 1, "only staging ran");

    let approved = TurnContext::new().with_approved(["p"]);
    let results = exec.execute(&calls[..1], &approved).await;
    assert!(results[0].outcome.content().is_some());
    assert_eq!(ran.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn destructive_tools_need_approval_unless_configured_otherwise() {
    let ran = Arc::new(AtomicUsize::new(0));
    let drop_table = FnTool::counting("drop_table", ran.clone()).destructive();
    let exec = executor(vec![drop_table.clone()], ToolConfig::default());
    let results = exec
        .execute(&[call("1", "drop_table")], &TurnContext::new())
        .await;
    assert_eq!(results[0].outcome, ToolOutcome::PendingApproval);

    let mut config = ToolConfig::default();
    config.destructive_requires_approval = false;
    let exec = executor(vec![drop_table], config);
    let results = exec
        .execute(&[call("1", "drop_table")], &TurnContext::new())
        .await;
    assert!(results[0].outcome.content().is_some());
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_application_approval_rule_overrides_the_tool_and_the_default() {
    let ran = Arc::new(AtomicUsize::new(0));
    let gated = FnTool::counting("gated", ran.clone()).require_approval();
    let plain = FnTool::counting("plain", ran.clone());
    let destructive = FnTool::counting("wipe", ran.clone()).destructive();
    let exec = executor(vec![gated, plain, destructive], ToolConfig::default()).with_approval_rule(
        Arc::new(
            |call: &ToolCall, _tool: &dyn toolwright_core::Tool| match call.name.as_str() {
                "gated" | "wipe" => ApprovalPolicy::NotRequired,
                "plain" => ApprovalPolicy::Required,
                _ => ApprovalPolicy::Unspecified,
            },
        ),
    );
    let results = exec
        .execute(
            &[call("1", "gated"), call("2", "plain"), call("3", "wipe")],
            &TurnContext::new(),
        )
        .await;
    assert!(results[0].outcome.content().is_some());
    assert_eq!(results[1].outcome, ToolOutcome::PendingApproval);
    assert!(results[2].outcome.content().is_some());
}

// ---------------------------------------------------------------- external tools

#[tokio::test]
async fn external_tools_wait_for_the_application_and_their_output_is_validated() {
    let lookup = FnTool::text("ticket_lookup", "unused")
        .external()
        .validate_output(|out| {
            if out.is_empty() {
                Err("empty ticket".to_owned())
            } else {
                Ok(())
            }
        });
    let exec = executor(
        vec![lookup],
        ToolConfig::default().with_max_output_chars(40),
    );
    let c = call("t1", "ticket_lookup");
    let results = exec
        .execute(std::slice::from_ref(&c), &TurnContext::new())
        .await;
    assert_eq!(results[0].outcome, ToolOutcome::PendingExternal);

    let done = exec.complete_external(&c, vec![Content::text("x".repeat(100))]);
    assert_eq!(
        first_text(done.outcome.content().unwrap()).chars().count(),
        40
    );
    let bad = exec.complete_external(&c, vec![]);
    assert_eq!(
        bad.outcome.error().unwrap().message(),
        "Invalid tool output: empty ticket"
    );
}

// ---------------------------------------------------------------- progress, context, validators

#[tokio::test]
async fn progress_reaches_the_event_stream_after_its_validator() {
    let indexer = FnTool::new("index", |_, ctx| async move {
        // What `#[tool]` injects for a `Progress` parameter.
        let progress = Progress::from_tool_context(&ctx)?;
        progress.emit(json!({"phase": "scan"}))?;
        let refused = ctx.emit_progress(json!({"phase": 7})).unwrap_err();
        ctx.emit_progress(json!({"phase": "embed"}))?;
        ctx.set_context(json!({"indexed": true}));
        Ok(vec![Content::text(refused.to_string())])
    })
    .validate_progress(|value| {
        if value["phase"].is_string() {
            Ok(())
        } else {
            Err("phase must be a string".to_owned())
        }
    });
    let exec = executor(vec![indexer], ToolConfig::default());
    let (sink, mut events) = EventSink::channel();
    let turn = TurnContext::new().with_events(sink);
    let results = exec.execute(&[call("i", "index")], &turn).await;
    assert_eq!(
        first_text(results[0].outcome.content().unwrap()),
        "Invalid tool progress: phase must be a string"
    );
    assert_eq!(results[0].context_update, Some(json!({"indexed": true})));

    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    let kinds: Vec<String> = seen
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_started",
            "tool_progress",
            "tool_progress",
            "context_set",
            "tool_finished"
        ]
    );
    let AgentEvent::ToolProgress { value, call_id, .. } = &seen[1] else {
        panic!("{:?}", seen[1]);
    };
    assert_eq!((value, call_id.as_str()), (&json!({"phase": "scan"}), "i"));
}

#[tokio::test]
async fn a_failing_output_validator_fails_the_call() {
    let tool = FnTool::text("t", "not json").validate_output(|_| Err("expected JSON".to_owned()));
    let exec = executor(vec![tool], ToolConfig::default());
    let results = exec.execute(&[call("1", "t")], &TurnContext::new()).await;
    let error = results[0].outcome.error().unwrap();
    assert_eq!(error.message(), "Invalid tool output: expected JSON");
}

#[tokio::test]
async fn tools_see_the_session_call_id_app_context_and_set_state() {
    let probe = FnTool::new("probe", |_, ctx| async move {
        let app = ctx.state::<AppContext>().cloned().unwrap_or_default();
        let greeting = ctx.state::<String>().cloned().unwrap_or_default();
        Ok(vec![Content::text(format!(
            "{} {} {} {}",
            ctx.session_id(),
            ctx.call_id(),
            app.0,
            greeting
        ))])
    });
    let mut set = ToolSet::new().with_state("hello".to_owned());
    set.register_tool(probe).unwrap();
    let exec = Executor::new(Arc::new(set), ToolConfig::default());
    let turn = TurnContext::new()
        .with_session_id("s1")
        .with_app_context(json!({"user": "ada"}));
    let results = exec.execute(&[call("c7", "probe")], &turn).await;
    assert_eq!(
        first_text(results[0].outcome.content().unwrap()),
        r#"s1 c7 {"user":"ada"} hello"#
    );
}

// ---------------------------------------------------------------- tracing

#[path = "span_recorder.rs"]
mod spans;

#[test]
fn every_call_runs_in_a_span_recording_tool_call_id_outcome_and_duration() {
    let recorder = spans::Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let exec = executor(
        vec![
            FnTool::text("fine", "ok"),
            FnTool::new("bad", |_, _| async {
                Err(toolwright_core::ToolError::execution("no").into())
            }),
        ],
        ToolConfig::default(),
    );
    runtime.block_on(exec.execute(
        &[call("c1", "fine"), call("c2", "bad"), call("c3", "missing")],
        &TurnContext::new(),
    ));
    let calls = recorder.tool_calls();
    assert_eq!(
        calls.len(),
        3,
        "a call refused before running has its span too"
    );
    assert_eq!(calls[0]["tool"], "fine");
    assert_eq!(calls[0]["call_id"], "c1");
    assert_eq!(calls[0]["outcome"], "\"ok\"");
    assert!(calls[0].contains_key("duration_ms"));
    assert_eq!(calls[1]["tool"], "bad");
    assert_eq!(calls[1]["outcome"], "\"execution\"");
    assert_eq!(calls[2]["tool"], "missing");
    assert_eq!(calls[2]["outcome"], "\"unknown_tool\"");
}

#[tokio::test]
async fn limits_too_large_to_reach_are_no_limits() {
    let ok = FnTool::new("ok", |_, _| async { Ok(vec![Content::text("fine")]) })
        .read_only()
        .max_in_flight(usize::MAX);
    let config = ToolConfig::default()
        .with_default_timeout(Duration::MAX)
        .with_max_retries(u32::MAX)
        .with_max_concurrency(usize::MAX);
    let results = executor(vec![ok], config)
        .execute(&[call("c1", "ok")], &TurnContext::new())
        .await;
    assert_eq!(first_text(results[0].outcome.content().unwrap()), "fine");
}

// ---------------------------------------------------------------- the executor's own API

#[tokio::test]
async fn an_external_tool_needing_approval_waits_for_approval_then_for_its_output() {
    let pay = FnTool::text("send_payment", "unused")
        .external()
        .require_approval();
    let exec = executor(vec![pay], ToolConfig::default());
    let c = call("p1", "send_payment");
    let tool = exec.tools().get("send_payment").unwrap().clone();
    assert!(exec.needs_approval(&c, tool.as_ref()));
    // Nothing approved this turn: the call waits for a person, rather than being handed
    // to the application to carry out.
    let results = exec
        .execute(std::slice::from_ref(&c), &TurnContext::new())
        .await;
    assert_eq!(results[0].outcome, ToolOutcome::PendingApproval);
    let results = exec
        .execute(
            std::slice::from_ref(&c),
            &TurnContext::new().with_approved(["p1"]),
        )
        .await;
    assert_eq!(results[0].outcome, ToolOutcome::PendingExternal);
}

/// A Deferred tool offered while the Direct tool `alpha` is among the offered ones.
struct Gated;

#[toolwright_core::async_trait]
impl toolwright_core::Tool for Gated {
    fn name(&self) -> &'static str {
        "gated"
    }

    fn description(&self) -> &'static str {
        "Offered alongside alpha."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(
        &self,
        _args: &Value,
        _ctx: &toolwright_core::ToolContext,
    ) -> toolwright_core::AgentResult<Vec<Content>> {
        Ok(vec![Content::text("gated ran")])
    }

    fn exposure(&self) -> toolwright_core::tool::ToolExposure {
        toolwright_core::tool::ToolExposure::Deferred
    }

    async fn should_activate(&self, ctx: &toolwright_core::tool::ActivationContext) -> bool {
        ctx.current_tools.iter().any(|t| t == "alpha")
    }
}

// Without `with_offered`, the set's exposure decides: its Direct tools count as offered,
// as they do for `ToolSet::call`.
#[tokio::test]
async fn without_an_offered_list_a_deferred_tool_sees_the_direct_tools_as_offered() {
    let mut set = ToolSet::new();
    set.register_tool(FnTool::text("alpha", "a")).unwrap();
    set.register_tool(Gated).unwrap();
    let set = Arc::new(set);
    let direct = set
        .call("gated", &json!({}), &toolwright_core::ToolContext::new("s"))
        .await;
    assert!(direct.is_ok(), "ToolSet::call: {direct:?}");
    let exec = Executor::new(set, ToolConfig::default());
    let results = exec
        .execute(&[call("1", "gated")], &TurnContext::new())
        .await;
    assert_eq!(
        results[0].outcome,
        ToolOutcome::Ok(vec![Content::text("gated ran")])
    );
}

#[tokio::test]
async fn completing_an_unknown_external_call_names_no_hidden_tool() {
    let exec = executor(
        vec![
            FnTool::text("alpha", "a"),
            FnTool::text("secret", "s").hidden(),
        ],
        ToolConfig::default(),
    );
    let done = exec.complete_external(&call("1", "gamma"), vec![Content::text("x")]);
    let error = done.outcome.error().unwrap();
    assert_eq!(error.kind(), ToolErrorKind::UnknownTool);
    assert!(
        error.message().ends_with("Available tools: alpha"),
        "{error}"
    );
}

//! Soak: 100,000 calls through the executor, a random mix of successes, errors, panics,
//! timeouts (tools that sleep, and a few that block their thread) and cancellations.
//! Every call is answered exactly once, in call order, with the outcome its kind implies,
//! and announced finished exactly once; no tool is left running afterwards; memory stays
//! flat.

// A counting allocator needs `unsafe impl GlobalAlloc`; nothing else here is unsafe.
#![allow(unsafe_code)]

use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use toolwright_core::{
    ToolErrorKind,
    agent::{AgentEvent, EventSink},
    exec::{Executor, RunControl, TurnContext},
    llm::ToolCall,
    tool,
    tool::ToolOutcome,
    tools,
    toolset::{ParallelRule, ToolConfig},
};

struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is
// updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed through.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Tool bodies alive right now: incremented when a body starts, decremented when its
/// future is dropped, whether it finished, timed out, was cancelled or panicked.
static ALIVE: AtomicUsize = AtomicUsize::new(0);

/// Notified each time the last body alive is dropped.
static NONE_ALIVE: Notify = Notify::const_new();

struct Alive;

impl Alive {
    fn new() -> Self {
        ALIVE.fetch_add(1, Ordering::SeqCst);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        if ALIVE.fetch_sub(1, Ordering::SeqCst) == 1 {
            NONE_ALIVE.notify_one();
        }
    }
}

/// Succeeds.
#[tool]
async fn succeed(i: u64) -> String {
    let _alive = Alive::new();
    tokio::task::yield_now().await;
    format!("ok {i}")
}

/// Fails.
#[tool]
async fn fail(i: u64) -> Result<String, String> {
    let _alive = Alive::new();
    Err(format!("failed {i}"))
}

/// Panics.
#[tool]
async fn explode(i: u64) -> String {
    let _alive = Alive::new();
    panic!("exploded {i}")
}

/// Never finishes within its timeout.
#[tool(timeout_ms = 5)]
async fn hang(i: u64) -> String {
    let _alive = Alive::new();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    format!("woke {i}")
}

/// Blocks its thread past its timeout, as a tool calling blocking code does.
#[tool(timeout_ms = 5)]
async fn block(i: u64) -> String {
    let _alive = Alive::new();
    std::thread::sleep(Duration::from_millis(25));
    format!("returned {i}")
}

/// Waits until it is cancelled.
#[tool]
async fn wait(i: u64) -> String {
    let _alive = Alive::new();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    format!("woke {i}")
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Succeed,
    Fail,
    Explode,
    Hang,
    Block,
    Wait,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Succeed => "succeed",
            Kind::Fail => "fail",
            Kind::Explode => "explode",
            Kind::Hang => "hang",
            Kind::Block => "block",
            Kind::Wait => "wait",
        }
    }
}

/// A small deterministic generator, so a failure can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn kind(&mut self) -> Kind {
        match self.next() % 1000 {
            0..500 => Kind::Succeed,
            500..650 => Kind::Fail,
            650..750 => Kind::Explode,
            750..847 => Kind::Hang,
            // Rare: each holds a runtime thread for 25 ms.
            847..850 => Kind::Block,
            _ => Kind::Wait,
        }
    }
}

fn check(kind: Kind, i: u64, outcome: &ToolOutcome) {
    let error_kind = outcome.error().map(|e| e.kind());
    match kind {
        Kind::Succeed => {
            let text = outcome.content().and_then(|c| c[0].as_text());
            assert_eq!(
                text,
                Some(format!("ok {i}").as_str()),
                "call {i}: {outcome:?}"
            );
        }
        Kind::Fail => {
            assert_eq!(error_kind, Some(ToolErrorKind::Execution), "call {i}");
            assert_eq!(outcome.error().unwrap().message(), format!("failed {i}"));
        }
        Kind::Explode => {
            assert_eq!(error_kind, Some(ToolErrorKind::Execution), "call {i}");
            assert!(
                outcome.error().unwrap().message().contains("panicked"),
                "call {i}: {outcome:?}"
            );
        }
        Kind::Hang | Kind::Block => {
            assert_eq!(error_kind, Some(ToolErrorKind::Timeout), "call {i}")
        }
        Kind::Wait => assert_eq!(error_kind, Some(ToolErrorKind::Cancelled), "call {i}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_mixed_calls_are_each_answered_once_in_order() {
    // Ten thousand panics of `explode` are expected; their messages are noise here. Any
    // other panic (a failed assertion) is still reported.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let expected = info
            .payload()
            .downcast_ref::<String>()
            .is_some_and(|message| message.starts_with("exploded "));
        if !expected {
            report(info);
        }
    }));

    const BATCHES: u64 = 100;
    const PER_BATCH: u64 = 1_000;
    let executor = Executor::new(
        Arc::new(tools![succeed, fail, explode, hang, block, wait]),
        ToolConfig::default()
            .with_max_concurrency(64)
            .with_parallel(ParallelRule::All),
    );
    // How many times each call was announced finished: once, whoever answered it.
    let finished: Arc<Vec<AtomicUsize>> = Arc::new(
        (0..BATCHES * PER_BATCH)
            .map(|_| AtomicUsize::new(0))
            .collect(),
    );
    let counts = finished.clone();
    let events = EventSink::new(move |event| {
        if let AgentEvent::ToolFinished { call_id, .. } = event {
            let i: usize = call_id["call_".len()..].parse().expect("our ids");
            counts[i].fetch_add(1, Ordering::Relaxed);
        }
    });
    let mut rng = Lcg(0x5eed);
    let mut answered = 0u64;
    let mut live_after_warmup = 0isize;

    for batch in 0..BATCHES {
        let kinds: Vec<Kind> = (0..PER_BATCH).map(|_| rng.kind()).collect();
        let calls: Vec<ToolCall> = kinds
            .iter()
            .enumerate()
            .map(|(j, kind)| {
                let i = batch * PER_BATCH + j as u64;
                ToolCall::new(format!("call_{i}"), kind.name(), json!({ "i": i }))
            })
            .collect();
        let to_cancel: Vec<String> = calls
            .iter()
            .zip(&kinds)
            .filter(|(_, kind)| **kind == Kind::Wait)
            .map(|(call, _)| call.id.clone())
            .collect();

        let control = RunControl::new();
        let canceller = {
            let control = control.clone();
            tokio::spawn(async move {
                for id in to_cancel {
                    // A call can be cancelled once the executor has taken it.
                    while !control.cancel_call(&id) {
                        tokio::task::yield_now().await;
                    }
                }
            })
        };
        let turn = TurnContext::new()
            .with_control(control)
            .with_events(events.clone());
        let results = executor.execute(&calls, &turn).await;
        canceller.await.expect("the canceller finishes");

        assert_eq!(results.len(), calls.len(), "every call is answered");
        for (j, (result, kind)) in results.iter().zip(&kinds).enumerate() {
            let i = batch * PER_BATCH + j as u64;
            assert_eq!(
                result.call.id, calls[j].id,
                "results come back in call order"
            );
            check(*kind, i, &result.outcome);
        }
        answered += results.len() as u64;

        if batch == 9 {
            live_after_warmup = LIVE_BYTES.load(Ordering::Relaxed);
        }
    }
    assert_eq!(answered, BATCHES * PER_BATCH);

    // A body still blocking its thread when its call was answered is dropped once it
    // returns control: wait for the last one to go. The bound only turns a body left
    // running for good into a failure rather than a hang; it is far past what any
    // machine needs.
    let none_alive = async {
        // A stale notification (the count touched zero between batches) only makes the
        // loop look again.
        while ALIVE.load(Ordering::SeqCst) != 0 {
            NONE_ALIVE.notified().await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(30), none_alive)
        .await
        .is_err()
    {
        panic!(
            "{} tool bodies are left running",
            ALIVE.load(Ordering::SeqCst)
        );
    }
    for (i, count) in finished.iter().enumerate() {
        let count = count.load(Ordering::Relaxed);
        assert_eq!(count, 1, "call {i} was announced finished {count} times");
    }

    let growth = LIVE_BYTES.load(Ordering::Relaxed) - live_after_warmup;
    assert!(
        growth < 1 << 20,
        "memory grew by {growth} bytes over 90,000 calls after warm-up"
    );
}

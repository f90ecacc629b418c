#![allow(dead_code)] // each test binary uses its own part of this helper.

//! Waiting on what happens, never on time passing: flags and counters that tasks and
//! threads set, and a recorder of the call pipeline's `tool_call` spans, which shows a
//! call reached the point where its tool would run (or where its limits hold it).
//!
//! Every wait has the same deadline, [`PATIENCE`]: a bound on a hang, so that a test that
//! would wait forever fails with a message naming what never happened. It is no claim of
//! speed; speed is measured by the criterion benchmarks (bench-mcp).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// How long any wait may take before the test fails: far longer than anything waited
/// for takes on a loaded machine.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// `future`'s output; fails the test, naming `what`, if it is not ready within
/// [`PATIENCE`].
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    match tokio::time::timeout(PATIENCE, future).await {
        Ok(output) => output,
        Err(_) => panic!("never happened (waited {PATIENCE:?}): {what}"),
    }
}

/// Polls `condition` until it holds; fails the test, naming `what`, if it does not hold
/// within [`PATIENCE`]. For states no event announces.
pub async fn eventually(what: &str, mut condition: impl AsyncFnMut() -> bool) {
    within(what, async {
        while !condition().await {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

/// The times this runtime, which must have one thread (a current-thread runtime), has
/// gone idle: parked, with no task it could run.
pub fn idle_count() -> u64 {
    let metrics = tokio::runtime::Handle::current().metrics();
    assert_eq!(metrics.num_workers(), 1, "idleness is read on one thread");
    metrics.worker_park_count(0)
}

/// Waits until this current-thread runtime has gone idle since it had done so `since`
/// times ([`idle_count`]): at that moment no task could run, so all that its tasks could
/// do without the test (or a timer, or the network) was done. Fails the test, naming
/// `what`, if it is not idle within [`PATIENCE`].
pub async fn idle_since(since: u64, what: &str) {
    // Each poll sleeps: the runtime parks only while this task waits too.
    eventually(what, async || idle_count() > since).await;
}

/// A count that tasks and threads add to, and tests wait on.
#[derive(Clone)]
pub struct Counter(Arc<watch::Sender<usize>>);

impl Default for Counter {
    fn default() -> Self {
        Self(Arc::new(watch::Sender::new(0)))
    }
}

impl Counter {
    /// Counts one more.
    pub fn add(&self) {
        self.0.send_modify(|count| *count += 1);
    }

    /// The count now.
    pub fn get(&self) -> usize {
        *self.0.borrow()
    }

    /// Waits until the count is at least `count`; fails the test, naming `what`, if it
    /// is not within [`PATIENCE`].
    pub async fn reaches(&self, count: usize, what: &str) {
        let mut seen = self.0.subscribe();
        within(what, seen.wait_for(|now| *now >= count))
            .await
            .expect("the sender lives in self");
    }
}

/// A flag set once: a [`Counter`] read as "has it happened".
#[derive(Clone, Default)]
pub struct Flag(Counter);

impl Flag {
    /// Sets the flag.
    pub fn set(&self) {
        self.0.add();
    }

    /// Whether the flag is set.
    pub fn is_set(&self) -> bool {
        self.0.get() > 0
    }

    /// Waits until the flag is set; fails the test, naming `what`, if it is not within
    /// [`PATIENCE`].
    pub async fn wait(&self, what: &str) {
        self.0.reaches(1, what).await;
    }
}

/// Counts, per tool, the calls whose `tool_call` span the call pipeline has polled at
/// least once (entered and left again). The pipeline takes a call's permits (its tool's
/// own limits, the server's) and polls its tool first inside that span, so a call
/// counted here has either entered its tool or is held by a limit: without the limit it
/// would have entered. [`install`](Self::install) it on the thread every task runs on (a
/// current-thread runtime).
#[derive(Clone, Default)]
pub struct PolledCalls(Arc<Recorded>);

/// A subscriber that wants nothing.
struct Uninterested;

impl tracing::Subscriber for Uninterested {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::never()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[derive(Default)]
struct Recorded {
    next_id: AtomicU64,
    /// The tool of each open `tool_call` span, until its first poll ends.
    unpolled: Mutex<HashMap<u64, String>>,
    polled: Mutex<HashMap<String, Counter>>,
}

impl PolledCalls {
    /// Records this thread's spans until the guard is dropped.
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        // tracing decides once, process-wide, whether a callsite's spans are wanted.
        // While at most one subscriber is registered it asks only the default of the
        // thread that first reaches the callsite: another test's thread, with none,
        // would answer for this one. With two more registered for good, every decision
        // asks every subscriber, under a lock a new subscriber's registration takes.
        static OTHERS: std::sync::OnceLock<[tracing::Dispatch; 2]> = std::sync::OnceLock::new();
        OTHERS.get_or_init(|| {
            [
                tracing::Dispatch::new(Uninterested),
                tracing::Dispatch::new(Uninterested),
            ]
        });
        tracing::subscriber::set_default(self.clone())
    }

    fn counter(&self, tool: &str) -> Counter {
        self.0
            .polled
            .lock()
            .unwrap()
            .entry(tool.to_owned())
            .or_default()
            .clone()
    }

    /// Waits until `count` calls of `tool` have been polled; fails the test if they are
    /// not within [`PATIENCE`].
    pub async fn reach(&self, tool: &str, count: usize) {
        let what = format!("{count} calls of `{tool}` reached the call pipeline's permits");
        self.counter(tool).reaches(count, &what).await;
    }
}

/// The `tool` field of a span.
struct ToolField<'a>(&'a mut Option<String>);

impl tracing::field::Visit for ToolField<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "tool" {
            *self.0 = Some(format!("{value:?}"));
        }
    }
}

impl tracing::Subscriber for PolledCalls {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.is_span() && metadata.name() == "tool_call"
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let id = self.0.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let mut tool = None;
        span.record(&mut ToolField(&mut tool));
        if let Some(tool) = tool {
            self.0.unpolled.lock().unwrap().insert(id, tool);
        }
        tracing::span::Id::from_u64(id)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, _: &tracing::Event<'_>) {}

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, span: &tracing::span::Id) {
        let tool = self.0.unpolled.lock().unwrap().remove(&span.into_u64());
        if let Some(tool) = tool {
            self.counter(&tool).add();
        }
    }
}

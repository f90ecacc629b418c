//! [`RunControl`]: cancelling a whole run, or one call of it, from outside.

use crate::execution::events::EventSink;
use crate::execution::inflight::InFlight;
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// A handle on a run, cheap to clone and safe to use from any task: cancel the run, or
/// one in-flight (or queued) call by its id while the run goes on.
#[derive(Clone, Debug, Default)]
pub struct RunControl {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    run: CancellationToken,
    // The calls of the turns in progress, one list per turn, registered and removed
    // whole (one lock per turn, not per call); a call that ends is marked in its entry.
    // Several entries can share an id only if the model sent a duplicate, and those
    // are never run.
    turns: Mutex<Vec<Arc<InFlight>>>,
    events: Option<EventSink>,
}

impl RunControl {
    /// A control for a new run.
    pub fn new() -> Self {
        Self::default()
    }

    /// A control for a new run whose events also go to `sink`.
    pub fn with_events(sink: EventSink) -> Self {
        Self {
            inner: Arc::new(Inner {
                events: Some(sink),
                ..Inner::default()
            }),
        }
    }

    /// The run's own event sink, if it has one.
    pub fn events(&self) -> Option<&EventSink> {
        self.inner.events.as_ref()
    }

    /// Cancels the run: every call in flight is cancelled and the run stops.
    pub fn cancel_run(&self) {
        self.inner.run.cancel();
        for (_, call) in self.turns().iter().flat_map(|turn| turn.iter()) {
            call.cancel();
        }
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.run.is_cancelled()
    }

    /// The run's cancellation token; cancelling the run also cancels every call.
    pub fn token(&self) -> &CancellationToken {
        &self.inner.run
    }

    /// Cancels the call `call_id` if it is running or waiting to run; the model gets a
    /// "cancelled" result and the run goes on. Returns whether such a call was found.
    pub fn cancel_call(&self, call_id: &str) -> bool {
        let turns = self.turns();
        let found = turns
            .iter()
            .flat_map(|turn| turn.iter())
            .find(|(id, call)| call.is_active() && *id == call_id);
        match found {
            Some((_, call)) => {
                call.cancel();
                true
            }
            None => false,
        }
    }

    /// Ids of the calls that can be cancelled now.
    pub fn active_calls(&self) -> Vec<String> {
        self.turns()
            .iter()
            .flat_map(|turn| turn.iter())
            .filter(|(_, call)| call.is_active())
            .map(|(id, _)| id.to_owned())
            .collect()
    }

    /// Makes a turn's calls cancellable, until [`RunControl::unregister_turn`].
    pub(crate) fn register_turn(&self, calls: Arc<InFlight>) {
        let mut turns = self.turns();
        // Checked under the lock `cancel_run` takes after cancelling the run token, so
        // a turn registered while the run is cancelled cannot miss it.
        if self.inner.run.is_cancelled() {
            calls.iter().for_each(|(_, call)| call.cancel());
        }
        turns.push(calls);
    }

    /// The turn ended: none of its calls can be cancelled any more.
    pub(crate) fn unregister_turn(&self, calls: &Arc<InFlight>) {
        let mut turns = self.turns();
        if let Some(at) = turns.iter().position(|turn| Arc::ptr_eq(turn, calls)) {
            turns.swap_remove(at);
        }
    }

    fn turns(&self) -> std::sync::MutexGuard<'_, Vec<Arc<InFlight>>> {
        // The list holds no invariant a panic could break, so a poisoned lock is usable.
        self.inner
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

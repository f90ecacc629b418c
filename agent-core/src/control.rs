//! [`RunControl`]: cancelling a whole run, or one call of it, from outside.

use crate::events::EventSink;
use std::collections::HashMap;
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
    // One entry per call of the current turn that has not ended; several calls can
    // share an id only if the model sent a duplicate, and those are never run.
    calls: Mutex<HashMap<String, CancellationToken>>,
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
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.run.is_cancelled()
    }

    /// The run's cancellation token; each call's token is a child of it.
    pub fn token(&self) -> &CancellationToken {
        &self.inner.run
    }

    /// Cancels the call `call_id` if it is running or waiting to run; the model gets a
    /// "cancelled" result and the run goes on. Returns whether such a call was found.
    pub fn cancel_call(&self, call_id: &str) -> bool {
        match self.calls().get(call_id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Ids of the calls that can be cancelled now.
    pub fn active_calls(&self) -> Vec<String> {
        self.calls().keys().cloned().collect()
    }

    /// Makes `call_id` cancellable and returns its token.
    pub(crate) fn register(&self, call_id: &str) -> CancellationToken {
        let token = self.inner.run.child_token();
        self.calls().insert(call_id.to_owned(), token.clone());
        token
    }

    /// The call ended: it can no longer be cancelled.
    pub(crate) fn unregister(&self, call_id: &str) {
        self.calls().remove(call_id);
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        // The map holds no invariant a panic could break, so a poisoned lock is usable.
        self.inner
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

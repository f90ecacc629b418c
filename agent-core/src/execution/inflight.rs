//! [`InFlight`]: the calls of one turn while they run — what cancelling one by id needs
//! (its id, its token) and what a running call's context reaches through it (its id,
//! token, progress, application context and next-turn parameters).
//!
//! Kept per turn rather than per call: a call's context holds the turn and an index,
//! so running a call allocates nothing for its id, token or reporting.

use crate::execution::events::{AgentEvent, Sinks};
use crate::model::context::{NextTurn, TurnLink};
use crate::model::error::ToolError;
use crate::model::outcome::Reports;
use crate::model::tool::Tool;
use serde_json::Value;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use tokio_util::sync::CancellationToken;

/// The calls of one turn that run (or wait to), in the executor's order.
pub(crate) struct InFlight {
    /// Every call's id, one after another; each call knows its range.
    ids: String,
    calls: Box<[InFlightCall]>,
    sinks: Sinks,
}

/// One call of a turn.
pub(crate) struct InFlightCall {
    id: Range<usize>,
    tool: Arc<dyn Tool>,
    /// Made only when something waits on it (the tool, or the executor once the call
    /// has to wait): most calls finish at once and never need one, and making and
    /// dropping a token each takes a lock.
    token: OnceLock<CancellationToken>,
    cancelled: AtomicBool,
    ended: AtomicBool,
    /// Taken by whichever answers the call first: the call itself when it finishes, or
    /// the batch's watchdog giving up on a poll that outlived the timeout. Only the
    /// taker announces the call finished.
    answered: AtomicBool,
    /// The last application context the call set. Made at the first one: most calls
    /// set none, and then end without taking a lock for it. Boxed, as what few calls
    /// use need not widen every entry.
    context: OnceLock<Box<Mutex<Option<Value>>>>,
    /// Made when the tool first asks for it.
    next_turn: OnceLock<NextTurn>,
}

impl std::fmt::Debug for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|(id, _)| id))
            .finish()
    }
}

impl InFlight {
    /// The turn's calls, each given by its id and its tool; events go to `sinks`.
    pub(crate) fn new<'a>(
        calls: impl ExactSizeIterator<Item = (&'a str, Arc<dyn Tool>)>,
        sinks: Sinks,
    ) -> Self {
        let mut ids = String::new();
        let mut entries = Vec::with_capacity(calls.len());
        for (id, tool) in calls {
            let start = ids.len();
            ids.push_str(id);
            entries.push(InFlightCall {
                id: start..ids.len(),
                tool,
                token: OnceLock::new(),
                cancelled: AtomicBool::new(false),
                ended: AtomicBool::new(false),
                answered: AtomicBool::new(false),
                context: OnceLock::new(),
                next_turn: OnceLock::new(),
            });
        }
        Self {
            ids,
            calls: entries.into(),
            sinks,
        }
    }

    /// One call, `id` of `tool`, whose token is `token` (a request's own, say).
    pub(crate) fn single(
        id: &str,
        tool: Arc<dyn Tool>,
        token: CancellationToken,
        sinks: Sinks,
    ) -> Self {
        let calls = Self::new(std::iter::once((id, tool)), sinks);
        // Just made: nothing has asked for the token yet.
        let _ = calls.calls[0].token.set(token);
        calls
    }

    /// The call at `at`.
    pub(crate) fn get(&self, at: usize) -> &InFlightCall {
        &self.calls[at]
    }

    /// The id of the call at `at`.
    pub(crate) fn id(&self, at: usize) -> &str {
        &self.ids[self.calls[at].id.clone()]
    }

    /// Every call, with its id.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &InFlightCall)> {
        self.calls
            .iter()
            .map(|call| (&self.ids[call.id.clone()], call))
    }

    /// Publishes a progress value of the call at `at`, once its tool accepts it. A report
    /// made after the call was answered (through a clone of its context the tool kept)
    /// is dropped: the call was announced finished already.
    pub(crate) fn progress(&self, at: usize, value: Value) -> Result<(), ToolError> {
        let call = &self.calls[at];
        if call.is_answered() {
            return Ok(());
        }
        call.tool
            .validate_progress(&value)
            .map_err(|reason| ToolError::execution(format!("Invalid tool progress: {reason}")))?;
        self.sinks.emit_with(|| AgentEvent::ToolProgress {
            call_id: self.id(at).to_owned(),
            name: call.tool.name().to_owned(),
            value,
        });
        Ok(())
    }

    /// Records (and publishes) the application context the call at `at` set; nothing,
    /// once the call was answered (its reports were taken then).
    pub(crate) fn set_context(&self, at: usize, value: Value) {
        if self.calls[at].is_answered() {
            return;
        }
        self.sinks.emit_with(|| AgentEvent::ContextSet {
            call_id: self.id(at).to_owned(),
            value: value.clone(),
        });
        *lock(self.calls[at].context.get_or_init(Box::default)) = Some(value);
    }
}

impl TurnLink for InFlight {
    fn id(&self, at: usize) -> &str {
        InFlight::id(self, at)
    }

    fn token(&self, at: usize) -> &CancellationToken {
        self.calls[at].token()
    }

    fn next_turn(&self, at: usize) -> &NextTurn {
        self.calls[at].next_turn()
    }

    fn progress(&self, at: usize, value: Value) -> Result<(), ToolError> {
        InFlight::progress(self, at, value)
    }

    fn set_context(&self, at: usize, value: Value) {
        InFlight::set_context(self, at, value);
    }
}

impl InFlightCall {
    /// The call's token, made on first use (cancelled already if the call is).
    pub(crate) fn token(&self) -> &CancellationToken {
        let token = self.token.get_or_init(CancellationToken::new);
        // Paired with `cancel`: whichever of the two runs second sees the other's
        // write, so a cancellation is never lost between them.
        if self.cancelled.load(Ordering::SeqCst) {
            token.cancel();
        }
        token
    }

    /// Cancels the call: its token, now or when it is made.
    pub(crate) fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Some(token) = self.token.get() {
            token.cancel();
        }
    }

    /// Whether the call was cancelled, here or through a token it was given.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
            || self
                .token
                .get()
                .is_some_and(CancellationToken::is_cancelled)
    }

    /// The call ended: it can no longer be cancelled.
    pub(crate) fn end(&self) {
        self.ended.store(true, Ordering::Release);
    }

    /// Takes the right to answer the call; false if it was taken already.
    pub(crate) fn claim_answer(&self) -> bool {
        !self.answered.swap(true, Ordering::AcqRel)
    }

    /// Whether the call was answered (or is being announced so).
    fn is_answered(&self) -> bool {
        self.answered.load(Ordering::Acquire)
    }

    /// Whether the call can still be cancelled.
    pub(crate) fn is_active(&self) -> bool {
        !self.ended.load(Ordering::Acquire)
    }

    /// The next-turn parameters of the call, made on first use.
    pub(crate) fn next_turn(&self) -> &NextTurn {
        self.next_turn.get_or_init(NextTurn::default)
    }

    /// What the call left for the next turn: its application context and parameters,
    /// or `None` when it left neither. Most calls never reach for either, and are
    /// answered without looking further.
    pub(crate) fn take_reports(&self) -> Option<Box<Reports>> {
        if self.context.get().is_none() && self.next_turn.get().is_none() {
            return None;
        }
        let context_update = self.context.get().and_then(|context| lock(context).take());
        let next_turn = self.next_turn.get().and_then(NextTurn::take);
        (context_update.is_some() || next_turn.is_some()).then(|| {
            Box::new(Reports {
                context_update,
                next_turn,
            })
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A value slot holds no invariant a panic could break.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::InFlight;
    use crate::execution::events::Sinks;
    use crate::model::tool::ExternalTool;
    use std::sync::Arc;

    fn turn(ids: &[&str]) -> InFlight {
        let tool: Arc<dyn crate::Tool> =
            Arc::new(ExternalTool::new("t", "t", serde_json::json!({})));
        InFlight::new(ids.iter().map(|id| (*id, tool.clone())), Sinks::default())
    }

    #[test]
    fn ids_are_kept_apart() {
        let calls = turn(&["a", "", "call_2"]);
        let ids: Vec<&str> = calls.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["a", "", "call_2"]);
        assert_eq!(calls.id(2), "call_2");
    }

    #[test]
    fn a_token_made_after_the_cancellation_is_cancelled_and_one_made_before_is_too() {
        let calls = turn(&["late", "early"]);
        calls.get(0).cancel();
        assert!(calls.get(0).token().is_cancelled());
        let early = calls.get(1).token().clone();
        assert!(!early.is_cancelled());
        calls.get(1).cancel();
        assert!(early.is_cancelled() && calls.get(1).is_cancelled());
    }
}

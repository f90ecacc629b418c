//! Answering on time for a tool that blocks its thread.
//!
//! A call runs in a task of its own, under its own timeout. When the tool blocks its
//! thread, no timer of that task can fire, so the request waits for the task through a
//! [`StallWatch`]: one watchdog task per server looks at every call in flight each tick
//! and releases those past their deadline. One watchdog rather than a timer per call,
//! because registering a timer costs a call more than everything else the server adds.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Poll, Waker};
use std::time::Duration;
use tokio::time::Instant;

/// How often the watchdog looks at the calls in flight.
const TICK: Duration = Duration::from_millis(10);

/// How long the watchdog goes on ticking after the last call started: a server answering
/// calls one after another keeps one watchdog rather than starting one per call.
const IDLE: Duration = Duration::from_secs(1);

/// The calls of one server that are in flight, each with its deadline.
#[derive(Default)]
pub(crate) struct StallWatch {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Slots of the calls in flight; `free` lists the empty ones.
    calls: Vec<Option<Watched>>,
    free: Vec<usize>,
    /// Whether a watchdog task is running.
    watching: bool,
    last_started: Option<Instant>,
}

struct Watched {
    deadline: Instant,
    waker: Waker,
    stalled: bool,
}

impl StallWatch {
    /// Waits for `call`; `None` once `deadline` has passed with `call` still not done
    /// (within a tick), which happens only when its task cannot answer for itself.
    pub(crate) async fn wait<F>(
        self: &Arc<Self>,
        call: &mut F,
        deadline: Instant,
    ) -> Option<F::Output>
    where
        F: Future + Unpin,
    {
        let mut slot = Slot {
            watch: self,
            index: None,
        };
        std::future::poll_fn(|cx| {
            if let Poll::Ready(output) = Pin::new(&mut *call).poll(cx) {
                return Poll::Ready(Some(output));
            }
            slot.pending(deadline, cx.waker())
        })
        .await
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing here holds an invariant a panic could break.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One call's place in the watch, given back however the wait ends.
struct Slot<'a> {
    watch: &'a Arc<StallWatch>,
    index: Option<usize>,
}

impl Slot<'_> {
    /// The call is not done: registered (or its waker refreshed), unless the watchdog
    /// found it past its deadline.
    fn pending<T>(&mut self, deadline: Instant, waker: &Waker) -> Poll<Option<T>> {
        let mut state = self.watch.lock();
        match self.index {
            Some(index) => {
                if let Some(watched) = state.calls[index].as_mut() {
                    if watched.stalled {
                        return Poll::Ready(None);
                    }
                    if !watched.waker.will_wake(waker) {
                        watched.waker = waker.clone();
                    }
                }
            }
            None => {
                let watched = Watched {
                    deadline,
                    waker: waker.clone(),
                    stalled: false,
                };
                let index = match state.free.pop() {
                    Some(index) => {
                        state.calls[index] = Some(watched);
                        index
                    }
                    None => {
                        state.calls.push(Some(watched));
                        state.calls.len() - 1
                    }
                };
                self.index = Some(index);
                state.last_started = Some(Instant::now());
                if !state.watching {
                    state.watching = true;
                    tokio::spawn(watchdog(Arc::downgrade(self.watch)));
                }
            }
        }
        Poll::Pending
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Some(index) = self.index {
            let mut state = self.watch.lock();
            state.calls[index] = None;
            state.free.push(index);
        }
    }
}

/// Each tick, releases the calls past their deadline; ends once no call has started for
/// a while, or the server is gone.
async fn watchdog(watch: Weak<StallWatch>) {
    loop {
        tokio::time::sleep(TICK).await;
        let Some(watch) = watch.upgrade() else {
            return;
        };
        let mut state = watch.lock();
        let now = Instant::now();
        for watched in state.calls.iter_mut().flatten() {
            if !watched.stalled && now >= watched.deadline {
                watched.stalled = true;
                watched.waker.wake_by_ref();
            }
        }
        let idle = state.free.len() == state.calls.len()
            && state
                .last_started
                .is_none_or(|started| now - started >= IDLE);
        if idle {
            state.watching = false;
            return;
        }
    }
}

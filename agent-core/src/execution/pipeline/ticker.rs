//! [`Ticker`]: one clock for every batch of a runner, so that watching a batch costs no
//! timer of its own.
//!
//! A batch's caller watches its driver once per tick ([`LONG_POLL`]) for as long as the
//! batch runs. Registering a timer for that is a large part of what a call that finishes
//! at once costs; instead each batch registers its waker here, and one task per runner
//! wakes every registered batch each tick. The task ends after a second without
//! batches, and starts again with the next one.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::Waker;
use std::time::Duration;
use tokio::time::Instant;

/// The tick: how long one poll may run before the rest of its batch is moved to tasks of their
/// own. Long enough that ordinary tools never trigger it, short enough that a blocking
/// one costs its neighbours little.
pub(super) const LONG_POLL: Duration = Duration::from_millis(10);

/// How long the ticking task goes on without batches: a runner answering calls one
/// after another keeps one task rather than starting one per call.
const IDLE: Duration = Duration::from_secs(1);

/// The batches of one runner that are being watched.
#[derive(Default)]
pub(crate) struct Ticker {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Places of the batches watched; `free` lists the empty ones.
    watched: Vec<Option<Watched>>,
    free: Vec<usize>,
    /// Whether the ticking task is running.
    ticking: bool,
    last_used: Option<Instant>,
}

struct Watched {
    waker: Waker,
    /// Set at each tick, cleared when the batch's caller has looked.
    ticked: bool,
}

impl Ticker {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing here holds an invariant a panic could break.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One batch's place at the ticker, given back when dropped.
pub(crate) struct TickerPlace<'a> {
    ticker: &'a Arc<Ticker>,
    index: Option<usize>,
}

impl<'a> TickerPlace<'a> {
    pub(crate) fn new(ticker: &'a Arc<Ticker>) -> Self {
        Self {
            ticker,
            index: None,
        }
    }

    /// Registers `waker` for the next ticks (or refreshes it); true if a tick came since
    /// the last call.
    pub(crate) fn ticked(&mut self, waker: &Waker) -> bool {
        let mut state = self.ticker.lock();
        if let Some(index) = self.index
            && let Some(watched) = state.watched[index].as_mut()
        {
            if !watched.waker.will_wake(waker) {
                watched.waker = waker.clone();
            }
            return std::mem::take(&mut watched.ticked);
        }
        let watched = Watched {
            waker: waker.clone(),
            ticked: false,
        };
        let index = match state.free.pop() {
            Some(index) => {
                state.watched[index] = Some(watched);
                index
            }
            None => {
                state.watched.push(Some(watched));
                state.watched.len() - 1
            }
        };
        self.index = Some(index);
        state.last_used = Some(Instant::now());
        if !state.ticking {
            state.ticking = true;
            tokio::spawn(tick(Arc::downgrade(self.ticker)));
        }
        false
    }
}

impl Drop for TickerPlace<'_> {
    fn drop(&mut self) {
        if let Some(index) = self.index {
            let mut state = self.ticker.lock();
            state.watched[index] = None;
            state.free.push(index);
            state.last_used = Some(Instant::now());
        }
    }
}

/// Marks the ticker stopped however its task ends: returned, or dropped with its
/// runtime (the next batch then starts a task on its own runtime).
struct Ticking(Weak<Ticker>);

impl Drop for Ticking {
    fn drop(&mut self) {
        if let Some(ticker) = self.0.upgrade() {
            ticker.lock().ticking = false;
        }
    }
}

/// Each tick, wakes every batch watched; ends once none was for a while, or the runner
/// is gone.
async fn tick(ticker: Weak<Ticker>) {
    let mut ticking = Ticking(ticker.clone());
    loop {
        tokio::time::sleep(LONG_POLL).await;
        let Some(ticker) = ticker.upgrade() else {
            return;
        };
        let mut state = ticker.lock();
        let now = Instant::now();
        for watched in state.watched.iter_mut().flatten() {
            watched.ticked = true;
            watched.waker.wake_by_ref();
        }
        let idle = state.free.len() == state.watched.len()
            && state
                .last_used
                .is_none_or(|used| now.duration_since(used) >= IDLE);
        if idle {
            // Marked here, under the lock, so a batch registering now starts a new task
            // (which this one's guard must then leave alone).
            state.ticking = false;
            ticking.0 = Weak::new();
            return;
        }
    }
}

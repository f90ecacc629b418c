//! Waiting on events in the runtime's tests: a bound that only a broken runtime reaches
//! ([`within`]), and a latch a tool blocks its thread at until the test opens it.

#![allow(dead_code)]

use std::future::Future;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a test waits for something that must happen before it calls it a failure:
/// far past what any loaded machine needs, so that only a broken runtime reaches it,
/// and the test then fails naming what never came rather than hanging.
pub const GENEROUS: Duration = Duration::from_secs(30);

/// `future`'s output, or a failure naming `what` if it does not come within [`GENEROUS`].
/// On a paused clock the wait costs no real time: the clock jumps once every task waits.
pub async fn within<F: Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(GENEROUS, future)
        .await
        .unwrap_or_else(|_| panic!("{what}: did not happen within {GENEROUS:?}"))
}

/// A gate a tool waits at while holding its thread (as blocking code does), until the
/// test opens it: the tool returns only once the test has seen what it must see first.
#[derive(Default)]
pub struct Latch {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Latch {
    pub fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }

    /// Blocks the calling thread until the latch is open. The limit only keeps a thread
    /// from being held for ever should a test leave without opening it (a panic opens it,
    /// see [`OpensOnDrop`]); it is well past [`GENEROUS`].
    pub fn wait(&self) {
        let open = self.open.lock().unwrap();
        let _open = self
            .opened
            .wait_timeout_while(open, 4 * GENEROUS, |open| !*open)
            .unwrap();
    }
}

/// Opens its latch when dropped: a test that fails lets its blocked tool go, so the
/// runtime can shut down.
pub struct OpensOnDrop(pub Arc<Latch>);

impl Drop for OpensOnDrop {
    fn drop(&mut self) {
        self.0.open();
    }
}

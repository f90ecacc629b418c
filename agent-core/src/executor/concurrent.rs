//! Polling a batch's calls concurrently inside the executor's own future.
//!
//! A call's bookkeeping (its permits, its timeout, its cancellation, its retries) is
//! cheap, cooperative code of ours, so it does not need a task of its own: all of a
//! batch's calls are polled here, each only when its own waker fired. Only the tool
//! runs in a task (see `call.rs`), which is what isolates its panics and lets a
//! call that blocks its thread be abandoned on time.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

/// Which futures were woken since the last poll, and who to tell.
#[derive(Default)]
struct Ready {
    queue: Mutex<Vec<usize>>,
    parent: Mutex<Option<Waker>>,
}

/// The waker of the future at `index`.
struct Slot {
    index: usize,
    queued: AtomicBool,
    ready: Arc<Ready>,
}

impl Wake for Slot {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        lock(&self.ready.queue).push(self.index);
        let parent = lock(&self.ready.parent).clone();
        if let Some(parent) = parent {
            parent.wake();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Nothing here holds an invariant a panic could break.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Entry<F> {
    future: Option<Pin<Box<F>>>,
    slot: Arc<Slot>,
    waker: Waker,
}

/// A set of futures polled concurrently; [`Concurrent::next`] yields each one's output
/// with its position, as they finish. A future that panics yields `Err` with the
/// panic's payload; the others go on.
pub(super) struct Concurrent<F: Future> {
    entries: Vec<Entry<F>>,
    ready: Arc<Ready>,
    // Indexes to poll now: taken from `ready.queue` in one go, to lock it once per wake.
    batch: Vec<usize>,
    left: usize,
}

/// A panic's payload.
pub(super) type Panic = Box<dyn std::any::Any + Send>;

/// A finished future's position and output (or panic); `None` once all have finished.
pub(super) type Finished<T> = Option<(usize, Result<T, Panic>)>;

impl<F: Future> Concurrent<F> {
    /// The set of `futures`, all to be polled at the first call of `next`.
    pub(super) fn new(futures: impl ExactSizeIterator<Item = F>) -> Self {
        let ready = Arc::new(Ready::default());
        let mut entries = Vec::with_capacity(futures.len());
        for (index, future) in futures.enumerate() {
            let slot = Arc::new(Slot {
                index,
                queued: AtomicBool::new(true),
                ready: ready.clone(),
            });
            entries.push(Entry {
                future: Some(Box::pin(future)),
                waker: Waker::from(slot.clone()),
                slot,
            });
        }
        let left = entries.len();
        let batch = (0..left).rev().collect();
        Self {
            entries,
            ready,
            batch,
            left,
        }
    }

    /// How many futures have not finished.
    pub(super) fn len(&self) -> usize {
        self.left
    }

    /// The next future to finish, with its position; `None` once all have.
    pub(super) async fn next(&mut self) -> Finished<F::Output> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Finished<F::Output>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        {
            let mut parent = lock(&self.ready.parent);
            if !parent.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *parent = Some(cx.waker().clone());
            }
        }
        // At most one refill per poll: a future woken while it is polled (one out of
        // its cooperative budget, say) is polled at the next wake of this task, which
        // its waker has already asked for, rather than in a busy loop here.
        let mut refilled = false;
        loop {
            if self.batch.is_empty() {
                if refilled {
                    return Poll::Pending;
                }
                refilled = true;
                std::mem::swap(&mut self.batch, &mut *lock(&self.ready.queue));
                if self.batch.is_empty() {
                    return Poll::Pending;
                }
                // Poll in the order the wakes came.
                self.batch.reverse();
            }
            while let Some(index) = self.batch.pop() {
                let entry = &mut self.entries[index];
                entry.slot.queued.store(false, Ordering::Release);
                let Some(future) = entry.future.as_mut() else {
                    continue;
                };
                let mut task_cx = Context::from_waker(&entry.waker);
                let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut task_cx)));
                let output = match polled {
                    Ok(Poll::Pending) => continue,
                    Ok(Poll::Ready(output)) => Ok(output),
                    Err(panic) => Err(panic),
                };
                // A future that panicked may panic again when dropped; contain that too.
                let done = entry.future.take();
                let _ = catch_unwind(AssertUnwindSafe(move || drop(done)));
                self.left -= 1;
                return Poll::Ready(Some((index, output)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Concurrent;
    use std::time::Duration;

    #[tokio::test]
    async fn outputs_come_as_futures_finish_and_a_panic_stays_with_its_future() {
        let delays = [30_u64, 0, 10];
        let mut set = Concurrent::new(delays.iter().enumerate().map(|(i, &ms)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            assert!(i != 2, "the third future fails");
            i * 10
        }));
        let mut order = Vec::new();
        while let Some((index, output)) = set.next().await {
            order.push((index, output.ok()));
        }
        assert_eq!(order, vec![(1, Some(10)), (2, None), (0, Some(0))]);
        assert!(set.next().await.is_none());
    }

    #[tokio::test]
    async fn an_empty_set_is_done_at_once() {
        let mut set = Concurrent::new(std::iter::empty::<std::future::Ready<()>>());
        assert!(set.next().await.is_none());
    }
}

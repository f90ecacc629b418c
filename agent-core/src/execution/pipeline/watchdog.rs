//! Running a batch's calls concurrently: inline in one task, with a watchdog.
//!
//! Most calls finish in their first poll, so the cheapest way to run them is one after
//! another in one task: no task, timer or cross-thread wake per call. What that alone
//! would lose is protection from a tool that blocks its thread (or computes for long
//! inside one poll): it would hold up its neighbours, and its timeout could not fire.
//! So the calls are polled by a *driver* task while the caller of [`run`] watches it:
//! - when one poll has been running for a tick
//!   ([`LONG_POLL`](super::ticker::LONG_POLL)), every other call of the batch is moved
//!   to a task of its own and goes on there, in parallel;
//! - when that poll outlives its call's timeout, the call is answered as timed out
//!   without waiting for it (its future is dropped when the poll returns).
//!
//! The caller is woken for each tick by its runner's ticker (`ticker.rs`), not by a
//! timer of its own. A batch of one call needs no driver: its future is a task of its
//! own, which the caller watches alike ([`run_one`]). On a current-thread runtime there
//! is nothing to watch from (a blocking poll stops the watchdog too), and the caller
//! polls the futures itself.
//!
//! Futures live in shared cells, each locked only while it is polled, which is what
//! lets the watchdog take the idle ones away from a driver stuck in another.

use super::ticker::{Ticker, TickerPlace};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use tokio::runtime::RuntimeFlavor;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::task::AbortOnDropHandle;

/// A panic's payload.
pub(super) type Panic = Box<dyn std::any::Any + Send>;

/// What became of one future of the batch.
pub(super) enum Outcome<T> {
    /// It finished with this output.
    Done(T),
    /// It panicked.
    Panicked(Panic),
    /// One of its polls outlived its timeout: it was answered without waiting.
    Stalled,
}

/// A future the batch runs.
pub(super) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Runs the futures `start` makes of `jobs` concurrently and returns each one's
/// outcome, in order. `timeouts[i]` is how long a single poll of job `i`'s future may
/// block before it is given up ([`Outcome::Stalled`]); its ordinary timeout is the
/// future's own business. Giving up takes `give_up(i)`'s consent: false means the
/// future has just settled its answer itself (inside that very poll), which then
/// stands.
///
/// A job becomes its future only when first polled, on the driver's thread: a call
/// that finishes at once is then allocated, polled and freed in one go, which the
/// allocator serves from its per-thread cache, where a batch of futures made up
/// front would each take its slow path.
pub(super) async fn run<J, T>(
    jobs: Vec<J>,
    start: fn(J) -> BoxFuture<T>,
    timeouts: Vec<Duration>,
    give_up: impl Fn(usize) -> bool,
    ticker: &Arc<Ticker>,
) -> Vec<Outcome<T>>
where
    J: Send + 'static,
    T: Send + 'static,
{
    if jobs.is_empty() {
        return Vec::new();
    }
    let shared = Arc::new(BatchState::new(jobs, start));
    if !may_stall() {
        // Nothing to watch: the caller drives the batch itself, as no task could
        // answer sooner.
        drive(shared.clone()).await;
        return shared.take_outcomes(&vec![false; timeouts.len()]);
    }
    // Tasks are aborted when their handles drop, so nothing a batch started outlives it.
    let _driver = AbortOnDropHandle::new(tokio::spawn(drive(shared.clone())));
    let mut moved: Vec<AbortOnDropHandle<()>> = Vec::new();
    let mut stalled = vec![false; timeouts.len()];
    let mut watch = Watch::default();
    // The runner's ticker wakes this task each tick: no timer of its own.
    let mut place = TickerPlace::new(ticker);
    let done = shared.done.notified();
    tokio::pin!(done);
    loop {
        let ticked = std::future::poll_fn(|cx| {
            if done.as_mut().poll(cx).is_ready() {
                return Poll::Ready(false);
            }
            if place.ticked(cx.waker()) {
                Poll::Ready(true)
            } else {
                Poll::Pending
            }
        })
        .await;
        if !ticked {
            break;
        }
        let now = Instant::now();
        if let Some(since) = watch.long_poll(&shared.polls, now) {
            let index = shared.polling.load(Ordering::Acquire);
            shared.move_others(index, &mut moved);
            if now.duration_since(since) >= timeouts[index]
                && give_up(index)
                && shared.answer(index)
            {
                stalled[index] = true;
            }
        }
    }
    drop(place);
    shared.take_outcomes(&stalled)
}

/// Whether a poll can outlive its timeout while a watchdog looks on: not on a
/// current-thread runtime, where a poll that blocks holds up the watchdog too (a result
/// that comes too late is then a timeout, see `call.rs`), so a driver task and a
/// watchdog would only cost.
fn may_stall() -> bool {
    tokio::runtime::Handle::current().runtime_flavor() != RuntimeFlavor::CurrentThread
}

/// What the watchdog saw of the driver at its last tick.
#[derive(Default)]
struct Watch {
    seen: u64,
    since: Option<Instant>,
}

impl Watch {
    /// When the poll in progress was first seen running, if it has run since the last
    /// tick; `polls` is the driver's count of poll starts and ends.
    fn long_poll(&mut self, polls: &AtomicU64, now: Instant) -> Option<Instant> {
        let seq = polls.load(Ordering::Acquire);
        // Odd while a poll is in progress; a different number means the driver moved on.
        let in_poll = !seq.is_multiple_of(2);
        if !in_poll || seq != self.seen {
            self.seen = seq;
            self.since = in_poll.then_some(now);
            return None;
        }
        Some(*self.since.get_or_insert(now))
    }
}

/// [`run`] for a single future, without a batch's shared state: the future is a task of
/// its own (nothing to move away from it), polled at once when the runtime has a free
/// thread, and the caller watches it as it would a batch's driver. `give_up` is asked
/// as `run`'s is, and may be asked again at a later tick when it says no.
///
/// On a current-thread runtime both poll their futures in the caller's task: a poll that
/// blocks would hold up a watchdog as well.
pub(super) async fn run_one<F>(
    future: F,
    timeout: Duration,
    give_up: impl Fn() -> bool,
    ticker: &Arc<Ticker>,
) -> Outcome<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if !may_stall() {
        // Nothing to watch: the caller polls the future itself, with no task to spawn.
        return match CatchUnwind(std::pin::pin!(future)).await {
            Ok(output) => Outcome::Done(output),
            Err(panic) => Outcome::Panicked(panic),
        };
    }
    let polls = Arc::new(AtomicU64::new(0));
    let counted = polls.clone();
    let task = async move {
        let mut future = std::pin::pin!(future);
        std::future::poll_fn(|cx| {
            // Only this task writes the count: a plain store does (see `count_poll`).
            let seq = counted.load(Ordering::Relaxed);
            counted.store(seq.wrapping_add(1), Ordering::Release);
            let polled = future.as_mut().poll(cx);
            counted.store(seq.wrapping_add(2), Ordering::Release);
            polled
        })
        .await
    };
    // Aborted when the handle drops: a call given up on is dropped once its poll returns.
    let mut handle = AbortOnDropHandle::new(tokio::spawn(task));
    let mut place = None;
    let mut watch = Watch::default();
    loop {
        let joined = std::future::poll_fn(|cx| {
            if let Poll::Ready(joined) = Pin::new(&mut handle).poll(cx) {
                return Poll::Ready(Some(joined));
            }
            let place = place.get_or_insert_with(|| TickerPlace::new(ticker));
            if place.ticked(cx.waker()) {
                Poll::Ready(None)
            } else {
                Poll::Pending
            }
        })
        .await;
        match joined {
            Some(Ok(output)) => return Outcome::Done(output),
            Some(Err(error)) => {
                return Outcome::Panicked(match error.try_into_panic() {
                    Ok(panic) => panic,
                    // Only a runtime shutting down cancels the task: nothing else holds it.
                    Err(_) => Box::new("the task running the call was cancelled"),
                });
            }
            None => {
                let now = Instant::now();
                if let Some(since) = watch.long_poll(&polls, now)
                    && now.duration_since(since) >= timeout
                    && give_up()
                {
                    return Outcome::Stalled;
                }
            }
        }
    }
}

/// The batch, shared by its driver, its watchdog and the tasks calls are moved to.
struct BatchState<J, T> {
    cells: Box<[Cell<J, T>]>,
    start: fn(J) -> BoxFuture<T>,
    wakes: Arc<Wakes>,
    /// Incremented when a poll starts and when it ends: odd while one is in progress.
    polls: AtomicU64,
    /// The index of the future being polled (meaningful while `polls` is odd).
    polling: AtomicUsize,
    /// Futures not answered yet; `done` is notified when it reaches zero.
    unanswered: AtomicUsize,
    done: Notify,
}

struct Cell<J, T> {
    state: Mutex<State<J, T>>,
    /// Set by whoever answers the call first: the driver, a moved task, or the
    /// watchdog giving up on it.
    answered: AtomicBool,
    /// Made at the future's first `Pending`: most finish in their first poll, which
    /// is given a no-op waker and needs none.
    waker: OnceLock<Waker>,
}

enum State<J, T> {
    /// Not polled yet.
    Waiting(J),
    /// Polled by the driver.
    Driven(BoxFuture<T>),
    /// Moved to a task of its own.
    Moved,
    Finished(Result<T, Panic>),
    Empty,
}

impl<J, T> BatchState<J, T>
where
    J: Send + 'static,
    T: Send + 'static,
{
    fn new(jobs: Vec<J>, start: fn(J) -> BoxFuture<T>) -> Self {
        let wakes = Arc::new(Wakes {
            queue: Mutex::new((0..jobs.len()).collect()),
            queued: (0..jobs.len()).map(|_| AtomicBool::new(true)).collect(),
            driver: Mutex::new(None),
        });
        let cells: Box<[Cell<J, T>]> = jobs
            .into_iter()
            .map(|job| Cell {
                state: Mutex::new(State::Waiting(job)),
                answered: AtomicBool::new(false),
                waker: OnceLock::new(),
            })
            .collect();
        Self {
            unanswered: AtomicUsize::new(cells.len()),
            cells,
            start,
            wakes,
            polls: AtomicU64::new(0),
            polling: AtomicUsize::new(0),
            done: Notify::new(),
        }
    }

    /// Marks future `index` answered; false if someone already had.
    fn answer(&self, index: usize) -> bool {
        if self.cells[index].answered.swap(true, Ordering::AcqRel) {
            return false;
        }
        if self.unanswered.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.notify_one();
        }
        true
    }

    fn finish(&self, index: usize, state: &mut State<J, T>, output: Result<T, Panic>) {
        // A future that panicked may panic again when dropped; contain that too.
        let old = std::mem::replace(state, State::Empty);
        let _ = catch_unwind(AssertUnwindSafe(move || drop(old)));
        if self.answer(index) {
            *state = State::Finished(output);
        }
    }

    /// The driver's poll: every future whose waker fired, one after another.
    fn poll_driver(&self, cx: &mut Context<'_>, batch: &mut Vec<usize>) -> Poll<()> {
        {
            let mut driver = lock(&self.wakes.driver);
            if !driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *driver = Some(cx.waker().clone());
            }
        }
        // Two rounds at most: a future woken while it is polled (one out of its
        // cooperative budget, say) is polled at this task's next wake, which its waker
        // has already asked for, rather than in a busy loop here. The buffers are
        // swapped, not reallocated.
        for _ in 0..2 {
            std::mem::swap(batch, &mut *lock(&self.wakes.queue));
            for &index in batch.iter() {
                self.poll_one(index);
            }
            batch.clear();
        }
        if self.unanswered.load(Ordering::Acquire) == 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }

    fn poll_one(&self, index: usize) {
        let cell = &self.cells[index];
        self.wakes.queued[index].store(false, Ordering::Release);
        let mut state = lock(&cell.state);
        if matches!(*state, State::Waiting(_))
            && let State::Waiting(job) = std::mem::replace(&mut *state, State::Empty)
        {
            *state = State::Driven((self.start)(job));
        }
        let State::Driven(future) = &mut *state else {
            return;
        };
        self.polling.store(index, Ordering::Release);
        self.count_poll();
        let polled = catch_unwind(AssertUnwindSafe(|| match cell.waker.get() {
            Some(waker) => future.as_mut().poll(&mut Context::from_waker(waker)),
            None => match future
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop()))
            {
                // Polled again with a real waker, which is what it registers now.
                Poll::Pending => {
                    let waker = cell.waker.get_or_init(|| {
                        Waker::from(Arc::new(CellWake {
                            index,
                            wakes: self.wakes.clone(),
                        }))
                    });
                    future.as_mut().poll(&mut Context::from_waker(waker))
                }
                ready => ready,
            },
        }));
        self.count_poll();
        match polled {
            Ok(Poll::Pending) if !cell.answered.load(Ordering::Acquire) => {}
            // Given up while it was polled: nothing waits for it any more.
            Ok(Poll::Pending) => {
                let old = std::mem::replace(&mut *state, State::Empty);
                let _ = catch_unwind(AssertUnwindSafe(move || drop(old)));
            }
            Ok(Poll::Ready(output)) => self.finish(index, &mut state, Ok(output)),
            Err(panic) => self.finish(index, &mut state, Err(panic)),
        }
    }

    /// Marks the start or the end of a poll. Only the driver writes the count, so a
    /// plain store does, without the cost of a read-modify-write.
    fn count_poll(&self) {
        let seq = self.polls.load(Ordering::Relaxed);
        self.polls.store(seq.wrapping_add(1), Ordering::Release);
    }

    /// Moves every idle future but `stuck`'s to a task of its own. A cell the driver
    /// holds is skipped: it is being polled, so the driver is not stuck after all.
    fn move_others(self: &Arc<Self>, stuck: usize, moved: &mut Vec<AbortOnDropHandle<()>>) {
        for (index, cell) in self.cells.iter().enumerate() {
            if index == stuck {
                continue;
            }
            let Ok(mut state) = cell.state.try_lock() else {
                continue;
            };
            let future = match std::mem::replace(&mut *state, State::Moved) {
                State::Driven(future) => future,
                State::Waiting(job) => (self.start)(job),
                other => {
                    *state = other;
                    continue;
                }
            };
            drop(state);
            let shared = self.clone();
            moved.push(AbortOnDropHandle::new(tokio::spawn(async move {
                let output = CatchUnwind(future).await;
                let mut state = lock(&shared.cells[index].state);
                shared.finish(index, &mut state, output);
            })));
        }
    }

    /// Every outcome, once all are answered. A stalled future's cell is not touched:
    /// the driver may still be inside its poll, holding it.
    fn take_outcomes(&self, stalled: &[bool]) -> Vec<Outcome<T>> {
        self.cells
            .iter()
            .zip(stalled)
            .map(|(cell, &stalled)| {
                if stalled {
                    return Outcome::Stalled;
                }
                match std::mem::replace(&mut *lock(&cell.state), State::Empty) {
                    State::Finished(Ok(output)) => Outcome::Done(output),
                    State::Finished(Err(panic)) => Outcome::Panicked(panic),
                    // Answered means finished, unless stalled; should that ever not
                    // hold, the call still gets an answer.
                    _ => Outcome::Stalled,
                }
            })
            .collect()
    }
}

/// The driver task: polls the batch until every future is answered.
async fn drive<J, T>(shared: Arc<BatchState<J, T>>)
where
    J: Send + 'static,
    T: Send + 'static,
{
    let mut batch = Vec::new();
    std::future::poll_fn(|cx| shared.poll_driver(cx, &mut batch)).await;
}

/// Which futures were woken since the driver last looked, and the driver to wake.
struct Wakes {
    queue: Mutex<Vec<usize>>,
    /// Whether each future is in `queue` already.
    queued: Box<[AtomicBool]>,
    driver: Mutex<Option<Waker>>,
}

/// The waker of the future at `index`.
struct CellWake {
    index: usize,
    wakes: Arc<Wakes>,
}

impl Wake for CellWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.wakes.queued[self.index].swap(true, Ordering::AcqRel) {
            return;
        }
        lock(&self.wakes.queue).push(self.index);
        let driver = lock(&self.wakes.driver).clone();
        if let Some(driver) = driver {
            driver.wake();
        }
    }
}

/// A pinned future's output, or the payload of its panic.
pub(super) struct CatchUnwind<P>(pub(super) P);

impl<P: Future + Unpin> Future for CatchUnwind<P> {
    type Output = Result<P::Output, Panic>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = Pin::new(&mut self.0);
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing here holds an invariant a panic could break.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::{BoxFuture, Outcome, run};
    use std::sync::Arc;

    fn identity<T>(future: BoxFuture<T>) -> BoxFuture<T> {
        future
    }
    use std::time::Duration;

    fn summary<T: Copy>(outcomes: Vec<Outcome<T>>) -> Vec<Option<T>> {
        outcomes
            .into_iter()
            .map(|o| match o {
                Outcome::Done(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn outputs_come_back_in_order_and_a_panic_stays_with_its_future() {
        let delays = [30_u64, 0, 10];
        let futures: Vec<_> = delays
            .iter()
            .enumerate()
            .map(|(i, &ms)| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                assert!(i != 2, "the third future fails");
                i * 10
            })
            .collect();
        let futures = futures
            .into_iter()
            .map(|f| Box::pin(f) as BoxFuture<usize>)
            .collect();
        let outcomes = run(
            futures,
            identity,
            vec![Duration::from_secs(5); 3],
            |_| true,
            &Arc::default(),
        )
        .await;
        assert!(matches!(outcomes[2], Outcome::Panicked(_)));
        assert_eq!(summary(outcomes), vec![Some(0), Some(10), None]);
    }

    #[tokio::test]
    async fn an_empty_batch_is_done_at_once() {
        let outcomes = run(
            Vec::<BoxFuture<()>>::new(),
            identity,
            Vec::new(),
            |_| true,
            &Arc::default(),
        )
        .await;
        assert!(outcomes.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_poll_that_blocks_is_given_up_and_its_neighbours_move_on() {
        let started = std::time::Instant::now();
        let futures: Vec<BoxFuture<u32>> = vec![
            Box::pin(async {
                std::thread::sleep(Duration::from_millis(800));
                1
            }),
            Box::pin(async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                2
            }),
        ];
        let outcomes = run(
            futures,
            identity,
            vec![Duration::from_millis(100), Duration::from_secs(5)],
            |_| true,
            &Arc::default(),
        )
        .await;
        let elapsed = started.elapsed();
        assert!(matches!(outcomes[0], Outcome::Stalled));
        assert_eq!(summary(outcomes)[1], Some(2));
        assert!(elapsed < Duration::from_millis(600), "took {elapsed:?}");
    }
}

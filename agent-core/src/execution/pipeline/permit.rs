//! [`CallPermit`]: a running call's place under the global limit, which the call gives
//! back while it waits on something outside the runtime (its client), and takes again
//! after.

use crate::model::error::ToolError;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// One call's permit of the global limit (`ToolConfig::max_concurrency`), as a
/// [`CallScope`](super::CallScope) hands it to the code around the call. Cheap to clone.
///
/// A call that waits for its client (an MCP tool asking its user, or the client's model)
/// does no work meanwhile; holding its place would let calls that wait starve calls that
/// could run. [`released`](Self::released) gives the place back for the wait.
#[derive(Clone)]
pub struct CallPermit {
    inner: Arc<Cell>,
}

struct Cell {
    /// The limit; none, for a runner without one.
    global: Option<Arc<Semaphore>>,
    held: Mutex<Option<OwnedSemaphorePermit>>,
    /// Set when the call ends: a wait that ends later does not take a place again.
    ended: AtomicBool,
}

impl std::fmt::Debug for CallPermit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallPermit")
            .field("held", &self.is_held())
            .finish()
    }
}

impl CallPermit {
    pub(crate) fn new(global: Option<Arc<Semaphore>>) -> Self {
        Self {
            inner: Arc::new(Cell {
                global,
                held: Mutex::new(None),
                ended: AtomicBool::new(false),
            }),
        }
    }

    /// Whether the call holds its place now.
    pub fn is_held(&self) -> bool {
        self.lock().is_some()
    }

    /// Runs `wait` without holding the call's place under the global limit, then waits
    /// for a place again (after the call's other permits, as every call takes them) and
    /// returns what `wait` gave. A call that did not hold a place just runs `wait`.
    pub async fn released<F: Future>(&self, wait: F) -> F::Output {
        // Dropped here: the place is free for the whole wait.
        let had = self.lock().take().is_some();
        let output = wait.await;
        if let (true, Some(global)) = (had, &self.inner.global) {
            // Our semaphores are never closed; an error cannot happen.
            if let Ok(permit) = global.clone().acquire_owned().await
                && !self.inner.ended.load(Ordering::Acquire)
            {
                *self.lock() = Some(permit);
            }
        }
        output
    }

    /// Takes the call's place, or fails when `token` is cancelled first.
    pub(crate) async fn acquire(
        &self,
        token: &CancellationToken,
        name: &str,
    ) -> Result<(), ToolError> {
        let Some(global) = &self.inner.global else {
            return Ok(());
        };
        let permit = match global.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => tokio::select! {
                biased;
                () = token.cancelled() => return Err(ToolError::cancelled(name)),
                permit = global.clone().acquire_owned() => permit.map_err(|_| {
                    ToolError::execution("the concurrency limiter was shut down")
                })?,
            },
        };
        *self.lock() = Some(permit);
        Ok(())
    }

    /// The call ended: its place is given back for good.
    pub(crate) fn end(&self) {
        self.inner.ended.store(true, Ordering::Release);
        drop(self.lock().take());
    }

    fn lock(&self) -> MutexGuard<'_, Option<OwnedSemaphorePermit>> {
        // An `Option` holds no invariant a panic could break.
        self.inner
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

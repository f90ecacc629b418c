//! [`RunStore`]: where runs wait for a person, and where a run's checkpoints go, so a
//! run outlives the process that started it.

use crate::agent_loop::agent::{Agent, AgentBuilder};
use crate::agent_loop::checkpoint::{Checkpoint, Checkpointer};
use crate::agent_loop::run::{RunState, RunStatus};
use crate::model::error::{AgentError, AgentResult};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// A run as a store keeps it: the sealed state and the columns to find it by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's id.
    pub run_id: String,
    /// The session the run belongs to.
    pub session_id: String,
    /// Where the run stands; [`RunStore::waiting`] lists the runs that are
    /// [`WaitingForHuman`](RunStatus::WaitingForHuman).
    pub status: RunStatus,
    /// The run's revision; the store holds revision `revision - 1` before this one.
    pub revision: u64,
    /// The state as [`Agent::export_state`] wrote it.
    pub state: String,
}

impl RunRecord {
    /// The record of `state`, written by `agent` (sealed when it has a key).
    pub fn new(agent: &Agent, state: &RunState) -> Self {
        Self {
            run_id: state.run_id.clone(),
            session_id: state.session_id.clone(),
            status: state.status,
            revision: state.revision,
            state: agent.export_state(state),
        }
    }

    /// The state inside, read by `agent` ([`Agent::import_state`]: format and seal
    /// checked). A state whose run id or revision is not the record's is refused too: the
    /// sealed state of another run, or an older one of this run, put in this row.
    pub fn import(&self, agent: &Agent) -> Result<RunState, StoreError> {
        let state = agent.import_state(&self.state).map_err(StoreError::State)?;
        if state.run_id != self.run_id || state.revision != self.revision {
            return Err(StoreError::State(AgentError::InvalidState(format!(
                "the run state was refused: the row is run `{}` at revision {}, but its state is run `{}` at revision {}; the row was edited",
                self.run_id, self.revision, state.run_id, state.revision
            ))));
        }
        Ok(state)
    }
}

impl From<Checkpoint<'_>> for RunRecord {
    /// The record a store keeps for `checkpoint`.
    fn from(checkpoint: Checkpoint<'_>) -> Self {
        let state = checkpoint.state;
        Self {
            run_id: state.run_id.clone(),
            session_id: state.session_id.clone(),
            status: state.status,
            revision: state.revision,
            state: checkpoint.sealed.to_owned(),
        }
    }
}

/// A run waiting for a person, as [`RunStore::waiting`] lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingRun {
    /// The run's id.
    pub run_id: String,
    /// The session the run belongs to.
    pub session_id: String,
    /// The revision stored.
    pub revision: u64,
    /// When it was saved, in milliseconds since the Unix epoch.
    pub updated_at_ms: u64,
}

/// Why a store could not do what was asked.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The save or delete expected another revision than the one stored: another process
    /// saved the run first (or deleted it). Load it again to see where it stands.
    Conflict {
        /// The run.
        run_id: String,
        /// The revision the caller expected to find (0: none stored).
        expected: u64,
        /// The revision stored, if the run is stored.
        found: Option<u64>,
    },
    /// The stored state was refused on import (edited, sealed with another key, garbled).
    State(AgentError),
    /// The database failed (connection, I/O, a migration).
    Backend(String),
}

impl StoreError {
    /// A backend failure: `doing` what, and the database's error.
    pub fn backend(doing: &str, error: impl fmt::Display) -> Self {
        Self::Backend(format!("{doing}: {error}"))
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Conflict {
                run_id,
                expected,
                found: Some(found),
            } => write!(
                f,
                "run `{run_id}` is at revision {found}, not {expected}: another process saved it first"
            ),
            Self::Conflict {
                run_id, expected, ..
            } => write!(
                f,
                "run `{run_id}` is not stored, but revision {expected} was expected: another process deleted it"
            ),
            Self::State(error) => fmt::Display::fmt(error, f),
            Self::Backend(message) => write!(f, "run store error: {message}"),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::State(error) => Some(error),
            _ => None,
        }
    }
}

impl From<StoreError> for AgentError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::State(error) => error,
            other => AgentError::InvalidState(other.to_string()),
        }
    }
}

/// Storage for runs, with optimistic concurrency by revision.
///
/// A store keeps each run as the sealed text of [`Agent::export_state`], beside a few
/// columns to find it by (its id, session, status and revision), and never reads inside
/// the text. Saves are guarded by the run's [`revision`](RunState::revision): a save of
/// revision `n` succeeds only over revision `n - 1` (or over nothing, for revision 1),
/// and otherwise fails with [`StoreError::Conflict`]. That is what keeps two processes
/// from both resuming a run:
///
/// 1. Load the run ([`load_run`](Self::load_run)) and decide its pending calls.
/// 2. Save it before running it ([`save_run`](Self::save_run)). Of two processes that
///    loaded the same revision, only one gets past this save; the other gets a conflict
///    and leaves the run alone.
/// 3. Run it with checkpoints to the store ([`AgentBuilder::checkpoints`]): every step is
///    saved as it ends, and a process that lost the run stops at its next checkpoint.
///
/// The `toolwright-store` crate has SQLite and Postgres stores.
#[async_trait]
pub trait RunStore: Send + Sync {
    /// Stores `record` if the stored revision is `record.revision - 1` (nothing stored,
    /// for revision 1); otherwise [`StoreError::Conflict`], and nothing changes.
    async fn save(&self, record: &RunRecord) -> Result<(), StoreError>;

    /// The stored record of `run_id`, if any.
    async fn load(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError>;

    /// The runs waiting for a person (status `WaitingForHuman`), oldest save first.
    async fn waiting(&self) -> Result<Vec<WaitingRun>, StoreError>;

    /// Deletes `run_id` if it is stored at `revision`; otherwise
    /// [`StoreError::Conflict`].
    async fn delete(&self, run_id: &str, revision: u64) -> Result<(), StoreError>;

    /// Saves `state` as its next revision, sealed by `agent`. On success `state.revision`
    /// is the revision stored; on a conflict it is left as it was.
    async fn save_run(&self, agent: &Agent, state: &mut RunState) -> Result<(), StoreError> {
        state.revision += 1;
        let saved = self.save(&RunRecord::new(agent, state)).await;
        if saved.is_err() {
            state.revision -= 1;
        }
        saved
    }

    /// The state of `run_id`, read back by `agent` ([`RunRecord::import`]).
    async fn load_run(&self, agent: &Agent, run_id: &str) -> Result<Option<RunState>, StoreError> {
        match self.load(run_id).await? {
            Some(record) => record.import(agent).map(Some),
            None => Ok(None),
        }
    }
}

#[async_trait]
impl<S: RunStore + ?Sized> RunStore for Arc<S> {
    async fn save(&self, record: &RunRecord) -> Result<(), StoreError> {
        (**self).save(record).await
    }

    async fn load(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        (**self).load(run_id).await
    }

    async fn waiting(&self) -> Result<Vec<WaitingRun>, StoreError> {
        (**self).waiting().await
    }

    async fn delete(&self, run_id: &str, revision: u64) -> Result<(), StoreError> {
        (**self).delete(run_id, revision).await
    }
}

/// Checkpoints into a [`RunStore`], each one a save of the next revision.
struct StoreCheckpoints(Arc<dyn RunStore>);

#[async_trait]
impl Checkpointer for StoreCheckpoints {
    async fn checkpoint(&self, checkpoint: Checkpoint<'_>) -> AgentResult<()> {
        Ok(self.0.save(&RunRecord::from(checkpoint)).await?)
    }
}

impl AgentBuilder {
    /// Saves every step of every run to `store` ([`on_checkpoint`](Self::on_checkpoint)
    /// with a store). A save that conflicts (another process took the run) stops the run
    /// with an error.
    pub fn checkpoints(self, store: Arc<dyn RunStore>) -> Self {
        self.on_checkpoint(StoreCheckpoints(store))
    }
}

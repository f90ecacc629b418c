//! Checkpoint hooks: one after every step, an error stops the run, and every call has
//! a stable idempotency key.

mod support;

use std::sync::{Arc, Mutex};
use support::{KEY, paused, payment_agent};
use toolwright_core::{
    AgentError, AgentResult, RunOutcome, ToolContext, async_trait,
    run::{Checkpoint, CheckpointStep, Checkpointer, RunStatus},
};

/// What a checkpoint saw: its step, the revision and status, the sealed state.
type Seen = (CheckpointStep, u64, RunStatus, String);

/// Keeps what each checkpoint saw; fails from checkpoint `fail_at` on.
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<Seen>>>,
    fail_at: Option<u64>,
}

#[async_trait]
impl Checkpointer for Recorder {
    async fn checkpoint(&self, checkpoint: Checkpoint<'_>) -> AgentResult<()> {
        let state = checkpoint.state;
        if self.fail_at.is_some_and(|at| state.revision >= at) {
            return Err(AgentError::InvalidState("the store is gone".into()));
        }
        self.seen.lock().unwrap().push((
            checkpoint.step,
            state.revision,
            state.status,
            checkpoint.sealed.to_owned(),
        ));
        Ok(())
    }
}

fn steps(recorder: &Recorder) -> Vec<(CheckpointStep, u64, RunStatus)> {
    recorder
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|(step, revision, status, _)| (*step, *revision, *status))
        .collect()
}

#[tokio::test]
async fn every_step_is_checkpointed_with_the_next_revision_and_the_sealed_state() {
    let recorder = Recorder::default();
    // The same payment agent, with a checkpointer.
    let agent = support::payment_builder(Some(KEY))
        .on_checkpoint(recorder.clone())
        .build()
        .unwrap();
    let mut run = paused(&agent).await;
    assert_eq!(
        steps(&recorder),
        [
            (CheckpointStep::ModelAnswered, 1, RunStatus::Ready),
            (CheckpointStep::Paused, 2, RunStatus::WaitingForHuman),
        ]
    );
    run.approve("c1").unwrap();
    agent.run(&mut run).await.unwrap();
    assert_eq!(
        steps(&recorder)[2..],
        [
            (CheckpointStep::ToolResults, 3, RunStatus::Ready),
            (CheckpointStep::Finished, 4, RunStatus::Finished),
        ]
    );
    assert_eq!(run.revision, 4);
    // Each checkpoint carries the state as export_state writes it, and it reads back.
    let (_, _, _, last) = recorder.seen.lock().unwrap().last().cloned().unwrap();
    assert_eq!(agent.import_state(&last).unwrap(), run);
}

#[tokio::test]
async fn a_failed_checkpoint_stops_the_run_before_the_next_tool_runs() {
    let recorder = Recorder {
        fail_at: Some(3),
        ..Recorder::default()
    };
    let agent = support::payment_builder(Some(KEY))
        .on_checkpoint(recorder.clone())
        .build()
        .unwrap();
    let mut run = paused(&agent).await;
    run.approve("c1").unwrap();
    let error = agent.run(&mut run).await.unwrap_err();
    assert!(error.to_string().contains("the store is gone"), "{error}");
    assert_eq!(
        run.revision, 2,
        "a failed checkpoint does not advance the revision"
    );
    assert!(!matches!(
        agent.run(&mut run).await,
        Ok(RunOutcome::Finished { .. })
    ));
}

#[test]
fn the_idempotency_key_is_the_run_and_the_call() {
    let ctx = ToolContext::new("session-1").with_call_id("call_7");
    assert_eq!(ctx.idempotency_key(), "session-1:call_7");
    let ctx = ctx.with_run_id("run_42");
    assert_eq!(ctx.idempotency_key(), "run_42:call_7");
}

#[tokio::test]
async fn without_a_checkpointer_the_revision_stays() {
    let agent = payment_agent(None);
    let run = paused(&agent).await;
    assert_eq!(run.revision, 0);
}

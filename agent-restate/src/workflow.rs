//! [`AgentRuns`]: the Restate workflow `AgentRun`, one workflow per run id, and what its
//! handlers take and answer.

use crate::journal::RestateJournal;
use crate::now_ms;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use toolwright_core::Content;
use toolwright_core::agent::{Agent, AgentError};
use toolwright_core::exec::RunControl;
use toolwright_core::run::{
    ApprovalRecord, ApprovalVerdict, Decider, PendingCall, PendingKind, RunOutcome, RunState,
    RunStatus,
};

/// Where the workflow keeps the run (sealed, as [`Agent::export_state`] writes it), for
/// the shared handlers to read.
const STATE: &str = "run";
/// The promise `cancel` resolves.
const CANCEL: &str = "cancel";
/// Who denies a call nobody decided on in time.
const TIMER: &str = "toolwright-restate (approval timeout)";

fn approval_promise(call_id: &str) -> String {
    format!("approval:{call_id}")
}

fn output_promise(call_id: &str) -> String {
    format!("output:{call_id}")
}

/// What a call's promise holds: the decision or output, and the invocation that
/// resolved it.
///
/// Restate keeps the first resolution of a promise and drops later ones without telling
/// their sender, so two reviewers deciding at once would both be told they decided. Each
/// handler reads the promise back after resolving it ([`resolve_once`]) and succeeds only
/// if the resolution there is its own.
#[derive(Serialize, Deserialize)]
struct Resolution<T> {
    value: T,
    invocation: String,
}

/// Resolves promise `name` with `value`: whether this invocation's resolution is the
/// one kept (a concurrent one may have come first).
async fn resolve_once<T>(
    ctx: &SharedWorkflowContext<'_>,
    name: &str,
    value: T,
) -> Result<bool, TerminalError>
where
    T: Serialize + serde::de::DeserializeOwned + 'static,
{
    let invocation = ctx.invocation_id().to_owned();
    ctx.resolve_promise(
        name,
        Json(Resolution {
            value,
            invocation: invocation.clone(),
        }),
    );
    let kept = ctx.peek_promise::<Json<Resolution<T>>>(name).await?;
    Ok(kept.is_some_and(|kept| kept.into_inner().invocation == invocation))
}

/// What starts a run: the user's message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartRun {
    /// The user's message.
    pub input: String,
    /// The session the run belongs to (tools see it); the run id when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// A person's decision on a call waiting for approval, as `approve` takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The call decided on.
    pub call_id: String,
    /// Approved or denied.
    pub decision: ApprovalVerdict,
    /// Who decided, and why (a denial's reason is what the model reads).
    pub decider: Decider,
    /// Arguments to run the call with instead of the model's (approvals only); they
    /// must fit the tool's schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// When it was decided, in milliseconds since the Unix epoch: set by `approve`
    /// (journaled), whatever the sender put here.
    #[serde(default)]
    pub at_ms: u64,
}

/// The output of a call waiting for it (an external tool's, or one an
/// `on_tool_called` hook paused for a person), as `supply` takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuppliedOutput {
    /// The call whose output this is.
    pub call_id: String,
    /// Its output, as the tool would have returned it.
    pub output: Vec<Content>,
}

/// A run as the workflow last recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The run id (the workflow key).
    pub run_id: String,
    /// Where the run stands.
    pub status: RunStatus,
    /// The final answer, once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The calls waiting for a decision or for output.
    #[serde(default)]
    pub pending: Vec<PendingCall>,
    /// The decisions taken, oldest first.
    #[serde(default)]
    pub approvals: Vec<ApprovalRecord>,
    /// What ended a failed run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RunReport {
    fn of(state: &RunState) -> Self {
        Self {
            run_id: state.run_id.clone(),
            status: state.status,
            answer: state.answer().map(str::to_owned),
            pending: state.pending(),
            approvals: state.approvals.clone(),
            error: state.error.clone(),
        }
    }
}

/// The Restate workflow `AgentRun` serving an [`Agent`]'s runs: bind it to a Restate
/// endpoint (`Endpoint::builder().bind(AgentRuns::new(agent))`). Every worker serving
/// the same runs holds an agent built the same way (same tools, same state key).
#[derive(Clone)]
pub struct AgentRuns {
    agent: Arc<Agent>,
    approval_timeout: Option<Duration>,
}

impl AgentRuns {
    /// Runs of `agent`.
    pub fn new(agent: Arc<Agent>) -> Self {
        Self {
            agent,
            approval_timeout: None,
        }
    }

    /// Denies a call waiting for approval when nobody decided within `timeout`, on a
    /// durable timer (it fires after a worker restart too).
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = Some(timeout);
        self
    }

    fn load(&self, sealed: Option<String>, run_id: &str) -> Result<RunState, TerminalError> {
        let sealed = sealed.ok_or_else(|| {
            TerminalError::new_with_code(404, format!("no run `{run_id}` has started"))
        })?;
        self.agent.import_state(&sealed).map_err(|error| {
            TerminalError::new_with_code(500, format!("the stored run `{run_id}`: {error}"))
        })
    }

    /// Applies `decision` to `state`, as `approve_by`/`deny_by`/`approve_with` do.
    fn apply(&self, state: &mut RunState, decision: &Decision) -> Result<(), AgentError> {
        let decider = decision.decider.clone();
        match (decision.decision, &decision.arguments) {
            (ApprovalVerdict::Approved, Some(arguments)) => {
                self.agent
                    .approve_with(state, &decision.call_id, arguments.clone(), decider)?
            }
            (ApprovalVerdict::Approved, None) => state.approve_by(&decision.call_id, decider)?,
            (ApprovalVerdict::Denied, Some(_)) => {
                return Err(AgentError::InvalidState(
                    "a denial takes no arguments: only an approval can correct them".to_owned(),
                ));
            }
            (ApprovalVerdict::Denied, None) => state.deny_by(&decision.call_id, decider)?,
            (other, _) => {
                return Err(AgentError::InvalidState(format!(
                    "unknown decision {other:?}"
                )));
            }
        }
        // The time `approve` journaled, so a replay records the same.
        if let Some(record) = state.approvals.last_mut() {
            record.at_ms = decision.at_ms;
        }
        Ok(())
    }

    /// Waits for the decision on `call`: the person's, a cancellation (`None`), or the
    /// timeout's denial.
    async fn decision(
        &self,
        ctx: &WorkflowContext<'_>,
        call: &PendingCall,
    ) -> Result<Option<Decision>, TerminalError> {
        let name = approval_promise(&call.call.id);
        let Some(timeout) = self.approval_timeout else {
            return restate_sdk::select! {
                decided = ctx.promise::<Json<Resolution<Decision>>>(&name) => Ok(Some(decided?.into_inner().value)),
                cancelled = ctx.promise::<Json<()>>(CANCEL) => cancelled.map(|_| None),
            };
        };
        restate_sdk::select! {
            decided = ctx.promise::<Json<Resolution<Decision>>>(&name) => Ok(Some(decided?.into_inner().value)),
            cancelled = ctx.promise::<Json<()>>(CANCEL) => cancelled.map(|_| None),
            expired = ctx.sleep(timeout) => {
                expired?;
                let at_ms = ctx.run(|| async { Ok(now_ms()) }).name("now").await?;
                let denial = Decision {
                    call_id: call.call.id.clone(),
                    decision: ApprovalVerdict::Denied,
                    decider: Decider::new(TIMER).reason(format!(
                        "nobody decided within {} ms",
                        timeout.as_millis()
                    )),
                    arguments: None,
                    at_ms,
                };
                // Resolved like a reviewer's decision, so that exactly one of the two
                // holds: a reviewer deciding from now on is told it was decided, and one
                // who decided just before the timer wins over it.
                ctx.resolve_promise(&name, Json(Resolution {
                    value: denial,
                    invocation: ctx.invocation_id().to_owned(),
                }));
                let kept = ctx.promise::<Json<Resolution<Decision>>>(&name).await?;
                Ok(Some(kept.into_inner().value))
            },
        }
    }

    /// Waits for the output of `call`, or a cancellation (`None`).
    async fn output(
        &self,
        ctx: &WorkflowContext<'_>,
        call: &PendingCall,
    ) -> Result<Option<SuppliedOutput>, TerminalError> {
        let name = output_promise(&call.call.id);
        restate_sdk::select! {
            supplied = ctx.promise::<Json<Resolution<SuppliedOutput>>>(&name) => Ok(Some(supplied?.into_inner().value)),
            cancelled = ctx.promise::<Json<()>>(CANCEL) => cancelled.map(|_| None),
        }
    }

    fn save(&self, ctx: &WorkflowContext<'_>, state: &RunState) {
        ctx.set(STATE, self.agent.export_state(state));
    }
}

fn decided_already(call_id: &str) -> TerminalError {
    TerminalError::new_with_code(409, format!("call `{call_id}` was decided already"))
}

fn refused(code: u16, error: AgentError) -> TerminalError {
    TerminalError::new_with_code(code, error.to_string())
}

#[restate_sdk::workflow(name = "AgentRun")]
impl AgentRuns {
    /// Runs the run to its end: a final answer, a failure, the turn limit, or a
    /// cancellation; waits for each decision it needs on the way.
    #[handler]
    async fn run(
        &self,
        ctx: WorkflowContext<'_>,
        start: Json<StartRun>,
    ) -> Result<Json<RunReport>, HandlerError> {
        let start = start.into_inner();
        let run_id = ctx.key().to_owned();
        let mut state = self.agent.start(start.input);
        state.run_id = run_id.clone();
        state.session_id = start.session_id.unwrap_or(run_id);
        let journal = RestateJournal::new(&ctx);
        let control = RunControl::new();
        'run: loop {
            self.save(&ctx, &state);
            let pending = match self
                .agent
                .run_journaled(&mut state, &control, &journal)
                .await
            {
                Ok(RunOutcome::Paused { pending }) => pending,
                Ok(_) => break,
                Err(_) if journal.was_cancelled() => {
                    state.status = RunStatus::Cancelled;
                    break;
                }
                Err(AgentError::Journal(message)) => {
                    return Err(TerminalError::new(message).into());
                }
                Err(error) => {
                    // A failed run is an answer, not a retry: the state says why.
                    state.status = RunStatus::Failed;
                    state.error.get_or_insert_with(|| error.to_string());
                    break;
                }
            };
            self.save(&ctx, &state);
            for call in pending {
                let applied = if call.kind == PendingKind::Approval {
                    let Some(decision) = self.decision(&ctx, &call).await? else {
                        state.status = RunStatus::Cancelled;
                        break 'run;
                    };
                    self.apply(&mut state, &decision)
                } else {
                    let Some(supplied) = self.output(&ctx, &call).await? else {
                        state.status = RunStatus::Cancelled;
                        break 'run;
                    };
                    state.supply_output(&supplied.call_id, supplied.output)
                };
                if let Err(error) = applied {
                    // `approve` and `supply` checked it against the same run: only a
                    // different agent on this worker gets here.
                    return Err(refused(500, error).into());
                }
            }
        }
        self.save(&ctx, &state);
        Ok(Json(RunReport::of(&state)))
    }

    /// Decides a call waiting for approval: refused when no such call waits (404), when
    /// it was decided already (409), or when corrected arguments do not fit the tool's
    /// schema (422).
    #[handler]
    async fn approve(
        &self,
        ctx: SharedWorkflowContext<'_>,
        decision: Json<Decision>,
    ) -> Result<Json<ApprovalRecord>, HandlerError> {
        let mut decision = decision.into_inner();
        let sealed = ctx.get::<String>(STATE).await?;
        let mut state = self.load(sealed, ctx.key())?;
        let call_id = decision.call_id.clone();
        if state
            .approvals
            .iter()
            .any(|record| record.call_id == call_id)
        {
            return Err(decided_already(&call_id).into());
        }
        let name = approval_promise(&call_id);
        if ctx
            .peek_promise::<Json<Resolution<Decision>>>(&name)
            .await?
            .is_some()
        {
            return Err(decided_already(&call_id).into());
        }
        if !state
            .pending()
            .iter()
            .any(|p| p.call.id == call_id && p.kind == PendingKind::Approval)
        {
            return Err(TerminalError::new_with_code(
                404,
                format!(
                    "no call `{call_id}` of run `{}` is waiting for approval",
                    state.run_id
                ),
            )
            .into());
        }
        decision.at_ms = ctx.run(|| async { Ok(now_ms()) }).name("now").await?;
        // Checked on a copy, as the run will apply it: a decision that would not apply
        // is refused here, to the person who sent it.
        self.apply(&mut state, &decision).map_err(|error| {
            let code = if error.as_tool_error().is_some() {
                422
            } else {
                409
            };
            refused(code, error)
        })?;
        let record = state.approvals.last().cloned().ok_or_else(|| {
            TerminalError::new_with_code(500, "the decision left no record".to_owned())
        })?;
        if resolve_once(&ctx, &name, decision).await? {
            Ok(Json(record))
        } else {
            Err(decided_already(&call_id).into())
        }
    }

    /// Supplies the output of a call waiting for it: refused when no such call waits
    /// (404) or when its output was supplied already (409).
    #[handler]
    async fn supply(
        &self,
        ctx: SharedWorkflowContext<'_>,
        supplied: Json<SuppliedOutput>,
    ) -> Result<(), HandlerError> {
        let supplied = supplied.into_inner();
        let call_id = supplied.call_id.clone();
        let name = output_promise(&call_id);
        let already = || {
            TerminalError::new_with_code(
                409,
                format!("the output of call `{call_id}` was supplied already"),
            )
        };
        if ctx
            .peek_promise::<Json<Resolution<SuppliedOutput>>>(&name)
            .await?
            .is_some()
        {
            return Err(already().into());
        }
        // Checked on a copy, as the run will apply it.
        let sealed = ctx.get::<String>(STATE).await?;
        let mut state = self.load(sealed, ctx.key())?;
        state
            .supply_output(&call_id, supplied.output.clone())
            .map_err(|error| refused(404, error))?;
        if resolve_once(&ctx, &name, supplied).await? {
            Ok(())
        } else {
            Err(already().into())
        }
    }

    /// Cancels a run waiting for a decision.
    #[handler]
    async fn cancel(&self, ctx: SharedWorkflowContext<'_>) -> Result<(), HandlerError> {
        ctx.resolve_promise(CANCEL, Json(()));
        Ok(())
    }

    /// The run as the workflow last recorded it.
    #[handler]
    async fn status(
        &self,
        ctx: SharedWorkflowContext<'_>,
    ) -> Result<Json<RunReport>, HandlerError> {
        let sealed = ctx.get::<String>(STATE).await?;
        let state = self.load(sealed, ctx.key())?;
        Ok(Json(RunReport::of(&state)))
    }
}

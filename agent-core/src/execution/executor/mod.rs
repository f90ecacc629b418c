//! [`Executor`]: runs one model turn's tool calls with every policy — exposure,
//! approval, timeouts, cancellation, concurrency limits, error policy, validators and
//! the output budget — and returns the results in call order.
//!
//! Each call takes the one path of the call pipeline ([`CallRunner`]); what the executor
//! adds is the turn:
//! 1. [`Executor::execute`] plans each call: a repeated call id ends it at once, the
//!    rest go through the pipeline's planning (the offered list, exposure, arguments,
//!    approval, external tools); a call needing approval and not approved yet, an
//!    external tool's call, or one an `on_tool_called` hook pauses is returned as
//!    pending, without running.
//! 2. The rest are split into batches: consecutive calls that may run in parallel share
//!    a batch, a call that must run alone has one of its own. Batches run one after
//!    another, their calls registered with the run's [`RunControl`] so any can be
//!    cancelled by id.
//!
//! A batch's calls are polled one after another in one task, so a call that finishes
//! at once, as most do, costs no task, timer or thread hop of its own (see the
//! pipeline's watchdog). What a turn runs with is `turn.rs`, and the application's
//! hooks are `hooks.rs`.

mod hooks;
mod turn;

pub use hooks::{AppContext, CallHookFn, HookDecision, ResponseHookFn};
pub use turn::TurnContext;

use crate::execution::control::RunControl;
use crate::execution::inflight::InFlight;
use crate::execution::pipeline::{
    ApprovalDecision, ApprovalRule, Approver, Batch, CallRunner, Plan, ReadyCall, RunningTurn,
    announce_settled, unanswered,
};
use crate::model::config::ToolConfig;
use crate::model::content::Content;
use crate::model::context::{ActivationContext, ToolContext};
use crate::model::error::ToolError;
use crate::model::message::ToolCall;
use crate::model::outcome::{Settled, ToolCallResult, ToolOutcome};
use crate::model::set::ToolSet;
use crate::model::tool::Tool;
use async_trait::async_trait;
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

/// Runs tool calls for a model. Cheap to clone; clones share the concurrency limits,
/// so the global limit holds across every run using this executor.
#[derive(Clone)]
pub struct Executor {
    runner: CallRunner,
    on_tool_called: Option<CallHookFn>,
    on_response_received: Option<ResponseHookFn>,
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("runner", &self.runner)
            .finish_non_exhaustive()
    }
}

impl Executor {
    /// An executor for `tools` under `config`.
    pub fn new(tools: Arc<ToolSet>, config: ToolConfig) -> Self {
        Self {
            runner: CallRunner::new(tools, config),
            on_tool_called: None,
            on_response_received: None,
        }
    }

    /// The executor with an application-wide approval rule; see [`ApprovalRule`].
    pub fn with_approval_rule(mut self, approval: ApprovalRule) -> Self {
        self.runner = self.runner.with_approval_rule(approval);
        self
    }

    /// The executor with a hook deciding, before each call runs, whether it runs,
    /// pauses for a person, or is answered by the application; see [`CallHookFn`].
    pub fn with_on_tool_called(mut self, hook: CallHookFn) -> Self {
        self.on_tool_called = Some(hook);
        self
    }

    /// The executor with a hook checking or transforming output the application
    /// supplies; see [`ResponseHookFn`].
    pub fn with_on_response_received(mut self, hook: ResponseHookFn) -> Self {
        self.on_response_received = Some(hook);
        self
    }

    /// The tools this executor runs.
    pub fn tools(&self) -> &Arc<ToolSet> {
        self.runner.tools()
    }

    /// The configuration.
    pub fn config(&self) -> &ToolConfig {
        self.runner.config()
    }

    /// The call pipeline this executor runs each call through.
    pub fn runner(&self) -> &CallRunner {
        &self.runner
    }

    /// Whether `call` of `tool` must wait for approval: the application's rule first,
    /// then the tool's, then the destructive default.
    pub fn needs_approval(&self, call: &ToolCall, tool: &dyn Tool) -> bool {
        self.runner.needs_approval(call, tool)
    }

    /// Runs one turn's calls and returns one result per call, in call order.
    ///
    /// Each result carries its call. Calls given by value (a `Vec<ToolCall>`) are moved
    /// into their results; given by reference (`&calls`, `&[call]`), each is copied
    /// once, arguments included.
    ///
    /// Calls waiting for approval (and not in `turn`'s approved set), calls of external
    /// tools and calls an `on_tool_called` hook pauses are returned pending, without
    /// running; the others run. A call's timeout counts from when it starts running,
    /// not while it waits for a concurrency permit.
    ///
    /// A batch's calls are polled one after another in one task; when a tool holds its
    /// poll for more than 10 ms (it blocks its thread, or computes), the batch's other
    /// calls move to tasks of their own, and a call whose poll outlives its timeout is
    /// answered as timed out without waiting for it. Nothing started here is left
    /// running when this returns, or when this future is dropped, except a tool still
    /// blocking its thread, which is dropped as soon as it returns control. That takes a
    /// second runtime thread: on a current-thread runtime, nothing can answer while a
    /// tool blocks the only one, so its call is answered when the tool returns control,
    /// as a timeout if that is past its deadline.
    ///
    /// # Panics
    ///
    /// When polled outside a Tokio runtime whose time driver is enabled (`enable_time`,
    /// or `enable_all`): the calls run in its tasks and under its timers.
    pub async fn execute<'a>(
        &self,
        calls: impl Into<Cow<'a, [ToolCall]>>,
        turn: &TurnContext,
    ) -> Vec<ToolCallResult> {
        let calls = calls.into().into_owned();
        let mut answers: Vec<Option<Settled>> = Vec::with_capacity(calls.len());
        answers.resize_with(calls.len(), || None);
        let mut to_run = Vec::with_capacity(calls.len());
        // Seeded per process: the ids are the model's, so they must not pick collisions.
        let mut seen =
            HashSet::with_capacity_and_hasher(calls.len(), foldhash::fast::RandomState::default());
        let mut activation = None;
        for (index, call) in calls.iter().enumerate() {
            let repeated = !seen.insert(call.id.as_str());
            match self.plan(call, repeated, turn, &mut activation).await {
                Plan::Done(answer) => {
                    if !answer.outcome.is_pending() {
                        announce_settled(call, &answer.outcome, &turn.sinks);
                    }
                    answers[index] = Some(answer);
                }
                Plan::Run(position) => to_run.push((index, position)),
            }
        }
        drop(seen);
        let calls = if to_run.is_empty() {
            calls
        } else {
            self.run(calls, to_run, &mut answers, turn).await
        };
        answers
            .into_iter()
            .zip(calls)
            .map(|(answer, call)| {
                // Every answer is filled in above.
                let answer = answer.unwrap_or_else(unanswered);
                self.runner.error_budget(answer).answer(call)
            })
            .collect()
    }

    /// Runs the planned calls, batch after batch, storing each answer at its call's
    /// index, and gives the calls back.
    async fn run(
        &self,
        calls: Vec<ToolCall>,
        to_run: Vec<(usize, usize)>,
        answers: &mut [Option<Settled>],
        turn: &TurnContext,
    ) -> Vec<ToolCall> {
        // What every call's context shares, built once for the turn.
        let mut base = ToolContext::new(turn.session_id.as_str())
            .with_state(AppContext(turn.app_context.clone()));
        if let Some(workspace) = &turn.workspace {
            base = base.with_workspace(workspace.clone());
        }
        if let Some(run_id) = &turn.run_id {
            base = base.with_run_id(run_id.as_str());
        }
        let tools = self.runner.tools();
        let base = tools.context_for(&base).into_owned();
        // Every runnable call is cancellable from now on, including those still queued
        // behind a batch.
        let inflight = Arc::new(InFlight::new(
            to_run.iter().map(|&(index, position)| {
                (calls[index].id.as_str(), tools.tool_at(position).clone())
            }),
            turn.sinks.clone(),
        ));
        let running = self
            .runner
            .running_turn(calls, inflight, base, turn.sinks.clone(), None);
        let registered = Registered::new(&turn.control, &running.inflight);
        let mut batch = Batch::with_capacity(to_run.len());
        for (at, (index, position)) in to_run.into_iter().enumerate() {
            let call = ReadyCall {
                turn: running.clone(),
                index,
                at,
                position,
            };
            if self.runner.policy(position).parallel {
                batch.push(call);
            } else {
                std::mem::take(&mut batch).run(answers).await;
                let mut alone = Batch::default();
                alone.push(call);
                alone.run(answers).await;
            }
        }
        batch.run(answers).await;
        drop(registered);
        RunningTurn::into_calls(running)
    }

    /// The result of an external call whose output the application supplied: validated
    /// and cut to the budget like any other.
    pub fn complete_external(&self, call: &ToolCall, output: Vec<Content>) -> ToolCallResult {
        let tools = self.runner.tools();
        let Some(position) = tools.position(&call.name) else {
            // Named as `execute` names them: Hidden and Deferred tools are never listed.
            let error = ToolError::unknown_tool(&call.name, tools.direct_names());
            return self.runner.failed(error).answer(call.clone());
        };
        let tool = tools.tool_at(position);
        let on_error = self.runner.policy(position).on_error;
        let output = match &self.on_response_received {
            Some(hook) => hook(call, output),
            None => Ok(output),
        };
        let outcome = match output.and_then(|output| {
            tool.validate_output(&output)?;
            Ok(output)
        }) {
            Ok(output) => ToolOutcome::Ok(self.runner.budget(output)),
            Err(reason) => ToolOutcome::Err(ToolError::execution(format!(
                "Invalid tool output: {reason}"
            ))),
        };
        self.runner
            .error_budget(Settled::new(outcome, on_error))
            .answer(call.clone())
    }

    async fn plan(
        &self,
        call: &ToolCall,
        repeated: bool,
        turn: &TurnContext,
        activation: &mut Option<ActivationContext>,
    ) -> Plan {
        if repeated {
            return Plan::Done(self.runner.failed(ToolError::invalid_arguments(format!(
                "call id `{}` was used twice in one turn; each call needs its own id",
                call.id
            ))));
        }
        let tools = self.runner.tools();
        let make_activation = || ActivationContext {
            session_id: turn.session_id.clone(),
            // Without a list of its own, the turn offers what the set does: its Direct
            // tools (as `ToolSet::call` sees them).
            current_tools: match &turn.offered {
                Some(offered) => offered.iter().cloned().collect(),
                None => tools.direct_names().map(str::to_owned).collect(),
            },
            workspace: turn.workspace.clone().unwrap_or_default(),
        };
        // A call a person approved runs without the rules being asked again; any other
        // that needs approval waits, and the run pauses until a person decides.
        let planned = self
            .runner
            .plan(
                call,
                turn.offered.as_ref(),
                activation,
                make_activation,
                turn.approved.contains(&call.id),
                &Pause,
                None,
            )
            .await;
        let Plan::Run(position) = planned else {
            return planned;
        };
        let Some(hook) = &self.on_tool_called else {
            return planned;
        };
        let tool = tools.tool_at(position);
        let outcome = match hook(call, tool.as_ref()) {
            HookDecision::Run => return planned,
            HookDecision::Pause => ToolOutcome::PendingInput,
            HookDecision::Respond(output) => match tool.validate_output(&output) {
                Ok(()) => ToolOutcome::Ok(self.runner.budget(output)),
                Err(reason) => ToolOutcome::Err(ToolError::execution(format!(
                    "Invalid tool output: {reason}"
                ))),
            },
        };
        Plan::Done(Settled::new(outcome, self.runner.policy(position).on_error))
    }
}

/// The agent's approver: a call that needs approval and is not approved yet waits (the
/// run pauses until a person decides, then runs again with the call approved).
struct Pause;

#[async_trait]
impl Approver for Pause {
    async fn approve(&self, _call: &ToolCall, _tool: &dyn Tool) -> ApprovalDecision {
        ApprovalDecision::Waiting
    }
}

/// Registers a turn's calls with the control, and unregisters them however `execute`
/// ends, dropped mid-turn included, so no stale id stays cancellable.
struct Registered<'a> {
    control: &'a RunControl,
    calls: &'a Arc<InFlight>,
}

impl<'a> Registered<'a> {
    fn new(control: &'a RunControl, calls: &'a Arc<InFlight>) -> Self {
        control.register_turn(calls.clone());
        Self { control, calls }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.control.unregister_turn(self.calls);
    }
}

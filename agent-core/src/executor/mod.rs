//! [`Executor`]: runs one model turn's tool calls with every policy — exposure,
//! approval, timeouts, cancellation, concurrency limits, error policy, validators and
//! the output budget — and returns the results in call order.
//!
//! Where a call goes, in order:
//! 1. [`Executor::execute`] plans each call: a name that is not offered, arguments that
//!    are not an object, or a repeated call id end it at once; a call needing approval,
//!    then an external tool's call, or one an `on_tool_called` hook pauses is returned
//!    as pending, without running (an external call that needs approval waits for the
//!    approval first, then for the application's output).
//! 2. The rest are split into batches: consecutive calls that may run in parallel share
//!    a batch, a call that must run alone has one of its own. Batches run one after
//!    another.
//! 3. In a batch each call waits for its permits (exclusion group, then per-tool limit,
//!    then the global limit — always in this order, so waits cannot form a cycle), then
//!    the tool runs under its timeout and its token; a panic becomes the call's error.
//! 4. The output is validated, cut to the budget, and the error policy applied.
//!
//! A batch's calls are polled one after another in one task (`batch.rs`), so a call
//! that finishes at once, as most do, costs no task, timer or thread hop of its own.
//! The caller watches that task: when one poll runs long (a tool blocking its thread,
//! or computing), the batch's other calls move to tasks of their own, and a poll that
//! outlives its call's timeout is answered as a timeout without waiting for it.
//!
//! Steps 1 and 2 are here; step 3 and 4, one call's life, are in `call.rs`. What a
//! turn runs with is `turn.rs`, what comes back is `outcome.rs`, and the application's
//! hooks are `hooks.rs`.

mod batch;
mod call;
mod hooks;
mod limits;
mod outcome;
mod turn;

pub(crate) use call::announce_settled;
pub use hooks::{AppContext, ApprovalFn, CallHookFn, HookDecision, NextTurn, ResponseHookFn};
pub use limits::ToolLimits;
pub use outcome::{ToolCallResult, ToolOutcome, error_content};
pub use turn::TurnContext;

use crate::args::json_kind;
use crate::calls::TurnCalls;
use crate::config::{ParallelRule, ToolConfig};
use crate::content::Content;
use crate::context::{ActivationContext, ToolContext};
use crate::control::RunControl;
use crate::error::{ToolError, ToolErrorKind};
use crate::llm::ToolCall;
use crate::set::ToolSet;
use crate::tool::{Approval, ErrorPolicy, Tool, ToolExposure};
use crate::truncate::{truncate_error, truncate_output};
use batch::{BoxFuture, Outcome};
use call::{Job, TurnShared, drive};
pub(crate) use outcome::{Reports, Settled};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Runs tool calls for a model. Cheap to clone; clones share the concurrency limits,
/// so the global limit holds across every run using this executor.
#[derive(Clone)]
pub struct Executor {
    tools: Arc<ToolSet>,
    config: Arc<ToolConfig>,
    approval: Option<ApprovalFn>,
    on_tool_called: Option<CallHookFn>,
    on_response_received: Option<ResponseHookFn>,
    /// One per tool, in the set's order.
    facts: Arc<[ToolFacts]>,
}

/// What the executor needs of a tool's declarations (and the config), read once when
/// the executor is made rather than through several calls per call.
struct ToolFacts {
    exposure: ToolExposure,
    external: bool,
    destructive: bool,
    parallel: bool,
    retries: u32,
    timeout_ms: u64,
    policy: ErrorPolicy,
    /// In acquisition order: exclusion group, per-tool limit, global limit.
    permits: [Option<Arc<Semaphore>>; 3],
}

impl fmt::Debug for Executor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executor")
            .field("tools", &self.tools)
            .field("config", &self.config)
            .field("approval_fn", &self.approval.is_some())
            .finish()
    }
}

enum Plan {
    /// Answered without running.
    Done(Settled),
    /// Runs the tool at this position in the set.
    Run(usize),
}

impl Executor {
    /// An executor for `tools` under `config`.
    pub fn new(tools: Arc<ToolSet>, config: ToolConfig) -> Self {
        let global = Arc::new(Semaphore::new(
            // tokio's semaphores hold at most MAX_PERMITS; more is no limit anyway.
            config.max_concurrency.clamp(1, Semaphore::MAX_PERMITS),
        ));
        let facts = tools
            .iter()
            .zip(ToolLimits::of_each(&tools))
            .map(|(tool, ToolLimits { group, per_tool })| {
                let concurrency = tool.concurrency();
                let hints = tool.annotations();
                let parallel = match concurrency.sequential {
                    Some(sequential) => !sequential,
                    None => match config.parallel {
                        ParallelRule::EffectHints => hints.is_read_only() || hints.is_idempotent(),
                        ParallelRule::All => true,
                        ParallelRule::None => false,
                    },
                };
                ToolFacts {
                    exposure: tool.exposure(),
                    external: tool.is_external(),
                    destructive: hints.is_destructive(),
                    parallel,
                    retries: config.retries_for(tool.as_ref()),
                    timeout_ms: tool.timeout_ms().unwrap_or(config.default_tool_timeout_ms),
                    policy: config.on_error.unwrap_or_else(|| tool.on_error()),
                    // The fixed acquisition order (group, tool, global) is what keeps the
                    // limits free of deadlock; see the module docs.
                    permits: [group, per_tool, Some(global.clone())],
                }
            })
            .collect();
        Self {
            tools,
            config: Arc::new(config),
            approval: None,
            on_tool_called: None,
            on_response_received: None,
            facts,
        }
    }

    /// The executor with an application-wide approval rule; see [`ApprovalFn`].
    pub fn with_approval_fn(mut self, approval: ApprovalFn) -> Self {
        self.approval = Some(approval);
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
        &self.tools
    }

    /// The configuration.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    /// Whether `call` of `tool` must wait for approval: the application's rule first,
    /// then the tool's, then the destructive default.
    pub fn needs_approval(&self, call: &ToolCall, tool: &dyn Tool) -> bool {
        self.approval_needed(call, tool, || tool.annotations().is_destructive())
    }

    fn approval_needed(
        &self,
        call: &ToolCall,
        tool: &dyn Tool,
        destructive: impl FnOnce() -> bool,
    ) -> bool {
        let decided = self
            .approval
            .as_ref()
            .map_or(Approval::Unspecified, |rule| rule(call, tool));
        self.config
            .approval_after(decided, tool, &call.arguments, destructive)
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
                // Every slot is filled above; an empty one would be a bug here, and the
                // model still deserves an answer rather than a crash.
                let answer = answer.unwrap_or_else(|| {
                    let error = ToolError::execution("the call was not run");
                    Settled::new(ToolOutcome::Err(error), ErrorPolicy::ReturnToModel)
                });
                self.error_budget(answer).answer(call)
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
        let base = self.tools.context_for(&base).into_owned();
        // Every runnable call is cancellable from now on, including those still queued
        // behind a batch.
        let entries = Arc::new(TurnCalls::new(
            to_run.iter().map(|&(index, position)| {
                (
                    calls[index].id.as_str(),
                    self.tools.tool_at(position).clone(),
                )
            }),
            turn.sinks.clone(),
        ));
        let shared = Arc::new(TurnShared {
            calls,
            tools: self.tools.clone(),
            facts: self.facts.clone(),
            entries,
            base,
            sinks: turn.sinks.clone(),
            max_output_chars: self.config.max_output_chars,
            on_invalid_arguments: self.config.on_invalid_arguments,
        });
        let registered = Registered::new(&turn.control, &shared.entries);
        let mut batch = Batch::with_capacity(to_run.len());
        for (at, (index, position)) in to_run.into_iter().enumerate() {
            let job = Job {
                turn: shared.clone(),
                index,
                at,
                position,
            };
            if self.facts[position].parallel {
                batch.push(job);
            } else {
                std::mem::take(&mut batch).run(answers).await;
                let mut alone = Batch::default();
                alone.push(job);
                alone.run(answers).await;
            }
        }
        batch.run(answers).await;
        drop(registered);
        // Every job is dropped by now, unless a tool still blocks its thread inside a
        // call that was answered as timed out: then its call is copied.
        Arc::try_unwrap(shared).map_or_else(|shared| shared.calls.clone(), |turn| turn.calls)
    }

    /// The result of an external call whose output the application supplied: validated
    /// and cut to the budget like any other.
    pub fn complete_external(&self, call: &ToolCall, output: Vec<Content>) -> ToolCallResult {
        let Some(position) = self.tools.position(&call.name) else {
            // Named as `execute` names them: Hidden and Deferred tools are never listed.
            let error = ToolError::unknown_tool(&call.name, self.tools.direct_names());
            return self.failed(error).answer(call.clone());
        };
        let tool = self.tools.tool_at(position);
        let policy = self.facts[position].policy;
        let output = match &self.on_response_received {
            Some(hook) => hook(call, output),
            None => Ok(output),
        };
        let outcome = match output.and_then(|output| {
            tool.validate_output(&output)?;
            Ok(output)
        }) {
            Ok(output) => ToolOutcome::Ok(self.budget(output)),
            Err(reason) => ToolOutcome::Err(ToolError::execution(format!(
                "Invalid tool output: {reason}"
            ))),
        };
        self.error_budget(Settled::new(outcome, policy))
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
            return Plan::Done(self.failed(ToolError::invalid_arguments(format!(
                "call id `{}` was used twice in one turn; each call needs its own id",
                call.id
            ))));
        }
        if let Some(offered) = &turn.offered
            && !offered.contains(&call.name)
        {
            let error = ToolError::unknown_tool(&call.name, offered.iter().map(String::as_str));
            return Plan::Done(self.failed(error));
        }
        let position = self.tools.position(&call.name);
        let position = match position {
            // A direct tool is always callable: no activation context is needed.
            Some(position) if self.facts[position].exposure == ToolExposure::Direct => position,
            _ => {
                // Built at most once per turn, and only for tools that need it.
                let activation = activation.get_or_insert_with(|| ActivationContext {
                    session_id: turn.session_id.clone(),
                    // Without a list of its own, the turn offers what the set does: its
                    // Direct tools (as `ToolSet::call` sees them).
                    current_tools: match &turn.offered {
                        Some(offered) => offered.iter().cloned().collect(),
                        None => self.tools.direct_names().map(str::to_owned).collect(),
                    },
                    workspace: turn.workspace.clone().unwrap_or_default(),
                });
                match self.tools.callable_position(&call.name, activation).await {
                    Ok(position) => position,
                    Err(error) => return Plan::Done(self.failed(error)),
                }
            }
        };
        let tool = self.tools.tool_at(position);
        let facts = &self.facts[position];
        if !call.arguments.is_object() {
            let error = ToolError::invalid_arguments(format!(
                "Invalid arguments: expected a JSON object, got {}",
                json_kind(&call.arguments)
            ));
            return Plan::Done(self.failed(error));
        }
        let policy = facts.policy;
        // Approval first: an external call is carried out by the application once it is
        // handed over, so one that needs a person's approval waits for it before that.
        let pending = if !turn.approved.contains(&call.id)
            && self.approval_needed(call, tool.as_ref(), || facts.destructive)
        {
            Some(ToolOutcome::PendingApproval)
        } else if facts.external {
            Some(ToolOutcome::PendingExternal)
        } else {
            match self
                .on_tool_called
                .as_ref()
                .map(|hook| hook(call, tool.as_ref()))
            {
                None | Some(HookDecision::Run) => None,
                Some(HookDecision::Pause) => Some(ToolOutcome::PendingInput),
                Some(HookDecision::Respond(output)) => {
                    let outcome = match tool.validate_output(&output) {
                        Ok(()) => ToolOutcome::Ok(self.budget(output)),
                        Err(reason) => ToolOutcome::Err(ToolError::execution(format!(
                            "Invalid tool output: {reason}"
                        ))),
                    };
                    Some(outcome)
                }
            }
        };
        match pending {
            Some(outcome) => Plan::Done(Settled::new(outcome, policy)),
            None => Plan::Run(position),
        }
    }

    /// The answer to a call that failed before running; the policy follows the
    /// error's kind.
    fn failed(&self, error: ToolError) -> Settled {
        let policy = match error.kind() {
            ToolErrorKind::UnknownTool => self.config.on_unknown_tool,
            _ => self.config.on_invalid_arguments,
        };
        Settled::new(ToolOutcome::Err(error), policy)
    }

    fn budget(&self, content: Vec<Content>) -> Vec<Content> {
        match self.config.max_output_chars {
            Some(max) => truncate_output(content, max),
            None => content,
        }
    }

    /// `answer` with a failure's message held to the output budget, wherever the failure
    /// came from (the tool, the model's arguments, a timeout).
    fn error_budget(&self, mut answer: Settled) -> Settled {
        if let (Some(max), ToolOutcome::Err(error)) =
            (self.config.max_output_chars, &mut answer.outcome)
        {
            let placeholder = ToolError::execution(String::new());
            *error = truncate_error(std::mem::replace(error, placeholder), max);
        }
        answer
    }
}

/// Registers a turn's calls with the control, and unregisters them however `execute`
/// ends, dropped mid-turn included, so no stale id stays cancellable.
struct Registered<'a> {
    control: &'a RunControl,
    entries: &'a Arc<TurnCalls>,
}

impl<'a> Registered<'a> {
    fn new(control: &'a RunControl, entries: &'a Arc<TurnCalls>) -> Self {
        control.register_turn(entries.clone());
        Self { control, entries }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.control.unregister_turn(self.entries);
    }
}

/// Calls that run concurrently, with what each answer needs should the call's future
/// not give one.
#[derive(Default)]
struct Batch {
    jobs: Vec<Job>,
    slots: Vec<Slot>,
}

/// Where a batch's call goes in the answers, and what answers it if it stalls.
struct Slot {
    index: usize,
    policy: ErrorPolicy,
    at: usize,
    timeout_ms: u64,
}

impl Slot {
    /// The answer of this slot's call when one of its polls outlives its timeout.
    fn timed_out(&self, call: &ToolCall) -> ToolOutcome {
        ToolOutcome::Err(ToolError::timeout(&call.name, self.timeout_ms))
    }
}

/// A call's future, as the batch runs it.
fn start(job: Job) -> BoxFuture<Settled> {
    Box::pin(drive(job))
}

impl Batch {
    fn with_capacity(calls: usize) -> Self {
        Self {
            jobs: Vec::with_capacity(calls),
            slots: Vec::with_capacity(calls),
        }
    }

    /// Adds the call of `job`.
    fn push(&mut self, job: Job) {
        let facts = job.facts();
        self.slots.push(Slot {
            index: job.index,
            policy: facts.policy,
            at: job.at,
            timeout_ms: facts.timeout_ms,
        });
        self.jobs.push(job);
    }

    /// Runs the calls and stores each answer at its call's index.
    async fn run(self, answers: &mut [Option<Settled>]) {
        let Some(turn) = self.jobs.first().map(|job| job.turn.clone()) else {
            return;
        };
        let timeouts = self
            .slots
            .iter()
            .map(|slot| Duration::from_millis(slot.timeout_ms))
            .collect();
        let entries = &turn.entries;
        let slots = &self.slots;
        // A call given up on is cancelled, ended and announced at once: work its tool
        // started elsewhere need not wait for the rest of the batch to hear of the
        // timeout, nor the run's control and events to learn that the call is over.
        let give_up = |index: usize| {
            let slot = &slots[index];
            let entry = entries.get(slot.at);
            let claimed = entry.claim_answer();
            if claimed {
                entry.cancel();
                entry.end();
                let call = &turn.calls[slot.index];
                announce_settled(call, &slot.timed_out(call), &turn.sinks);
            }
            claimed
        };
        let outcomes = batch::run(self.jobs, start, timeouts, give_up).await;
        for (slot, outcome) in self.slots.iter().zip(outcomes) {
            let call = &turn.calls[slot.index];
            let entry = turn.entries.get(slot.at);
            let outcome = match outcome {
                Outcome::Done(answer) => {
                    answers[slot.index] = Some(answer);
                    continue;
                }
                // A poll of the tool outlived its timeout (it blocks its thread): the
                // call is answered now, and dropped when that poll returns.
                Outcome::Stalled => {
                    entry.cancel();
                    slot.timed_out(call)
                }
                // `drive` is our code and does not panic (the tool's panics are caught
                // inside it); if it ever did, the call still gets an answer.
                Outcome::Panicked(panic) => ToolOutcome::Err(ToolError::execution(format!(
                    "the runtime failed while running the call: {}",
                    call::panic_message(panic)
                ))),
            };
            entry.end();
            let answer = Settled::new(outcome, slot.policy);
            // A call given up on was announced then (see `give_up`).
            if entry.claim_answer() {
                announce_settled(call, &answer.outcome, &turn.sinks);
            }
            answers[slot.index] = Some(answer);
        }
    }
}

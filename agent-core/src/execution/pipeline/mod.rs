//! [`CallRunner`]: the one path every tool call takes, whoever makes it (an agent's
//! model through the [`Executor`](crate::execution::executor::Executor), or an MCP client).
//!
//! Where a call goes, in order:
//! 1. **Resolve** its name: a tool that is not offered (Hidden, an inactive Deferred
//!    one, or one outside the caller's offered list) answers as an unknown tool.
//! 2. **Arguments** that are not a JSON object end it (the tool checks the rest).
//! 3. **Approval**: a call that needs it (the application's [`ApprovalRule`], then the
//!    tool's own rule, then the destructive default) is checked against the tool's
//!    schema (a call that would fail is answered so, nobody is asked), then asks the
//!    caller's [`Approver`]:
//!    an agent pauses the run, an MCP server asks its client's user. Asked before any
//!    permit is taken, so a call waiting for a person holds no capacity.
//! 4. An external tool's call is handed to the application (it waits, pending).
//! 5. **Permits**: exclusion group, then per-tool limit, then the global limit, always
//!    in this order so waits cannot form a cycle. A cancelled call stops waiting.
//! 6. **Run** under its timeout and its token, with retries for read-only and idempotent
//!    tools (each attempt has its own child token and the full timeout; a result that
//!    comes after the deadline is a timeout); a panic is the call's error. A tool that
//!    blocks its thread is answered on time by the watchdog (`watchdog.rs`).
//! 7. The output is **validated** and cut to the **output budget**; an error's message
//!    is held to the same budget.
//! 8. A `tool_call` span records the outcome and duration; `ToolStarted`/`ToolFinished`
//!    events go to the caller's sinks.
//!
//! Steps 1–4 are [`CallRunner::plan`]; 5–8 run in a [`Batch`] (`batch.rs`, `call.rs`),
//! which the executor fills with a turn's calls and [`CallRunner::run`] with one.

mod batch;
mod call;
mod limits;
mod permit;
mod ticker;
mod watchdog;

pub(crate) use batch::Batch;
pub(crate) use call::{ReadyCall, RunningTurn, announce_settled};
pub use limits::ToolLimits;
pub use permit::CallPermit;

use crate::execution::events::{EventSink, Sinks};
use crate::execution::inflight::InFlight;
use crate::model::args::json_kind;
use crate::model::config::{ParallelRule, ToolConfig};
use crate::model::content::Content;
use crate::model::context::{ActivationContext, ToolContext, TurnLink};
use crate::model::error::{ToolError, ToolErrorKind};
use crate::model::locate::schema_problem;
use crate::model::message::ToolCall;
use crate::model::outcome::{Settled, ToolCallResult, ToolOutcome};
use crate::model::set::ToolSet;
use crate::model::tool::{ApprovalPolicy, ErrorPolicy, Tool, ToolExposure};
use crate::model::truncate::{truncate_error, truncate_output};
use async_trait::async_trait;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// An application-wide approval rule: called for every call before the tool's own
/// [`Tool::approval`]. `Required` or `NotRequired` decides; `Unspecified` defers to the
/// tool.
pub type ApprovalRule = Arc<dyn Fn(&ToolCall, &dyn Tool) -> ApprovalPolicy + Send + Sync>;

/// What an [`Approver`] answers for a call that needs approval.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ApprovalDecision {
    /// The call runs.
    Approved,
    /// The call does not run; the error (usually [`ToolError::denied`]) is its answer.
    Denied(ToolError),
    /// Nobody can decide now: the call is answered
    /// [`PendingApproval`](ToolOutcome::PendingApproval) without running, and the caller
    /// asks again later (an agent pauses its run until a person decides).
    Waiting,
}

/// Decides the calls that need a person's approval, before they take any permit.
///
/// An agent's implementation pauses the run ([`ApprovalDecision::Waiting`]) unless a
/// person approved the call already; an MCP server's asks its client's user.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Whether `call` of `tool` may run. Asked only for calls that need approval; while
    /// it waits, the call holds no permit, and a cancelled call stops waiting.
    async fn approve(&self, call: &ToolCall, tool: &dyn Tool) -> ApprovalDecision;
}

/// An [`Approver`] that approves every call: for callers that confirm each call with a
/// person themselves, or tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

#[async_trait]
impl Approver for ApproveAll {
    async fn approve(&self, _call: &ToolCall, _tool: &dyn Tool) -> ApprovalDecision {
        ApprovalDecision::Approved
    }
}

/// A future that runs (part of) a call, as a [`CallScope`] wraps it.
pub type ScopedFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// What a call runs inside: a task-local value its tool's code reads while it runs (the
/// MCP request a call answers, say). The call may run in a task other than its caller's,
/// so a scope the caller entered around [`CallRunner::run`] would not reach it.
pub trait CallScope: Send + Sync {
    /// `call`, run inside this scope. `permit` is the call's place under the global
    /// limit, which code inside the scope may give back while it waits on something
    /// outside ([`CallPermit::released`]).
    fn scope<'a>(&'a self, call: ScopedFuture<'a>, permit: &CallPermit) -> ScopedFuture<'a>;
}

/// How [`CallRunner::run_with`] runs one call beyond its context and approver.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallOptions {
    sinks: Sinks,
    scope: Option<Arc<dyn CallScope>>,
}

impl CallOptions {
    /// Options with no event sink and no scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also deliver the call's events (started, progress, finished) to `sink`.
    pub fn with_events(mut self, sink: EventSink) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Run the call inside `scope`.
    pub fn with_scope(mut self, scope: Arc<dyn CallScope>) -> Self {
        self.scope = Some(scope);
        self
    }
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("sinks", &self.sinks)
            .field("scope", &self.scope.is_some())
            .finish()
    }
}

/// What the runner needs of a tool's declarations (and the config), read once when the
/// runner is made rather than through several calls per call.
pub(crate) struct ToolPolicy {
    pub(crate) exposure: ToolExposure,
    pub(crate) external: bool,
    pub(crate) destructive: bool,
    /// Whether its calls may share a batch with their neighbours (see
    /// [`ToolConfig::parallel`]).
    pub(crate) parallel: bool,
    pub(crate) retries: u32,
    pub(crate) timeout_ms: u64,
    pub(crate) on_error: ErrorPolicy,
    /// In acquisition order: exclusion group, per-tool limit, global limit.
    pub(crate) permits: [Option<Arc<Semaphore>>; 3],
}

/// Where planning left a call.
pub(crate) enum Plan {
    /// Answered without running.
    Done(Settled),
    /// Runs the tool at this position in the set.
    Run(usize),
}

/// Runs tool calls of one [`ToolSet`] under one [`ToolConfig`]: every policy of a call,
/// from its name to its answer (see the module's steps). Cheap to clone; clones share
/// the concurrency limits, so the global limit (`max_concurrency`) holds across every
/// caller of this runner: every run of an agent, every session of an MCP server.
///
/// ```
/// use toolwright_core::{CallRunner, ToolContext, tool, tools, exec::ApproveAll, llm::ToolCall, toolset::ToolConfig};
/// use std::sync::Arc;
///
/// /// Add two numbers.
/// #[tool]
/// async fn add(a: i64, b: i64) -> i64 {
///     a + b
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let runner = CallRunner::new(Arc::new(tools![add]), ToolConfig::default());
/// let call = ToolCall::new("call_1", "add", serde_json::json!({"a": 2, "b": 3}));
/// let result = runner.run(call, ToolContext::default(), &ApproveAll).await;
/// assert_eq!(result.outcome.content().unwrap()[0].as_text(), Some("5"));
/// # }
/// ```
#[derive(Clone)]
pub struct CallRunner {
    tools: Arc<ToolSet>,
    config: Arc<ToolConfig>,
    approval: Option<ApprovalRule>,
    /// One per tool, in the set's order.
    policies: Arc<[ToolPolicy]>,
    /// The limit on calls in flight across every tool (`max_concurrency`).
    global: Arc<Semaphore>,
    /// Wakes the callers of running batches to watch them (`ticker.rs`).
    ticker: Arc<ticker::Ticker>,
}

impl fmt::Debug for CallRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallRunner")
            .field("tools", &self.tools)
            .field("config", &self.config)
            .field("approval_rule", &self.approval.is_some())
            .finish()
    }
}

impl CallRunner {
    /// A runner for `tools` under `config`, with its own global limit.
    pub fn new(tools: Arc<ToolSet>, config: ToolConfig) -> Self {
        let global = Arc::new(Semaphore::new(
            // tokio's semaphores hold at most MAX_PERMITS; more is no limit anyway.
            config.max_concurrency.clamp(1, Semaphore::MAX_PERMITS),
        ));
        let limits = ToolLimits::of_each(&tools);
        Self::assemble(tools, Arc::new(config), global, limits)
    }

    /// A runner for a changed set of tools that keeps this runner's configuration,
    /// approval rule and limits: the global limit is the same semaphore, every
    /// exclusive group keeps its permit, and a tool kept under the same name and
    /// `max_in_flight` keeps its own. Calls still running on this runner's tools
    /// therefore count against the new runner's limits, as they would have had the set
    /// not changed.
    pub fn with_tools(&self, tools: Arc<ToolSet>) -> Self {
        let mut groups: HashMap<String, Arc<Semaphore>> = HashMap::new();
        for (tool, policy) in self.tools.iter().zip(self.policies.iter()) {
            if let (Some(group), Some(permit)) =
                (tool.concurrency().exclusive_group, &policy.permits[0])
            {
                groups.entry(group).or_insert_with(|| permit.clone());
            }
        }
        let mut limits = ToolLimits::of_each(&tools);
        for (tool, limit) in tools.iter().zip(limits.iter_mut()) {
            let rules = tool.concurrency();
            if let Some(permit) = rules.exclusive_group.and_then(|group| groups.get(&group)) {
                limit.group = Some(permit.clone());
            }
            let kept = self.tools.position(tool.name()).filter(|&position| {
                rules.max_in_flight.is_some()
                    && self.tools.tool_at(position).concurrency().max_in_flight
                        == rules.max_in_flight
            });
            if let Some(position) = kept {
                limit.per_tool = self.policies[position].permits[1].clone();
            }
        }
        let mut runner = Self::assemble(tools, self.config.clone(), self.global.clone(), limits);
        runner.approval = self.approval.clone();
        runner.ticker = self.ticker.clone();
        runner
    }

    fn assemble(
        tools: Arc<ToolSet>,
        config: Arc<ToolConfig>,
        global: Arc<Semaphore>,
        limits: Vec<ToolLimits>,
    ) -> Self {
        let policies = tools
            .iter()
            .zip(limits)
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
                ToolPolicy {
                    exposure: tool.exposure(),
                    external: tool.is_external(),
                    destructive: hints.is_destructive(),
                    parallel,
                    retries: config.retries_for(tool.as_ref()),
                    timeout_ms: tool.timeout_ms().unwrap_or(config.default_tool_timeout_ms),
                    on_error: config.on_error.unwrap_or_else(|| tool.on_error()),
                    // The fixed acquisition order (group, tool, global) is what keeps the
                    // limits free of deadlock; see the module docs.
                    permits: [group, per_tool, Some(global.clone())],
                }
            })
            .collect();
        Self {
            tools,
            config,
            approval: None,
            policies,
            global,
            ticker: Arc::default(),
        }
    }

    /// The runner with an application-wide approval rule; see [`ApprovalRule`].
    pub fn with_approval_rule(mut self, approval: ApprovalRule) -> Self {
        self.approval = Some(approval);
        self
    }

    /// The tools this runner runs.
    pub fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    /// The configuration.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    pub(crate) fn policy(&self, position: usize) -> &ToolPolicy {
        &self.policies[position]
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
            .map_or(ApprovalPolicy::Unspecified, |rule| rule(call, tool));
        self.config
            .approval_after(decided, tool, &call.arguments, destructive)
    }

    /// Runs one call through every step, in `ctx` (its session, workspace, state,
    /// reporter, and its token: cancelling it cancels the call), asking `approver` if
    /// the call needs approval.
    ///
    /// A tool that blocks its thread past its timeout is answered as timed out on time
    /// when the runtime has a second thread to answer from; on a current-thread runtime,
    /// when the tool returns control.
    ///
    /// # Panics
    ///
    /// When polled outside a Tokio runtime whose time driver is enabled.
    pub async fn run(
        &self,
        call: ToolCall,
        ctx: ToolContext,
        approver: &dyn Approver,
    ) -> ToolCallResult {
        self.run_with(call, ctx, approver, CallOptions::default())
            .await
    }

    /// [`run`](Self::run), with events and a scope.
    pub async fn run_with(
        &self,
        call: ToolCall,
        ctx: ToolContext,
        approver: &dyn Approver,
        options: CallOptions,
    ) -> ToolCallResult {
        let CallOptions { sinks, scope } = options;
        let mut activation = None;
        let planned = self
            .plan(
                &call,
                None,
                &mut activation,
                || self.tools.activation_context(&ctx),
                false,
                approver,
                Some(ctx.cancellation()),
            )
            .await;
        let (answer, call) = match planned {
            Plan::Done(answer) => {
                if !answer.outcome.is_pending() {
                    announce_settled(&call, &answer.outcome, &sinks);
                }
                (answer, call)
            }
            Plan::Run(position) => {
                let tool = self.tools.tool_at(position).clone();
                let inflight = Arc::new(InFlight::single(
                    &call.id,
                    tool,
                    ctx.cancellation().clone(),
                    sinks.clone(),
                ));
                let base = self.tools.context_for(&ctx).into_owned();
                let turn = self.running_turn(vec![call], inflight, base, sinks, scope);
                let answer = batch::run_single(ReadyCall {
                    turn: turn.clone(),
                    index: 0,
                    at: 0,
                    position,
                })
                .await;
                let call = RunningTurn::into_calls(turn).swap_remove(0);
                (answer, call)
            }
        };
        self.error_budget(answer).answer(call)
    }

    /// What the calls of one turn share while they run.
    pub(crate) fn running_turn(
        &self,
        calls: Vec<ToolCall>,
        inflight: Arc<InFlight>,
        base: ToolContext,
        sinks: Sinks,
        scope: Option<Arc<dyn CallScope>>,
    ) -> Arc<RunningTurn> {
        let link: Arc<dyn TurnLink> = inflight.clone();
        Arc::new(RunningTurn {
            calls,
            tools: self.tools.clone(),
            policies: self.policies.clone(),
            inflight,
            link,
            base,
            sinks,
            max_output_chars: self.config.max_output_chars,
            on_invalid_arguments: self.config.on_invalid_arguments,
            scope,
            ticker: self.ticker.clone(),
        })
    }

    /// Steps 1–4 of a call: whether it runs (and which tool), or how it was answered
    /// without running. `offered` limits the callable tools to a list (the tools a model
    /// was offered); `activation` caches the context Deferred tools are asked in, made
    /// by `make_activation` when first needed. A call `approved` already is not asked
    /// about (nor the rules consulted); approval stops waiting when `cancel` is cancelled.
    #[allow(clippy::too_many_arguments)] // one internal caller each; a struct adds nothing
    pub(crate) async fn plan(
        &self,
        call: &ToolCall,
        offered: Option<&HashSet<String>>,
        activation: &mut Option<ActivationContext>,
        make_activation: impl FnOnce() -> ActivationContext,
        approved: bool,
        approver: &dyn Approver,
        cancel: Option<&tokio_util::sync::CancellationToken>,
    ) -> Plan {
        if let Some(offered) = offered
            && !offered.contains(&call.name)
        {
            let error = ToolError::unknown_tool(&call.name, offered.iter().map(String::as_str));
            return Plan::Done(self.failed(error));
        }
        let position = match self.tools.position(&call.name) {
            // A direct tool is always callable: no activation context is needed.
            Some(position) if self.policies[position].exposure == ToolExposure::Direct => position,
            _ => {
                // Built at most once per turn, and only for tools that need it.
                let activation = activation.get_or_insert_with(make_activation);
                match self.tools.callable_position(&call.name, activation).await {
                    Ok(position) => position,
                    Err(error) => return Plan::Done(self.failed(error)),
                }
            }
        };
        let tool = self.tools.tool_at(position);
        let policy = &self.policies[position];
        if !call.arguments.is_object() {
            let error = ToolError::invalid_arguments(format!(
                "Invalid arguments: expected a JSON object, got {}",
                json_kind(&call.arguments)
            ));
            return Plan::Done(self.failed(error));
        }
        // Approval first: an external call is carried out by the application once it is
        // handed over, so one that needs a person's approval waits for it before that.
        if !approved && self.approval_needed(call, tool.as_ref(), || policy.destructive) {
            // A person is never asked about a call its schema would refuse anyway: the
            // model hears what is wrong at once, and nobody approves a call that fails.
            if let Some(problem) = schema_problem(&tool.schema(), &call.arguments) {
                let error = ToolError::invalid_arguments(format!("Invalid arguments: {problem}"));
                return Plan::Done(self.failed(error));
            }
            let asked = approver.approve(call, tool.as_ref());
            let decision = match cancel {
                None => asked.await,
                Some(token) => tokio::select! {
                    decision = asked => decision,
                    () = token.cancelled() => {
                        ApprovalDecision::Denied(ToolError::cancelled(&call.name))
                    }
                },
            };
            match decision {
                ApprovalDecision::Approved => {}
                // A person's refusal is for the model to hear, whatever the tool's policy.
                ApprovalDecision::Denied(error) => {
                    let outcome = ToolOutcome::Err(error);
                    return Plan::Done(Settled::new(outcome, ErrorPolicy::ReturnToModel));
                }
                ApprovalDecision::Waiting => {
                    let outcome = ToolOutcome::PendingApproval;
                    return Plan::Done(Settled::new(outcome, policy.on_error));
                }
            }
        }
        if policy.external {
            return Plan::Done(Settled::new(ToolOutcome::PendingExternal, policy.on_error));
        }
        Plan::Run(position)
    }

    /// The answer to a call that failed before running; the policy follows the
    /// error's kind.
    pub(crate) fn failed(&self, error: ToolError) -> Settled {
        let policy = match error.kind() {
            ToolErrorKind::UnknownTool => self.config.on_unknown_tool,
            _ => self.config.on_invalid_arguments,
        };
        Settled::new(ToolOutcome::Err(error), policy)
    }

    /// `content` cut to the output budget.
    pub(crate) fn budget(&self, content: Vec<Content>) -> Vec<Content> {
        match self.config.max_output_chars {
            Some(max) => truncate_output(content, max),
            None => content,
        }
    }

    /// `answer` with a failure's message held to the output budget, wherever the failure
    /// came from (the tool, the model's arguments, a timeout).
    pub(crate) fn error_budget(&self, mut answer: Settled) -> Settled {
        if let (Some(max), ToolOutcome::Err(error)) =
            (self.config.max_output_chars, &mut answer.outcome)
        {
            let placeholder = ToolError::execution(String::new());
            *error = truncate_error(std::mem::replace(error, placeholder), max);
        }
        answer
    }
}

/// The answer of a call no step answered: a bug here, and the caller still deserves an
/// answer rather than a crash.
pub(crate) fn unanswered() -> Settled {
    let error = ToolError::execution("the call was not run");
    Settled::new(ToolOutcome::Err(error), ErrorPolicy::ReturnToModel)
}

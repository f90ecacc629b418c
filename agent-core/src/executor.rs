//! [`Executor`]: runs one model turn's tool calls with every policy — exposure,
//! approval, timeouts, cancellation, concurrency limits, error policy, validators and
//! the output budget — and returns the results in call order.
//!
//! Where a call goes, in order:
//! 1. [`Executor::execute`] plans each call: a name that is not offered, arguments that
//!    are not an object, or a repeated call id end it at once; an external tool or a
//!    call needing approval is returned as pending, without running.
//! 2. The rest are split into batches: consecutive calls that may run in parallel share
//!    a batch, a call that must run alone has one of its own. Batches run one after
//!    another.
//! 3. In a batch each call waits for its permits (exclusion group, then per-tool limit,
//!    then the global limit — always in this order, so waits cannot form a cycle), then
//!    runs in its own task, so a panic is contained and a call that ignores
//!    cancellation can still be abandoned on time.
//! 4. The output is validated, cut to the budget, and the error policy applied.

use crate::args::json_kind;
use crate::config::{ParallelRule, ToolConfig};
use crate::content::Content;
use crate::context::{CallReporter, ToolContext};
use crate::control::RunControl;
use crate::error::{ToolError, ToolErrorKind};
use crate::events::{AgentEvent, EventSink, Sinks};
use crate::llm::{ToolCall, ToolResultMessage};
use crate::set::ToolSet;
use crate::tool::{Approval, ErrorPolicy, Tool};
use crate::truncate::truncate_output;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// An application-wide approval rule: called for every call before the tool's own
/// [`Tool::approval`]. `Required` or `NotRequired` decides; `Unspecified` defers to the
/// tool.
pub type ApprovalFn = Arc<dyn Fn(&ToolCall, &dyn Tool) -> Approval + Send + Sync>;

/// What an [`on_tool_called`](crate::AgentBuilder::on_tool_called) hook decides for a
/// call that is about to run.
#[derive(Debug, Clone, PartialEq)]
pub enum HookDecision {
    /// Run the tool.
    Run,
    /// Pause the run: the call waits until the application supplies its output (a
    /// person answers, say), as an external tool's would.
    Pause,
    /// Do not run the tool: this is its result.
    Respond(Vec<Content>),
}

/// Decides, before a call runs, whether it runs, pauses for a person, or is answered
/// by the application. Called after approval.
pub type CallHookFn = Arc<dyn Fn(&ToolCall, &dyn Tool) -> HookDecision + Send + Sync>;

/// Validates or transforms output the application supplied (for an external tool or a
/// paused interactive call) before the tool's output validator sees it. An `Err`
/// fails the call with `Invalid tool output: ...`.
pub type ResponseHookFn =
    Arc<dyn Fn(&ToolCall, Vec<Content>) -> Result<Vec<Content>, String> + Send + Sync>;

/// Parameters a tool sets for the next model request only (a different model, a
/// temperature, a tool choice...): what they mean is up to the [`LlmClient`](crate::LlmClient)
/// adapter, which reads them in [`LlmRequest::params`](crate::LlmRequest::params).
/// Tools reach it with `ctx.state::<NextTurn>()`; when several calls set the same key,
/// the last in call order wins.
#[derive(Debug, Clone, Default)]
pub struct NextTurn(Arc<Mutex<Map<String, Value>>>);

impl NextTurn {
    /// Sets `key` for the next model request.
    pub fn set(&self, key: impl Into<String>, value: Value) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.into(), value);
    }

    fn take(&self) -> Option<Map<String, Value>> {
        let params = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        (!params.is_empty()).then_some(params)
    }
}

/// The application context a tool sees, as the last `set_context` of an earlier turn
/// left it (`null` before any). Read it with `ctx.state::<AppContext>()` or a
/// `State<AppContext>` parameter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AppContext(pub Value);

/// What became of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", content = "value", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool's result, validated and cut to the output budget.
    Ok(Vec<Content>),
    /// The call failed.
    Err(ToolError),
    /// The call waits for a person's approval; it has not run.
    PendingApproval,
    /// The tool is external: the call waits for the application to supply its output.
    PendingExternal,
    /// An `on_tool_called` hook paused the call: it waits for the application to supply
    /// its output.
    PendingInput,
}

impl ToolOutcome {
    /// Whether the call is waiting (for approval or for external output).
    pub fn is_pending(&self) -> bool {
        matches!(
            self,
            Self::PendingApproval | Self::PendingExternal | Self::PendingInput
        )
    }

    /// The error, if the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        match self {
            Self::Err(error) => Some(error),
            _ => None,
        }
    }

    /// The content, if the call succeeded.
    pub fn content(&self) -> Option<&[Content]> {
        match self {
            Self::Ok(content) => Some(content),
            _ => None,
        }
    }
}

/// One call's result, in the order of the calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallResult {
    /// The call.
    pub call: ToolCall,
    /// What became of it.
    pub outcome: ToolOutcome,
    /// The error policy that applies to it (meaningful when it failed).
    pub policy: ErrorPolicy,
    /// The last application context the call set, if it set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_update: Option<Value>,
    /// Parameters the call set for the next model request, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_turn: Option<Map<String, Value>>,
}

impl ToolCallResult {
    /// Whether this result ends the run: an error under [`ErrorPolicy::FailRun`].
    pub fn fails_run(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Err(_)) && self.policy == ErrorPolicy::FailRun
    }

    /// The message the model reads, or `None` while the call is pending. An error is
    /// a text block `{"error": "...", "kind": "..."}` the model can act on.
    pub fn to_message(&self) -> Option<ToolResultMessage> {
        let (content, is_error) = match &self.outcome {
            ToolOutcome::Ok(content) => (content.clone(), false),
            ToolOutcome::Err(error) => (vec![error_content(error)], true),
            ToolOutcome::PendingApproval
            | ToolOutcome::PendingExternal
            | ToolOutcome::PendingInput => return None,
        };
        Some(ToolResultMessage {
            call_id: self.call.id.clone(),
            name: self.call.name.clone(),
            content,
            is_error,
        })
    }
}

/// The content the model reads for a failed call.
pub fn error_content(error: &ToolError) -> Content {
    Content::text(json!({"error": error.message(), "kind": error.kind().as_str()}).to_string())
}

/// What one turn's calls run with besides the calls themselves: who is calling, what
/// was offered, which calls are approved, where events go, and the control that
/// cancels them.
#[derive(Debug, Clone, Default)]
pub struct TurnContext {
    session_id: String,
    workspace: Option<PathBuf>,
    app_context: Value,
    offered: Option<HashSet<String>>,
    approved: HashSet<String>,
    control: RunControl,
    sinks: Sinks,
}

impl TurnContext {
    /// A context with no session, nothing approved, and a fresh control.
    pub fn new() -> Self {
        Self::default()
    }

    /// The session the calls belong to.
    pub fn with_session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = session_id.into();
        self
    }

    /// The working directory tools see.
    pub fn with_workspace(mut self, workspace: impl Into<PathBuf>) -> Self {
        self.workspace = Some(workspace.into());
        self
    }

    /// The application context tools see as [`AppContext`].
    pub fn with_app_context(mut self, context: Value) -> Self {
        self.app_context = context;
        self
    }

    /// Only tools with these names may be called (the ones the model was offered this
    /// turn); others answer as unknown tools. Without it, the set's exposure decides.
    pub fn with_offered(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.offered = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Calls with these ids were approved by a person: they run without asking again.
    pub fn with_approved(mut self, ids: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.approved.extend(ids.into_iter().map(Into::into));
        self
    }

    /// The control that cancels these calls; its event sink, if any, gets this turn's
    /// events.
    pub fn with_control(mut self, control: RunControl) -> Self {
        if let Some(sink) = control.events() {
            self.sinks.push(sink.clone());
        }
        self.control = control;
        self
    }

    /// Also deliver this turn's events (tool started, progress, finished) to `sink`.
    pub fn with_events(mut self, sink: EventSink) -> Self {
        self.sinks.push(sink);
        self
    }

    pub(crate) fn with_sinks(mut self, sinks: Sinks) -> Self {
        self.sinks = sinks;
        self
    }

    /// The control that cancels these calls.
    pub fn control(&self) -> &RunControl {
        &self.control
    }
}

/// Runs tool calls for a model. Cheap to clone; clones share the concurrency limits,
/// so the global limit holds across every run using this executor.
#[derive(Clone)]
pub struct Executor {
    tools: Arc<ToolSet>,
    config: Arc<ToolConfig>,
    approval: Option<ApprovalFn>,
    on_tool_called: Option<CallHookFn>,
    on_response_received: Option<ResponseHookFn>,
    limits: Arc<Limits>,
}

/// The semaphores behind the concurrency rules, built once from the tools' declarations.
struct Limits {
    global: Arc<Semaphore>,
    per_tool: HashMap<&'static str, Arc<Semaphore>>,
    groups: HashMap<String, Arc<Semaphore>>,
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
    Done(Box<ToolCallResult>),
    Run(Arc<dyn Tool>, ErrorPolicy),
}

impl Executor {
    /// An executor for `tools` under `config`.
    pub fn new(tools: Arc<ToolSet>, config: ToolConfig) -> Self {
        let mut per_tool = HashMap::new();
        let mut groups = HashMap::new();
        for tool in tools.iter() {
            let concurrency = tool.concurrency();
            if let Some(limit) = concurrency.max_in_flight {
                per_tool.insert(tool.name(), Arc::new(Semaphore::new(limit.max(1))));
            }
            if let Some(group) = concurrency.exclusive_group {
                groups
                    .entry(group)
                    .or_insert_with(|| Arc::new(Semaphore::new(1)));
            }
        }
        let limits = Limits {
            global: Arc::new(Semaphore::new(config.max_concurrency.max(1))),
            per_tool,
            groups,
        };
        Self {
            tools,
            config: Arc::new(config),
            approval: None,
            on_tool_called: None,
            on_response_received: None,
            limits: Arc::new(limits),
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
        let decided = self
            .approval
            .as_ref()
            .map_or(Approval::Unspecified, |rule| rule(call, tool));
        let decided = match decided {
            Approval::Unspecified => tool.approval(&call.arguments),
            decided => decided,
        };
        match decided {
            Approval::Required => true,
            Approval::NotRequired => false,
            Approval::Unspecified => {
                self.config.destructive_requires_approval && tool.annotations().is_destructive()
            }
        }
    }

    /// Runs one turn's calls and returns one result per call, in call order.
    ///
    /// Calls waiting for approval (and not in `turn`'s approved set), calls of external
    /// tools and calls an `on_tool_called` hook pauses are returned pending, without
    /// running; the others run. A call's timeout counts from when it starts running,
    /// not while it waits for a concurrency permit. Nothing started here is left
    /// running when this returns, or when this future is dropped.
    pub async fn execute(&self, calls: &[ToolCall], turn: &TurnContext) -> Vec<ToolCallResult> {
        let mut results: Vec<Option<ToolCallResult>> = vec![None; calls.len()];
        let mut to_run = Vec::new();
        let mut seen = HashSet::new();
        for (index, call) in calls.iter().enumerate() {
            let repeated = !seen.insert(call.id.as_str());
            match self.plan(call, repeated, turn).await {
                Plan::Done(result) => {
                    if !result.outcome.is_pending() {
                        announce_settled(&result, &turn.sinks);
                    }
                    results[index] = Some(*result);
                }
                Plan::Run(tool, policy) => to_run.push((index, tool, policy)),
            }
        }
        // Every runnable call is cancellable from now on, including those still queued
        // behind a batch.
        let mut jobs = Vec::with_capacity(to_run.len());
        let mut registered = Registered {
            control: &turn.control,
            ids: Vec::with_capacity(to_run.len()),
        };
        for (index, tool, policy) in to_run {
            let call = calls[index].clone();
            let token = turn.control.register(&call.id);
            registered.ids.push(call.id.clone());
            jobs.push(self.job(index, call, tool, policy, token, turn));
        }
        let mut batch = Vec::new();
        for job in jobs {
            if self.runs_in_parallel(job.tool.as_ref()) {
                batch.push(job);
            } else {
                run_batch(std::mem::take(&mut batch), &mut results, turn).await;
                run_batch(vec![job], &mut results, turn).await;
            }
        }
        run_batch(batch, &mut results, turn).await;
        results
            .into_iter()
            .zip(calls)
            .map(|(result, call)| {
                // Every slot is filled above; an empty one would be a bug here, and the
                // model still deserves an answer rather than a crash.
                result.unwrap_or_else(|| ToolCallResult {
                    call: call.clone(),
                    outcome: ToolOutcome::Err(ToolError::execution("the call was not run")),
                    policy: ErrorPolicy::ReturnToModel,
                    context_update: None,
                    next_turn: None,
                })
            })
            .collect()
    }

    /// The result of an external call whose output the application supplied: validated
    /// and cut to the budget like any other.
    pub fn complete_external(&self, call: &ToolCall, output: Vec<Content>) -> ToolCallResult {
        let Some(tool) = self.tools.get(&call.name) else {
            return self.failed(
                call,
                ToolError::unknown_tool(&call.name, self.tools.iter().map(|t| t.name())),
            );
        };
        let policy = self.policy_for(tool.as_ref());
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
        ToolCallResult {
            call: call.clone(),
            outcome,
            policy,
            context_update: None,
            next_turn: None,
        }
    }

    async fn plan(&self, call: &ToolCall, repeated: bool, turn: &TurnContext) -> Plan {
        if repeated {
            return Plan::Done(Box::new(self.failed(
                call,
                ToolError::invalid_arguments(format!(
                    "call id `{}` was used twice in one turn; each call needs its own id",
                    call.id
                )),
            )));
        }
        let tool = match &turn.offered {
            Some(offered) if !offered.contains(&call.name) => {
                let error = ToolError::unknown_tool(&call.name, offered.iter().map(String::as_str));
                return Plan::Done(Box::new(self.failed(call, error)));
            }
            _ => {
                let activation = crate::context::ActivationContext {
                    session_id: turn.session_id.clone(),
                    current_tools: match &turn.offered {
                        Some(offered) => offered.iter().cloned().collect(),
                        None => Vec::new(),
                    },
                    workspace: turn.workspace.clone().unwrap_or_default(),
                };
                match self.tools.resolve(&call.name, &activation).await {
                    Ok(tool) => tool.clone(),
                    Err(error) => return Plan::Done(Box::new(self.failed(call, error))),
                }
            }
        };
        if !call.arguments.is_object() {
            let error = ToolError::invalid_arguments(format!(
                "Invalid arguments: expected a JSON object, got {}",
                json_kind(&call.arguments)
            ));
            return Plan::Done(Box::new(self.failed(call, error)));
        }
        let policy = self.policy_for(tool.as_ref());
        let pending = if tool.is_external() {
            Some(ToolOutcome::PendingExternal)
        } else if !turn.approved.contains(&call.id) && self.needs_approval(call, tool.as_ref()) {
            Some(ToolOutcome::PendingApproval)
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
            Some(outcome) => Plan::Done(Box::new(ToolCallResult {
                call: call.clone(),
                outcome,
                policy,
                context_update: None,
                next_turn: None,
            })),
            None => Plan::Run(tool, policy),
        }
    }

    fn policy_for(&self, tool: &dyn Tool) -> ErrorPolicy {
        self.config.on_error.unwrap_or_else(|| tool.on_error())
    }

    /// A call that failed before running; the policy follows the error's kind.
    fn failed(&self, call: &ToolCall, error: ToolError) -> ToolCallResult {
        let policy = match error.kind() {
            ToolErrorKind::UnknownTool => self.config.on_unknown_tool,
            _ => self.config.on_invalid_arguments,
        };
        ToolCallResult {
            call: call.clone(),
            outcome: ToolOutcome::Err(error),
            policy,
            context_update: None,
            next_turn: None,
        }
    }

    fn runs_in_parallel(&self, tool: &dyn Tool) -> bool {
        match tool.concurrency().sequential {
            Some(sequential) => !sequential,
            None => match self.config.parallel {
                ParallelRule::EffectHints => {
                    let hints = tool.annotations();
                    hints.is_read_only() || hints.is_idempotent()
                }
                ParallelRule::All => true,
                ParallelRule::None => false,
            },
        }
    }

    /// Retries apply only to tools stated read-only or idempotent: running any other
    /// tool twice could repeat a side effect.
    fn retries_for(&self, tool: &dyn Tool) -> u32 {
        let hints = tool.annotations();
        if hints.is_read_only() || hints.is_idempotent() {
            self.config.max_retries
        } else {
            0
        }
    }

    fn budget(&self, content: Vec<Content>) -> Vec<Content> {
        match self.config.max_output_chars {
            Some(max) => truncate_output(content, max),
            None => content,
        }
    }

    fn job(
        &self,
        index: usize,
        call: ToolCall,
        tool: Arc<dyn Tool>,
        policy: ErrorPolicy,
        token: CancellationToken,
        turn: &TurnContext,
    ) -> Job {
        let concurrency = tool.concurrency();
        let retries = self.retries_for(tool.as_ref());
        // The fixed acquisition order (group, tool, global) is what keeps the limits
        // free of deadlock; see the module docs.
        let mut permits = Vec::with_capacity(3);
        if let Some(group) = concurrency
            .exclusive_group
            .as_ref()
            .and_then(|g| self.limits.groups.get(g))
        {
            permits.push(group.clone());
        }
        if let Some(limit) = self.limits.per_tool.get(tool.name()) {
            permits.push(limit.clone());
        }
        permits.push(self.limits.global.clone());
        let timeout_ms = tool
            .timeout_ms()
            .unwrap_or(self.config.default_tool_timeout_ms);
        let context_slot = Arc::new(Mutex::new(None));
        let next_turn = NextTurn::default();
        let reporter = Arc::new(Reporter {
            tool: tool.clone(),
            name: call.name.clone(),
            sinks: turn.sinks.clone(),
            context_slot: context_slot.clone(),
        });
        let mut ctx = ToolContext::new(turn.session_id.as_str())
            .with_call_id(call.id.as_str())
            .with_cancellation(token.clone())
            .with_reporter(reporter)
            .with_state(AppContext(turn.app_context.clone()))
            .with_state(next_turn.clone());
        if let Some(workspace) = &turn.workspace {
            ctx = ctx.with_workspace(workspace.clone());
        }
        let ctx = self.tools.context_for(&ctx).into_owned();
        Job {
            index,
            call,
            tool,
            policy,
            token,
            permits,
            timeout_ms,
            retries,
            ctx,
            context_slot,
            next_turn,
            max_output_chars: self.config.max_output_chars,
            on_invalid_arguments: self.config.on_invalid_arguments,
            control: turn.control.clone(),
            sinks: turn.sinks.clone(),
        }
    }
}

/// One call, ready to run.
struct Job {
    index: usize,
    call: ToolCall,
    tool: Arc<dyn Tool>,
    policy: ErrorPolicy,
    token: CancellationToken,
    permits: Vec<Arc<Semaphore>>,
    timeout_ms: u64,
    retries: u32,
    ctx: ToolContext,
    context_slot: Arc<Mutex<Option<Value>>>,
    next_turn: NextTurn,
    max_output_chars: Option<usize>,
    on_invalid_arguments: ErrorPolicy,
    control: RunControl,
    sinks: Sinks,
}

/// Unregisters this turn's calls from the control however `execute` ends, dropped
/// mid-turn included, so no stale id stays cancellable.
struct Registered<'a> {
    control: &'a RunControl,
    ids: Vec<String>,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        for id in &self.ids {
            self.control.unregister(id);
        }
    }
}

/// Runs `jobs` concurrently and stores each result at its call's index.
async fn run_batch(jobs: Vec<Job>, results: &mut [Option<ToolCallResult>], turn: &TurnContext) {
    if jobs.is_empty() {
        return;
    }
    let mut set = JoinSet::new();
    let mut by_task = HashMap::new();
    let mut calls = HashMap::new();
    for job in jobs {
        let index = job.index;
        calls.insert(index, (job.call.clone(), job.policy));
        let handle = set.spawn(drive(job));
        by_task.insert(handle.id(), index);
    }
    while let Some(joined) = set.join_next_with_id().await {
        match joined {
            Ok((_, (index, result))) => results[index] = Some(result),
            Err(error) => {
                // `drive` is our code and does not panic; if it ever did, the call still
                // gets an answer and its neighbours are unaffected.
                if let Some(&index) = by_task.get(&error.id())
                    && let Some((call, policy)) = calls.remove(&index)
                {
                    turn.control.unregister(&call.id);
                    results[index] = Some(ToolCallResult {
                        call,
                        outcome: ToolOutcome::Err(ToolError::execution(format!(
                            "the runtime failed while running the call: {error}"
                        ))),
                        policy,
                        context_update: None,
                        next_turn: None,
                    });
                }
            }
        }
    }
}

/// Aborts the task when dropped, so a call abandoned for any reason (timeout,
/// cancellation, the whole turn dropped) does not keep running.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs one call: permits, then the tool in its own task under timeout and
/// cancellation, then validation and the budget. Inside a `tool_call` span.
/// One run of the tool, in its own task, under the timeout and the call's token.
async fn attempt(
    tool: &Arc<dyn Tool>,
    args: &Value,
    ctx: ToolContext,
    token: &CancellationToken,
    timeout_ms: u64,
    span: &tracing::Span,
) -> Result<Vec<Content>, ToolError> {
    let name = tool.name();
    let task_tool = tool.clone();
    let args = args.clone();
    let mut task = AbortOnDrop(tokio::spawn(
        async move {
            let output = task_tool.call(&args, &ctx).await.map_err(ToolError::from)?;
            task_tool
                .validate_output(&output)
                .map_err(|reason| ToolError::execution(format!("Invalid tool output: {reason}")))?;
            Ok(output)
        }
        .instrument(span.clone()),
    ));
    let timeout = tokio::time::sleep(Duration::from_millis(timeout_ms));
    // `task` drops at the end of this function whatever happened, which aborts it.
    tokio::select! {
        biased;
        joined = &mut task.0 => match joined {
            Ok(output) => output,
            Err(error) if error.is_panic() => Err(ToolError::execution(format!(
                "tool panicked: {}",
                panic_message(error.into_panic())
            ))),
            Err(_) => Err(ToolError::cancelled(name)),
        },
        () = token.cancelled() => Err(ToolError::cancelled(name)),
        () = timeout => {
            // Cooperative work the tool started elsewhere (with a clone of its context)
            // sees the cancellation; the call itself is aborted when `task` drops.
            token.cancel();
            Err(ToolError::timeout(name, timeout_ms))
        }
    }
}

fn call_span(call: &ToolCall) -> tracing::Span {
    tracing::info_span!(
        "tool_call",
        tool = %call.name,
        call_id = %call.id,
        outcome = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
    )
}

/// Publishes a call that ended without running (refused before it ran, rejected, or
/// answered by the application): a `tool_call` span and a `ToolFinished` event, as a
/// call that ran gets.
pub(crate) fn announce_settled(result: &ToolCallResult, sinks: &Sinks) {
    announce(&call_span(&result.call), sinks, result, 0);
}

fn announce(span: &tracing::Span, sinks: &Sinks, result: &ToolCallResult, duration_ms: u64) {
    let label = match &result.outcome {
        ToolOutcome::Ok(_) => "ok",
        ToolOutcome::Err(error) => error.kind().as_str(),
        ToolOutcome::PendingApproval | ToolOutcome::PendingExternal | ToolOutcome::PendingInput => {
            "pending"
        }
    };
    span.record("outcome", label);
    span.record("duration_ms", duration_ms);
    span.in_scope(|| tracing::debug!(outcome = label, duration_ms, "tool call finished"));
    sinks.emit(AgentEvent::ToolFinished {
        call_id: result.call.id.clone(),
        name: result.call.name.clone(),
        outcome: result.outcome.clone(),
        duration_ms,
    });
}

async fn drive(job: Job) -> (usize, ToolCallResult) {
    let span = call_span(&job.call);
    let index = job.index;
    let call_id = job.call.id.clone();
    let control = job.control.clone();
    let result = run_call(job, span.clone()).instrument(span).await;
    control.unregister(&call_id);
    (index, result)
}

async fn run_call(job: Job, span: tracing::Span) -> ToolCallResult {
    let Job {
        call,
        tool,
        policy,
        token,
        permits,
        timeout_ms,
        retries,
        ctx,
        context_slot,
        next_turn,
        max_output_chars,
        on_invalid_arguments,
        sinks,
        ..
    } = job;
    // Arguments the tool could not decode are the model's mistake: they follow the
    // config's policy for them, not the tool's.
    let policies = Policies {
        tool: policy,
        invalid_arguments: on_invalid_arguments,
    };
    let name = call.name.clone();
    let mut held: Vec<OwnedSemaphorePermit> = Vec::with_capacity(permits.len());
    for semaphore in permits {
        tokio::select! {
            biased;
            () = token.cancelled() => {
                return finish(&span, &sinks, call, Err(ToolError::cancelled(&name)), policies, None, Duration::ZERO);
            }
            permit = semaphore.acquire_owned() => match permit {
                Ok(permit) => held.push(permit),
                // Our semaphores are never closed; answer rather than assume.
                Err(_) => {
                    let error = ToolError::execution("the concurrency limiter was shut down");
                    return finish(&span, &sinks, call, Err(error), policies, None, Duration::ZERO);
                }
            },
        }
    }
    sinks.emit(AgentEvent::ToolStarted {
        call_id: call.id.clone(),
        name: name.clone(),
        arguments: call.arguments.clone(),
    });
    let started = Instant::now();
    let mut retries_left = retries;
    let outcome = loop {
        // Each attempt has its own token, so a timed-out attempt's cancellation does
        // not reach the next one, while cancelling the call reaches every attempt.
        let attempt_token = token.child_token();
        let attempt_ctx = ctx.clone().with_cancellation(attempt_token.clone());
        let outcome = attempt(
            &tool,
            &call.arguments,
            attempt_ctx,
            &attempt_token,
            timeout_ms,
            &span,
        )
        .await;
        match &outcome {
            Err(error)
                if retries_left > 0
                    && !token.is_cancelled()
                    && matches!(
                        error.kind(),
                        ToolErrorKind::Timeout | ToolErrorKind::Execution
                    ) =>
            {
                retries_left -= 1;
                span.in_scope(
                    || tracing::debug!(error = %error, retries_left, "retrying tool call"),
                );
            }
            _ => break outcome,
        }
    };
    drop(held);
    let outcome = outcome.map(|content| match max_output_chars {
        Some(max) => truncate_output(content, max),
        None => content,
    });
    let context_update = context_slot
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let mut result = finish(
        &span,
        &sinks,
        call,
        outcome,
        policies,
        context_update,
        started.elapsed(),
    );
    result.next_turn = next_turn.take();
    result
}

/// The error policies that may apply to a call's failure.
#[derive(Clone, Copy)]
struct Policies {
    tool: ErrorPolicy,
    invalid_arguments: ErrorPolicy,
}

fn finish(
    span: &tracing::Span,
    sinks: &Sinks,
    call: ToolCall,
    outcome: Result<Vec<Content>, ToolError>,
    policies: Policies,
    context_update: Option<Value>,
    elapsed: Duration,
) -> ToolCallResult {
    let duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let (outcome, policy) = match outcome {
        Ok(content) => (ToolOutcome::Ok(content), policies.tool),
        Err(error) => {
            let policy = match error.kind() {
                // The application cancelled this call and wants the run to go on.
                ToolErrorKind::Cancelled => ErrorPolicy::ReturnToModel,
                ToolErrorKind::InvalidArguments => policies.invalid_arguments,
                _ => policies.tool,
            };
            (ToolOutcome::Err(error), policy)
        }
    };
    let result = ToolCallResult {
        call,
        outcome,
        policy,
        context_update,
        next_turn: None,
    };
    announce(span, sinks, &result, duration_ms);
    result
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a non-text panic payload".to_owned()
    }
}

/// What the executor installs in each call's context.
struct Reporter {
    tool: Arc<dyn Tool>,
    name: String,
    sinks: Sinks,
    context_slot: Arc<Mutex<Option<Value>>>,
}

impl CallReporter for Reporter {
    fn progress(&self, call_id: &str, value: Value) -> Result<(), ToolError> {
        self.tool
            .validate_progress(&value)
            .map_err(|reason| ToolError::execution(format!("Invalid tool progress: {reason}")))?;
        self.sinks.emit(AgentEvent::ToolProgress {
            call_id: call_id.to_owned(),
            name: self.name.clone(),
            value,
        });
        Ok(())
    }

    fn set_context(&self, call_id: &str, value: Value) {
        self.sinks.emit(AgentEvent::ContextSet {
            call_id: call_id.to_owned(),
            value: value.clone(),
        });
        *self
            .context_slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(value);
    }
}

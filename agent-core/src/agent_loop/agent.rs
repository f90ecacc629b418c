//! [`Agent`]: the loop that asks the model, runs the tools it calls, and asks again,
//! until a final answer, a pause for a person, or the turn limit.
//!
//! ```
//! use toolwright_core::{
//!     Agent, llm::AssistantMessage, Content, tool::ExternalTool, RunOutcome, testing::ScriptedLlm, llm::ToolCall,
//! };
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> toolwright_core::AgentResult<()> {
//! let llm = ScriptedLlm::new([
//!     AssistantMessage::tool_calls([ToolCall::new("c1", "lookup", json!({"id": "T-1"}))]),
//!     AssistantMessage::text("T-1 is about logging in."),
//! ]);
//! // Its output comes from the application: the run pauses at each call.
//! let lookup = ExternalTool::new("lookup", "Load a ticket.", json!({"type": "object"}));
//! let agent = Agent::builder(llm).system_prompt("Be brief.").register_tool(lookup).build()?;
//!
//! let mut run = agent.start("What is T-1 about?");
//! let RunOutcome::Paused { pending } = agent.run(&mut run).await? else { unreachable!() };
//! run.supply_output(&pending[0].call.id, vec![Content::text("Cannot log in")])?;
//! let outcome = agent.run(&mut run).await?;
//! assert_eq!(outcome, RunOutcome::Finished { answer: "T-1 is about logging in.".into() });
//! # Ok(()) }
//! ```

use crate::agent_loop::checkpoint::{Checkpoint, CheckpointStep, Checkpointer};
use crate::agent_loop::journal::Journal;
use crate::agent_loop::llm::{LlmClient, LlmRequest, collect_stream};
use crate::agent_loop::run::{CallState, PendingCall, RunOutcome, RunState, RunStatus, TurnCall};
use crate::agent_loop::seal::StateSeal;
use crate::execution::control::RunControl;
use crate::execution::events::{AgentEvent, EventSink, Sinks};
use crate::execution::executor::{CallHookFn, Executor, HookDecision, ResponseHookFn, TurnContext};
use crate::execution::pipeline::{ApprovalRule, announce_settled};
use crate::model::config::ToolConfig;
use crate::model::content::Content;
use crate::model::context::ActivationContext;
use crate::model::error::{AgentError, AgentResult, ToolError};
use crate::model::llm_error::LlmError;
use crate::model::message::{
    AssistantMessage, FinishReason, LlmEvent, Message, ModelSettings, OutputSchema, ToolCall,
};
use crate::model::outcome::{Settled, ToolCallResult, ToolOutcome};
use crate::model::search::{SearchTool, ToolSearch, TurnTools};
use crate::model::set::{ToolDefinition, ToolSet};
use crate::model::tool::ErrorPolicy;
use crate::model::tool::{ApprovalPolicy, Tool};
use crate::model::usage::{UsageLimit, UsageLimits};
use futures::StreamExt;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use tracing::Instrument;

/// Model turns a run may take for each user message when the builder does not say.
pub const DEFAULT_MAX_TURNS: u32 = 16;

/// How many invalid final answers [`Agent::run_typed`] sends back to the model when the
/// builder does not say.
pub const DEFAULT_OUTPUT_RETRIES: u32 = 1;

/// How [`Agent::run_typed`] returned: the answer as a `T`, or a stop as in
/// [`RunOutcome`].
#[derive(Debug, Clone, PartialEq)]
pub enum TypedOutcome<T> {
    /// The model's final answer, decoded.
    Finished(T),
    /// The run waits on these calls: decide them on the state, then run it again.
    Paused {
        /// The calls waiting.
        pending: Vec<PendingCall>,
    },
    /// The turn limit was reached without a final answer.
    TurnLimit,
    /// The run was cancelled.
    Cancelled,
}

type StateInit = Box<dyn FnOnce(&mut ToolSet) + Send>;

/// Computes a run's instructions from its state (see [`AgentBuilder::system_prompt_fn`]).
type SystemPromptFn = Arc<dyn Fn(&RunState) -> String + Send + Sync>;

/// Makes `text` the run's leading system message: replaces the one there, adds one if
/// there is none, removes it when `text` is empty.
fn set_system_prompt(messages: &mut Vec<Message>, text: String) {
    let leading = matches!(messages.first(), Some(Message::System { .. }));
    match (leading, text.is_empty()) {
        (true, true) => {
            messages.remove(0);
        }
        (true, false) => messages[0] = Message::system(text),
        (false, true) => {}
        (false, false) => messages.insert(0, Message::system(text)),
    }
}

/// Builds an [`Agent`]: `Agent::builder(llm).system_prompt(..).register_tool(..).build()`.
///
/// Registration errors (a taken name, an invalid schema) are kept and reported by
/// [`build`](Self::build), so the builder chains without `?`.
pub struct AgentBuilder {
    llm: Arc<dyn LlmClient>,
    system_prompt: Option<String>,
    system_prompt_fn: Option<SystemPromptFn>,
    tools: ToolSet,
    error: Option<AgentError>,
    config: ToolConfig,
    max_turns: u32,
    approval: Option<ApprovalRule>,
    on_tool_called: Option<CallHookFn>,
    on_response_received: Option<ResponseHookFn>,
    state: Vec<StateInit>,
    sinks: Sinks,
    workspace: Option<PathBuf>,
    pub(crate) seal: StateSeal,
    pub(crate) checkpointer: Option<Arc<dyn Checkpointer>>,
    settings: ModelSettings,
    limits: UsageLimits,
    output_retries: u32,
    tool_search: ToolSearch,
}

impl AgentBuilder {
    /// Which tools the model finds by searching instead of reading them all on every
    /// turn (default [`ToolSearch::Off`]): the provider's own tool search where the
    /// client has one ([`LlmClient::native_tool_search`]), otherwise a built-in
    /// [`search_tools`](crate::model::search::SEARCH_TOOL) tool. A found tool runs with the same
    /// policies as any other. The name `search_tools` is then taken.
    pub fn tool_search(mut self, mode: ToolSearch) -> Self {
        self.tool_search = mode;
        self
    }

    /// Model settings for every request of every run, over the client's own and under
    /// each run's ([`RunState::settings`]) and each request's
    /// ([`RunState::next_settings`]).
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Limits on what each run may spend (see [`UsageLimits`]); a run's own
    /// [`usage_limits`](RunState::usage_limits) apply too, the lower winning.
    pub fn usage_limits(mut self, limits: UsageLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How many times [`run_typed`](Agent::run_typed) sends an answer that does not
    /// match the output type back to the model, with what was wrong, before the run
    /// fails (default [`DEFAULT_OUTPUT_RETRIES`]).
    pub fn output_retries(mut self, retries: u32) -> Self {
        self.output_retries = retries;
        self
    }

    /// The instructions every run starts with.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Instructions computed from the run before each model request: what the run has
    /// done so far ([`RunState::turn`], [`RunState::usage`]), the application context
    /// its tools set ([`RunState::context`]), the time. The text becomes the run's first
    /// message, a system message, replacing the one there (what
    /// [`system_prompt`](Self::system_prompt) set, or the last computed), so a stored
    /// run shows what the model was told; an empty text removes it.
    ///
    /// ```
    /// use toolwright_core::{Agent, testing::RuleLlm};
    ///
    /// # fn main() -> toolwright_core::AgentResult<()> {
    /// let agent = Agent::builder(RuleLlm::new())
    ///     .system_prompt_fn(|run| format!("Be brief. This is turn {}.", run.turn + 1))
    ///     .build()?;
    /// # let _ = agent; Ok(()) }
    /// ```
    pub fn system_prompt_fn(
        mut self,
        prompt: impl Fn(&RunState) -> String + Send + Sync + 'static,
    ) -> Self {
        self.system_prompt_fn = Some(Arc::new(prompt));
        self
    }

    /// Adds a tool.
    pub fn register_tool<T: Tool + 'static>(self, tool: T) -> Self {
        self.register_arc(Arc::new(tool))
    }

    /// Adds a shared tool.
    pub fn register_arc(mut self, tool: Arc<dyn Tool>) -> Self {
        if let Err(error) = self.tools.register_arc(tool) {
            self.error.get_or_insert(error);
        }
        self
    }

    /// Adds every tool of `set` (from `tools![...]`, say), and its state.
    pub fn tools(mut self, set: ToolSet) -> Self {
        if let Err(error) = self.tools.extend(set) {
            self.error.get_or_insert(error);
        }
        self
    }

    /// How tools are run.
    pub fn config(mut self, config: ToolConfig) -> Self {
        self.config = config;
        self
    }

    /// At most this many model turns for each user message (default
    /// [`DEFAULT_MAX_TURNS`]): a run that reaches it stops with
    /// [`RunOutcome::TurnLimit`], and a user message
    /// ([`push_user`](crate::RunState::push_user)) lets it go on.
    pub fn max_turns(mut self, turns: u32) -> Self {
        self.max_turns = turns;
        self
    }

    /// Makes `value` available to `State<T>` parameters of every tool.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state
            .push(Box::new(move |set| set.insert_state(value)));
        self
    }

    /// An approval rule for every call, consulted before the tool's own: return
    /// `ApprovalPolicy::Required` or `NotRequired` to decide, `Unspecified` to let the tool
    /// (and the destructive default) decide.
    pub fn approval_rule(
        mut self,
        rule: impl Fn(&ToolCall, &dyn Tool) -> ApprovalPolicy + Send + Sync + 'static,
    ) -> Self {
        self.approval = Some(Arc::new(rule));
        self
    }

    /// An interactive hook, called before each approved call runs: let it run
    /// ([`HookDecision::Run`]), pause the run until the application supplies the
    /// call's output ([`HookDecision::Pause`], pending kind `human_input`), or answer it
    /// without running the tool ([`HookDecision::Respond`]).
    pub fn on_tool_called(
        mut self,
        hook: impl Fn(&ToolCall, &dyn Tool) -> HookDecision + Send + Sync + 'static,
    ) -> Self {
        self.on_tool_called = Some(Arc::new(hook));
        self
    }

    /// Checks or transforms output the application supplies (for external tools and
    /// paused calls) before the tool's output validator; an `Err` fails the call with
    /// `Invalid tool output: ...`.
    pub fn on_response_received(
        mut self,
        hook: impl Fn(&ToolCall, Vec<Content>) -> Result<Vec<Content>, String> + Send + Sync + 'static,
    ) -> Self {
        self.on_response_received = Some(Arc::new(hook));
        self
    }

    /// Calls `f` with every event of every run, in order.
    pub fn on_event(mut self, f: impl Fn(AgentEvent) + Send + Sync + 'static) -> Self {
        self.sinks.push(EventSink::new(f));
        self
    }

    /// The working directory tools see.
    pub fn workspace(mut self, workspace: impl Into<PathBuf>) -> Self {
        self.workspace = Some(workspace.into());
        self
    }

    /// The agent, or the first registration error.
    pub fn build(mut self) -> AgentResult<Agent> {
        if let Some(error) = self.error {
            return Err(error);
        }
        self.seal.check()?;
        for init in self.state {
            init(&mut self.tools);
        }
        let search = SearchTool::over(&self.tools, self.tool_search).map(Arc::new);
        if let Some(search) = &search {
            self.tools.register_arc(search.clone())?;
        }
        let mut executor = Executor::new(Arc::new(self.tools), self.config);
        if let Some(rule) = self.approval {
            executor = executor.with_approval_rule(rule);
        }
        if let Some(hook) = self.on_tool_called {
            executor = executor.with_on_tool_called(hook);
        }
        if let Some(hook) = self.on_response_received {
            executor = executor.with_on_response_received(hook);
        }
        Ok(Agent {
            llm: self.llm,
            system_prompt: self.system_prompt,
            system_prompt_fn: self.system_prompt_fn,
            executor,
            max_turns: self.max_turns,
            sinks: self.sinks,
            workspace: self.workspace,
            seal: self.seal,
            checkpointer: self.checkpointer,
            settings: self.settings,
            limits: self.limits,
            output_retries: self.output_retries,
            tool_search: self.tool_search,
            search,
        })
    }
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("tools", &self.tools)
            .field("config", &self.config)
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

/// An agent: a model, tools and the policies to run them. Runs are values
/// ([`RunState`]), so one agent serves any number of runs, and a run paused in one
/// process can be resumed by an agent built the same way in another.
pub struct Agent {
    llm: Arc<dyn LlmClient>,
    system_prompt: Option<String>,
    system_prompt_fn: Option<SystemPromptFn>,
    executor: Executor,
    max_turns: u32,
    sinks: Sinks,
    workspace: Option<PathBuf>,
    pub(crate) seal: StateSeal,
    pub(crate) checkpointer: Option<Arc<dyn Checkpointer>>,
    settings: ModelSettings,
    limits: UsageLimits,
    output_retries: u32,
    tool_search: ToolSearch,
    search: Option<Arc<SearchTool>>,
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("executor", &self.executor)
            .field("max_turns", &self.max_turns)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// Starts building an agent on `llm`.
    pub fn builder(llm: impl LlmClient + 'static) -> AgentBuilder {
        AgentBuilder {
            llm: Arc::new(llm),
            system_prompt: None,
            system_prompt_fn: None,
            tools: ToolSet::new(),
            error: None,
            config: ToolConfig::default(),
            max_turns: DEFAULT_MAX_TURNS,
            approval: None,
            on_tool_called: None,
            on_response_received: None,
            state: Vec::new(),
            sinks: Sinks::default(),
            workspace: None,
            seal: StateSeal::default(),
            checkpointer: None,
            settings: ModelSettings::default(),
            limits: UsageLimits::default(),
            output_retries: DEFAULT_OUTPUT_RETRIES,
            tool_search: ToolSearch::Off,
        }
    }

    /// The agent's model settings (see [`AgentBuilder::settings`]).
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// The executor running this agent's tools.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The agent's tools.
    pub fn tools(&self) -> &ToolSet {
        self.executor.tools()
    }

    /// A new run answering `input`.
    pub fn start(&self, input: impl Into<String>) -> RunState {
        let mut messages = Vec::with_capacity(2);
        if let Some(prompt) = &self.system_prompt {
            messages.push(Message::system(prompt.clone()));
        }
        messages.push(Message::user(input));
        RunState::new(messages)
    }

    /// Answers `input` in one run: the model's final answer, or
    /// [`AgentError::Unfinished`] if the run paused for a person, reached the turn
    /// limit or was cancelled. A run that may need approval is better held as a
    /// [`RunState`] ([`start`](Self::start), then [`run`](Self::run)), which can be
    /// approved and resumed.
    ///
    /// ```
    /// # use toolwright_core::{Agent, testing::RuleLlm};
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> toolwright_core::AgentResult<()> {
    /// let agent = Agent::builder(RuleLlm::new()).build()?;
    /// let answer = agent.prompt("Hello").await?;
    /// # assert!(!answer.is_empty());
    /// # Ok(()) }
    /// ```
    pub async fn prompt(&self, input: impl Into<String>) -> AgentResult<String> {
        let mut run = self.start(input);
        match self.run(&mut run).await? {
            RunOutcome::Finished { answer } => Ok(answer),
            unfinished => Err(AgentError::Unfinished(Box::new(unfinished))),
        }
    }

    /// Runs until a final answer, a pause or the turn limit. See [`run_with`](Self::run_with).
    pub async fn run(&self, state: &mut RunState) -> AgentResult<RunOutcome> {
        self.run_with(state, &RunControl::new()).await
    }

    /// Runs `state` under `control` (to cancel it, or one of its calls, from another
    /// task) until a final answer, a pause for a person, or the turn limit.
    ///
    /// A paused run is resumed by calling this again after deciding its pending calls
    /// on the state. A tool error under `FailRun`, or a model failure, is an `Err`; the
    /// state then says what happened (`Failed` for a tool error; a model failure leaves
    /// the run ready to retry).
    ///
    /// The run happens inside an `agent_run` span (run id, session id, and the
    /// OpenTelemetry GenAI attributes: `gen_ai.operation.name = "invoke_agent"`, the
    /// model, the tokens spent); each model request inside it has a `model_call` span
    /// (`gen_ai.operation.name = "chat"`, the settings sent, the tokens, the finish
    /// reason), and each tool call a `tool_call` span. `docs/observability.md` lists the
    /// fields and shows how to export them to an OTLP collector.
    pub async fn run_with(
        &self,
        state: &mut RunState,
        control: &RunControl,
    ) -> AgentResult<RunOutcome> {
        self.run_inner(state, control, None, None, None).await
    }

    /// Runs `state` as [`run_with`](Self::run_with) does, with each model call and each
    /// tool call a step of `journal`: a durable-execution engine records each step's
    /// result, and a run replayed after a crash gets the recorded results instead of
    /// asking the model or running the tool again. `toolwright-restate` runs agents on
    /// Restate this way.
    ///
    /// The calls of a turn run one after another, each its own step, so that a crash
    /// in the middle of a turn repeats none of the calls that ended before it. A tool
    /// that was running when the process died has no recorded result and runs again,
    /// with the same [`idempotency_key`](crate::ToolContext::idempotency_key). The model
    /// is asked through [`LlmClient::complete`] (or [`LlmClient::stream`] when the run
    /// streams), inside its step.
    pub async fn run_journaled(
        &self,
        state: &mut RunState,
        control: &RunControl,
        journal: &dyn Journal,
    ) -> AgentResult<RunOutcome> {
        self.run_inner(state, control, None, None, Some(journal))
            .await
    }

    /// Runs `state` until the model's final answer decodes as a `T`, or a pause, or the
    /// turn limit. `T`'s JSON Schema goes with every request
    /// ([`LlmRequest::output`]): through the provider's structured-output mode, or as a
    /// final-answer tool where the provider has none. An answer that is not a valid `T`
    /// goes back to the model with what was wrong, up to
    /// [`output_retries`](AgentBuilder::output_retries) times; then the run fails with
    /// [`AgentError::InvalidOutput`]. A paused run is resumed by calling this again.
    ///
    /// ```
    /// use toolwright_core::{Agent, llm::AssistantMessage, testing::ScriptedLlm, agent::TypedOutcome};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema, Debug, PartialEq)]
    /// struct City { name: String, population: u64 }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> toolwright_core::AgentResult<()> {
    /// let llm = ScriptedLlm::new([AssistantMessage::text(r#"{"name": "Paris", "population": 2100000}"#)]);
    /// let agent = Agent::builder(llm).build()?;
    /// let mut run = agent.start("The capital of France?");
    /// let city = agent.run_typed::<City>(&mut run).await?;
    /// assert_eq!(city, TypedOutcome::Finished(City { name: "Paris".into(), population: 2_100_000 }));
    /// # Ok(()) }
    /// ```
    pub async fn run_typed<T: JsonSchema + DeserializeOwned>(
        &self,
        state: &mut RunState,
    ) -> AgentResult<TypedOutcome<T>> {
        let output = OutputSchema::of::<T>();
        let control = RunControl::new();
        let mut attempts = 0;
        loop {
            let answer = match self
                .run_inner(state, &control, None, Some(&output), None)
                .await?
            {
                RunOutcome::Finished { answer } => answer,
                RunOutcome::Paused { pending } => return Ok(TypedOutcome::Paused { pending }),
                RunOutcome::TurnLimit => return Ok(TypedOutcome::TurnLimit),
                RunOutcome::Cancelled => return Ok(TypedOutcome::Cancelled),
            };
            attempts += 1;
            let reason = match decode_output::<T>(&answer) {
                Ok(value) => return Ok(TypedOutcome::Finished(value)),
                Err(reason) => reason,
            };
            if attempts > self.output_retries {
                let error = AgentError::InvalidOutput { attempts, reason };
                state.status = RunStatus::Failed;
                state.error = Some(error.to_string());
                let mut sinks = self.sinks.clone();
                if let Some(sink) = control.events() {
                    sinks.push(sink.clone());
                }
                sinks.emit(AgentEvent::RunFailed {
                    error: error.to_string(),
                });
                return Err(error);
            }
            state.push_user(format!(
                "Your final answer is not valid: {reason}. Answer again with only a JSON \
                 value matching the schema `{}`.",
                output.name
            ))?;
        }
    }

    /// Runs `state` as [`run_with`](Self::run_with) does; with `streaming`, the model is
    /// asked through [`LlmClient::stream`] and its deltas go to every sink, `streaming`
    /// last.
    pub(crate) async fn run_inner(
        &self,
        state: &mut RunState,
        control: &RunControl,
        streaming: Option<EventSink>,
        output: Option<&OutputSchema>,
        journal: Option<&dyn Journal>,
    ) -> AgentResult<RunOutcome> {
        let span = tracing::info_span!(
            "agent_run",
            run_id = %state.run_id,
            session_id = %state.session_id,
            otel.name = "invoke_agent",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.provider.name = self.llm.provider_name(),
            gen_ai.request.model = self.llm.model_name(),
            gen_ai.conversation.id = %state.session_id,
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
        );
        let before = state.usage.tokens;
        let result = self
            .drive(state, control, streaming, output, journal)
            .instrument(span.clone())
            .await;
        // This call's tokens: a resumed run's span counts what it spent, not the run's
        // earlier calls.
        let spent = state.usage.tokens;
        span.record(
            "gen_ai.usage.input_tokens",
            spent.input_tokens.saturating_sub(before.input_tokens),
        );
        span.record(
            "gen_ai.usage.output_tokens",
            spent.output_tokens.saturating_sub(before.output_tokens),
        );
        result
    }

    async fn drive(
        &self,
        state: &mut RunState,
        control: &RunControl,
        streaming: Option<EventSink>,
        output: Option<&OutputSchema>,
        journal: Option<&dyn Journal>,
    ) -> AgentResult<RunOutcome> {
        let mut sinks = self.sinks.clone();
        if let Some(sink) = control.events() {
            sinks.push(sink.clone());
        }
        let deltas = streaming.is_some();
        if let Some(sink) = streaming {
            sinks.push(sink);
        }
        match state.status {
            RunStatus::Ready | RunStatus::WaitingForHuman => {}
            RunStatus::Finished | RunStatus::TurnLimit => {
                return Err(AgentError::InvalidState(
                    "the run has ended; add a user message with `push_user` to go on".to_owned(),
                ));
            }
            RunStatus::Failed | RunStatus::Cancelled => {
                return Err(AgentError::InvalidState(format!(
                    "the run is {:?} and cannot go on",
                    state.status
                )));
            }
        }
        loop {
            if control.is_cancelled() {
                return Ok(cancelled(state, &sinks));
            }
            if !state.calls.is_empty() {
                self.advance_turn(state, control, &sinks, journal).await?;
                if control.is_cancelled() {
                    return Ok(cancelled(state, &sinks));
                }
                if !state.calls.is_empty() {
                    let pending = state.pending();
                    state.status = RunStatus::WaitingForHuman;
                    self.checkpoint(state, CheckpointStep::Paused).await?;
                    sinks.emit(AgentEvent::WaitingForHuman {
                        pending: pending.clone(),
                    });
                    return Ok(RunOutcome::Paused { pending });
                }
                // The turn is over: the run is ready for the model, not waiting.
                state.status = RunStatus::Ready;
                self.checkpoint(state, CheckpointStep::ToolResults).await?;
            }
            state.status = RunStatus::Ready;
            if state.turns_since_user() >= self.max_turns {
                state.status = RunStatus::TurnLimit;
                sinks.emit(AgentEvent::TurnLimitReached {
                    max_turns: self.max_turns,
                });
                return Ok(RunOutcome::TurnLimit);
            }
            let limits = self.limits.tightest(&state.usage_limits);
            if let Some(max) = limits.requests
                && state.usage.requests >= max
            {
                return Err(over_limit(
                    state,
                    &sinks,
                    UsageLimit::Requests,
                    max + 1,
                    max,
                ));
            }
            let activation = ActivationContext {
                session_id: state.session_id.clone(),
                current_tools: state.offered_tools.clone(),
                workspace: self.workspace.clone().unwrap_or_default(),
            };
            let active = self.tools().active_definitions(&activation).await;
            let TurnTools {
                tools: definitions,
                deferred,
                offered,
            } = self
                .tool_search
                .turn_tools(
                    self.tools(),
                    self.search.as_deref(),
                    active,
                    &state.messages,
                    self.llm.native_tool_search(),
                    &activation,
                )
                .await;
            let turn = state.turn + 1;
            sinks.emit(AgentEvent::TurnStarted {
                turn,
                tools: offered.clone(),
            });
            // Layers, later winning: agent, run, this request; the client's own lie beneath.
            let settings = self
                .settings
                .merge(&state.settings)
                .merge(&state.next_settings);
            if let Some(prompt) = &self.system_prompt_fn {
                let text = prompt(state);
                set_system_prompt(&mut state.messages, text);
            }
            let request = LlmRequest::new(&state.messages, &definitions)
                .with_deferred(&deferred)
                .with_context(&state.context)
                .with_params(&state.next_turn)
                .with_settings(&settings);
            let request = match output {
                Some(output) => request.with_output(output),
                None => request,
            };
            let message = tokio::select! {
                biased;
                () = control.token().cancelled() => return Ok(cancelled(state, &sinks)),
                message = self.ask_once(request, turn, deltas, &sinks, journal) => message?,
            };
            state.turn = turn;
            state.offered_tools = offered;
            state.next_turn.clear();
            state.next_settings = ModelSettings::default();
            sinks.emit(AgentEvent::Message {
                turn,
                message: message.clone(),
            });
            state.messages.push(Message::Assistant(message.clone()));
            state.usage.requests += 1;
            state.usage.tool_calls += message.tool_calls.len() as u64;
            if let Some(usage) = message.usage {
                state.usage.tokens += usage;
            }
            if let Some((limit, used, max)) = limits.exceeded(&state.usage) {
                return Err(over_limit(state, &sinks, limit, used, max));
            }
            if message.is_final() {
                state.status = RunStatus::Finished;
                self.checkpoint(state, CheckpointStep::Finished).await?;
                let answer = message.text.unwrap_or_default();
                sinks.emit(AgentEvent::RunFinished {
                    answer: answer.clone(),
                });
                return Ok(RunOutcome::Finished { answer });
            }
            state.calls = message
                .tool_calls
                .into_iter()
                .map(|call| TurnCall {
                    call,
                    slot: CallState::Queued,
                })
                .collect();
            self.checkpoint(state, CheckpointStep::ModelAnswered)
                .await?;
        }
    }

    /// The model's answer to `request`, asked directly or as a step of `journal`.
    async fn ask_once(
        &self,
        request: LlmRequest<'_>,
        turn: u32,
        deltas: bool,
        sinks: &Sinks,
        journal: Option<&dyn Journal>,
    ) -> AgentResult<AssistantMessage> {
        let Some(journal) = journal else {
            return ask(&*self.llm, request, turn, deltas, sinks).await;
        };
        // The step owns its request, so the journal may hold it as long as it needs.
        let owned = OwnedRequest::of(&request);
        let llm = self.llm.clone();
        let sinks = sinks.clone();
        let step = async move { ask(&*llm, owned.request(), turn, deltas, &sinks).await };
        journal.model_call(turn, Box::pin(step)).await
    }

    /// Runs what can run of the turn in progress. When every call has ended, their
    /// results join the conversation in call order and the turn's calls are cleared;
    /// otherwise the calls still pending stay.
    async fn advance_turn(
        &self,
        state: &mut RunState,
        control: &RunControl,
        sinks: &Sinks,
        journal: Option<&dyn Journal>,
    ) -> AgentResult<()> {
        // Decisions that need no tool to run.
        for entry in &mut state.calls {
            let decided = match &mut entry.slot {
                CallState::Denied { reason } => RunState::denial(&entry.call, reason),
                CallState::Supplied { output } => self
                    .executor
                    .complete_external(&entry.call, std::mem::take(output)),
                _ => continue,
            };
            announce_settled(&decided.call, &decided.outcome, sinks);
            entry.slot = CallState::Done {
                result: Box::new(decided),
            };
        }
        let indexes: Vec<usize> = state
            .calls
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c.slot, CallState::Queued | CallState::Approved))
            .map(|(i, _)| i)
            .collect();
        if !indexes.is_empty() {
            let calls: Vec<ToolCall> = indexes
                .iter()
                .map(|&i| state.calls[i].call.clone())
                .collect();
            let approved = indexes
                .iter()
                .filter(|&&i| state.calls[i].slot == CallState::Approved)
                .map(|&i| state.calls[i].call.id.clone());
            let mut turn = TurnContext::new()
                .with_session_id(state.session_id.clone())
                .with_run_id(state.run_id.clone())
                .with_app_context(state.context.clone())
                .with_offered(state.offered_tools.iter().cloned())
                .with_approved(approved)
                .with_control(control.clone())
                .with_sinks(sinks.clone());
            if let Some(workspace) = &self.workspace {
                turn = turn.with_workspace(workspace.clone());
            }
            let results = match journal {
                None => self.executor.execute(calls, &turn).await,
                Some(journal) => self.execute_journaled(calls, &turn, journal).await?,
            };
            state.record(&indexes, results);
        }
        if control.is_cancelled() {
            return Ok(());
        }
        if let Some(error) = state
            .turn_results()
            .into_iter()
            .find(|r| r.fails_run())
            .and_then(|r| r.outcome.error().cloned())
        {
            state.status = RunStatus::Failed;
            state.error = Some(error.to_string());
            sinks.emit(AgentEvent::RunFailed {
                error: error.to_string(),
            });
            return Err(AgentError::Tool(error));
        }
        if state
            .calls
            .iter()
            .all(|c| matches!(c.slot, CallState::Done { .. }))
        {
            for entry in std::mem::take(&mut state.calls) {
                if let CallState::Done { result } = entry.slot {
                    // Last in call order wins, whatever order the calls finished in.
                    if let Some(context) = result.context_update.clone() {
                        state.context = context;
                    }
                    if let Some(params) = result.next_turn.clone() {
                        state.next_turn.extend(params);
                    }
                    if let Some(message) = result.to_message() {
                        state.messages.push(Message::Tool(message));
                    }
                }
            }
        }
        Ok(())
    }
}

/// The model's answer to `request`: whole, or streamed with each delta sent to `sinks`
/// as it arrives. A stream that breaks off is an error and changes nothing in the run,
/// which can be resumed.
async fn ask(
    llm: &dyn LlmClient,
    request: LlmRequest<'_>,
    turn: u32,
    deltas: bool,
    sinks: &Sinks,
) -> AgentResult<AssistantMessage> {
    let model = llm.model_name();
    let span = tracing::info_span!(
        "model_call",
        otel.name = %format_args!("chat {}", model.unwrap_or_default()),
        otel.kind = "client",
        turn,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = llm.provider_name(),
        gen_ai.request.model = model,
        gen_ai.request.temperature = request.settings.temperature,
        gen_ai.request.max_tokens = request.settings.max_output_tokens,
        gen_ai.request.seed = request.settings.seed,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.response.finish_reasons = tracing::field::Empty,
        error.type = tracing::field::Empty,
    );
    let mut finish = None;
    let answer = async {
        if !deltas {
            return llm.complete(request).await;
        }
        let stream = llm.stream(request).inspect(|event| match event {
            Ok(LlmEvent::Done { finish_reason, .. }) => finish = Some(finish_reason.clone()),
            Ok(event) => sinks.emit_with(|| AgentEvent::ModelDelta {
                turn,
                event: event.clone(),
            }),
            Err(_) => {}
        });
        Ok(collect_stream(stream.boxed()).await?)
    }
    .instrument(span.clone())
    .await;
    match &answer {
        Ok(message) => {
            let reason = finish.unwrap_or(if message.is_final() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            });
            // OpenTelemetry's finish reasons are a list; one answer has one.
            span.record(
                "gen_ai.response.finish_reasons",
                tracing::field::debug([reason.as_str()]),
            );
            if let Some(usage) = message.usage {
                span.record("gen_ai.usage.input_tokens", usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", usage.output_tokens);
            }
        }
        Err(error) => {
            span.record("error.type", tracing::field::display(error_type(error)));
        }
    }
    answer
}

/// An [`LlmRequest`]'s parts, owned: what a journaled model call keeps.
struct OwnedRequest {
    messages: Vec<Message>,
    tools: Vec<Arc<ToolDefinition>>,
    deferred: Vec<Arc<ToolDefinition>>,
    context: serde_json::Value,
    params: serde_json::Map<String, serde_json::Value>,
    settings: ModelSettings,
    output: Option<OutputSchema>,
}

impl OwnedRequest {
    fn of(request: &LlmRequest<'_>) -> Self {
        Self {
            messages: request.messages.to_vec(),
            tools: request.tools.to_vec(),
            deferred: request.deferred.to_vec(),
            context: request.context.clone(),
            params: request.params.clone(),
            settings: request.settings.clone(),
            output: request.output.cloned(),
        }
    }

    fn request(&self) -> LlmRequest<'_> {
        LlmRequest {
            messages: &self.messages,
            tools: &self.tools,
            deferred: &self.deferred,
            context: &self.context,
            params: &self.params,
            settings: &self.settings,
            output: self.output.as_ref(),
        }
    }
}

impl Agent {
    /// Runs `calls` one after another, each a step of `journal` (see
    /// [`run_journaled`](Self::run_journaled)).
    async fn execute_journaled(
        &self,
        calls: Vec<ToolCall>,
        turn: &TurnContext,
        journal: &dyn Journal,
    ) -> AgentResult<Vec<ToolCallResult>> {
        let mut results = Vec::with_capacity(calls.len());
        for call in calls {
            let executor = self.executor.clone();
            let context = turn.clone();
            let owned = call.clone();
            let step = async move {
                let mut answers = executor
                    .execute(std::slice::from_ref(&owned), &context)
                    .await;
                // One call in, one result out.
                answers.pop().unwrap_or_else(|| {
                    Settled::new(
                        ToolOutcome::Err(ToolError::execution(
                            "the executor answered no result for the call",
                        )),
                        ErrorPolicy::ReturnToModel,
                    )
                    .answer(owned)
                })
            };
            results.push(journal.tool_call(&call, Box::pin(step)).await?);
        }
        Ok(results)
    }
}

/// `answer` decoded as a `T`: the JSON as it is, or inside a Markdown code fence (small
/// models add one); the error says what did not match.
fn decode_output<T: DeserializeOwned>(answer: &str) -> Result<T, String> {
    let trimmed = answer.trim();
    let json = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed);
    serde_json::from_str(json).map_err(|error| format!("{error}"))
}

/// A low-cardinality name for a failed model call (OpenTelemetry's `error.type`).
fn error_type(error: &AgentError) -> &'static str {
    match error {
        AgentError::Model(error) => match error {
            LlmError::RateLimited { .. } => "rate_limited",
            LlmError::ContextTooLong { .. } => "context_too_long",
            LlmError::Authentication { .. } => "authentication",
            LlmError::BadRequest { .. } => "bad_request",
            LlmError::Server { .. } => "server",
            LlmError::Timeout { .. } => "timeout",
            LlmError::Connection { .. } => "connection",
            LlmError::BrokenStream { .. } => "broken_stream",
            LlmError::InvalidResponse { .. } => "invalid_response",
            LlmError::Refused { .. } => "refused",
            _ => "other",
        },
        _ => "other",
    }
}

/// Ends the run as failed for going beyond `limit`.
fn over_limit(
    state: &mut RunState,
    sinks: &Sinks,
    limit: UsageLimit,
    used: u64,
    max: u64,
) -> AgentError {
    let error = AgentError::UsageLimit { limit, used, max };
    state.status = RunStatus::Failed;
    state.error = Some(error.to_string());
    sinks.emit(AgentEvent::RunFailed {
        error: error.to_string(),
    });
    error
}

fn cancelled(state: &mut RunState, sinks: &Sinks) -> RunOutcome {
    state.status = RunStatus::Cancelled;
    sinks.emit(AgentEvent::RunCancelled);
    RunOutcome::Cancelled
}

impl AgentBuilder {
    /// Calls `checkpointer` after every step of every run: the model's answer, the
    /// results of a turn's tool calls, a pause, the final answer. Each checkpoint advances
    /// the run's [`revision`](RunState::revision).
    ///
    /// A turn's tool calls form one step: the calls that run in parallel end together.
    /// When a process dies after a tool ran and before the step's checkpoint, the tool
    /// runs again on resume; a tool with side effects makes that repeat harmless with
    /// [`ToolContext::idempotency_key`](crate::ToolContext::idempotency_key).
    pub fn on_checkpoint(mut self, checkpointer: impl Checkpointer + 'static) -> Self {
        self.checkpointer = Some(Arc::new(checkpointer));
        self
    }
}

impl Agent {
    /// Advances the revision and hands the state to the checkpointer, if there is one.
    pub(crate) async fn checkpoint(
        &self,
        state: &mut RunState,
        step: CheckpointStep,
    ) -> AgentResult<()> {
        let Some(checkpointer) = &self.checkpointer else {
            return Ok(());
        };
        state.revision += 1;
        let sealed = self.export_state(state);
        let kept = checkpointer
            .checkpoint(Checkpoint {
                step,
                state,
                sealed: &sealed,
            })
            .await;
        if kept.is_err() {
            state.revision -= 1;
        }
        kept
    }
}

impl AgentBuilder {
    /// Seals every state [`Agent::export_state`] writes with `key` (HMAC-SHA256), and
    /// makes [`Agent::import_state`] refuse a state that was changed after it was sealed
    /// or was sealed with another key, and a state without a seal (unless
    /// [`accept_unsealed_states`](Self::accept_unsealed_states)). Every process that
    /// resumes the agent's runs needs the same key; keep it out of the store.
    ///
    /// A key shorter than [`MIN_STATE_KEY_LEN`](crate::agent_loop::seal::MIN_STATE_KEY_LEN) bytes makes [`build`](Self::build) fail.
    pub fn state_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.seal.set_key(key.as_ref());
        self
    }

    /// With a [`state_key`](Self::state_key), still import states that carry no seal: ones
    /// exported by an agent without a key, or serialized before envelopes existed. For
    /// moving existing runs to sealed storage; they are sealed when exported again.
    pub fn accept_unsealed_states(mut self) -> Self {
        self.seal.accept_unsealed = true;
        self
    }
}

impl Agent {
    /// `state` as text to store: an envelope with the format version and, when the agent
    /// has a [`state_key`](AgentBuilder::state_key), an HMAC-SHA256 seal over the state.
    /// Read it back with [`import_state`](Self::import_state).
    pub fn export_state(&self, state: &RunState) -> String {
        self.seal.export(state)
    }

    /// Reads a state written by [`export_state`](Self::export_state), checking its format
    /// version and its seal. An error, never a panic, when the text is truncated or
    /// garbled, when the state was edited after it was sealed or was sealed with another
    /// key, when it is unsealed and this agent seals (see
    /// [`accept_unsealed_states`](AgentBuilder::accept_unsealed_states)), or when it was
    /// written by a newer format version. Format version 0 (a plain serialized
    /// `RunState`) is read as an unsealed state.
    pub fn import_state(&self, text: &str) -> AgentResult<RunState> {
        self.seal.import(text)
    }
}

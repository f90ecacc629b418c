//! What a running tool can see: [`ToolContext`] for calls, [`ActivationContext`] for
//! deciding whether a deferred tool is offered.

use crate::model::error::ToolError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// Values of distinct types, looked up by type. Cloning is one reference-count bump.
#[derive(Clone, Default)]
pub struct Extensions {
    map: Option<Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>>,
}

impl Extensions {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`, replacing any earlier value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let map = self.map.get_or_insert_with(Default::default);
        Arc::make_mut(map).insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The stored value of type `T`, if any.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .as_ref()?
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref())
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.map.as_ref().is_none_or(|map| map.is_empty())
    }

    /// Adds every value of `other` whose type this set does not hold.
    pub(crate) fn merge_missing(&mut self, other: Extensions) {
        let Some(theirs) = other.map else { return };
        let Some(ours) = &mut self.map else {
            self.map = Some(theirs);
            return;
        };
        let ours = Arc::make_mut(ours);
        for (type_id, value) in theirs.iter() {
            ours.entry(*type_id).or_insert_with(|| value.clone());
        }
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.map.as_ref().map_or(0, |map| map.len());
        f.debug_struct("Extensions").field("len", &len).finish()
    }
}

/// Receives what a running tool reports while it works. The executor installs one per
/// call; without one, reports are dropped.
pub trait CallReporter: Send + Sync {
    /// A preliminary result from the call `call_id`. An error (a progress validator that
    /// rejected the value, say) is returned to the tool.
    fn progress(&self, call_id: &str, value: Value) -> Result<(), ToolError>;
    /// Replace the application context seen by later turns.
    fn set_context(&self, call_id: &str, value: Value);
}

/// Parameters a tool sets for the next model request only (a different model, a
/// temperature, a tool choice...): what they mean is up to the [`LlmClient`](crate::LlmClient)
/// adapter, which reads them in [`LlmRequest::params`](crate::agent_loop::llm::LlmRequest::params).
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

    pub(crate) fn take(&self) -> Option<Map<String, Value>> {
        let params = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        (!params.is_empty()).then_some(params)
    }
}

/// The calls of a running turn, as a context made for one of them reaches them: the
/// runtime that runs the turn implements it (a context names no runtime type, so the
/// tool model does not depend on the runtime). `at` is the call's position in the turn.
pub(crate) trait TurnLink: Send + Sync {
    /// The model's id of the call at `at`.
    fn id(&self, at: usize) -> &str;
    /// The call's cancellation token.
    fn token(&self, at: usize) -> &CancellationToken;
    /// The call's next-turn parameters.
    fn next_turn(&self, at: usize) -> &NextTurn;
    /// Publishes a progress value of the call, once its tool accepts it.
    fn progress(&self, at: usize, value: Value) -> Result<(), ToolError>;
    /// Records the application context the call set.
    fn set_context(&self, at: usize, value: Value);
}

/// Whose call a context serves. A standalone context owns its token. A context the
/// executor made for one call of a turn reaches that call's id, token and reports
/// through the turn, so it allocates nothing of its own (and holds no token: cloning
/// and dropping one takes a lock).
#[derive(Clone)]
enum Origin {
    Standalone(CancellationToken),
    Turn(CallLink),
}

impl Default for Origin {
    fn default() -> Self {
        Self::Standalone(CancellationToken::new())
    }
}

/// A call of a running turn: the turn's calls and this one's position among them.
#[derive(Clone)]
struct CallLink {
    turn: Arc<dyn TurnLink>,
    at: usize,
    /// A token of this context's own, replacing the call's (one attempt of a retried
    /// call, say).
    token: Option<CancellationToken>,
}

/// Everything a tool call can see besides its arguments.
///
/// `ToolContext::default()` is a complete context for tests: no session, a fresh
/// cancellation token, no state.
#[derive(Clone, Default)]
pub struct ToolContext {
    session_id: Arc<str>,
    /// Set by `with_call_id`; a call of a turn otherwise reads its id from the turn. Not an
    /// empty `Arc<str>`: those all share one count, which every call would then touch.
    call_id: Option<Arc<str>>,
    workspace: Option<Arc<PathBuf>>,
    origin: Origin,
    state: Extensions,
    inherited_state: Extensions,
    reporter: Option<Arc<dyn CallReporter>>,
    /// The agent run the call belongs to, for its idempotency key.
    run_id: Option<Arc<str>>,
}

impl ToolContext {
    /// A context for a session.
    pub fn new(session_id: impl Into<Arc<str>>) -> Self {
        Self {
            session_id: session_id.into(),
            ..Self::default()
        }
    }

    /// The same context for the call `call_id`.
    pub fn with_call_id(mut self, call_id: impl Into<Arc<str>>) -> Self {
        self.call_id = Some(call_id.into());
        self
    }

    /// The same context with a working directory.
    pub fn with_workspace(mut self, workspace: impl Into<PathBuf>) -> Self {
        self.workspace = Some(Arc::new(workspace.into()));
        self
    }

    /// The same context, cancelled when `token` is.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        match &mut self.origin {
            Origin::Turn(call) => call.token = Some(token),
            Origin::Standalone(own) => *own = token,
        }
        self
    }

    /// The context of the call at `at` of `turn`, made from this one: its id, token
    /// (the call's own, unless `own` is given) and reports are the call's, unless `self`
    /// has a reporter of its own; every other field is shared with `self`.
    pub(crate) fn for_call(
        &self,
        turn: &Arc<dyn TurnLink>,
        at: usize,
        own: Option<CancellationToken>,
    ) -> Self {
        Self {
            session_id: self.session_id.clone(),
            call_id: None,
            workspace: self.workspace.clone(),
            origin: Origin::Turn(CallLink {
                turn: turn.clone(),
                at,
                token: own,
            }),
            state: self.state.clone(),
            inherited_state: self.inherited_state.clone(),
            reporter: self.reporter.clone(),
            run_id: self.run_id.clone(),
        }
    }

    /// The same context for a call of the agent run `run_id`.
    pub fn with_run_id(mut self, run_id: impl Into<Arc<str>>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// A key naming this call for good: the run's id and the model's call id
    /// (`run_id:call_id`; the session id stands in for the run id outside an agent run).
    /// A run resumed after a crash may run a call again whose result was not yet
    /// checkpointed; the call has the same key both times, so a tool with side effects
    /// (a payment, an email) passes it to the service it calls, or records it, and does
    /// the work once.
    pub fn idempotency_key(&self) -> String {
        let run = self.run_id.as_deref().unwrap_or(&self.session_id);
        format!("{run}:{}", self.call_id())
    }

    /// The same context with `value` available to `State<T>` parameters.
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// The same context with `state` as its own state, replacing what `with_state` put
    /// there. Cheap: an `Extensions` is shared, not copied, so a server can build the
    /// state of a session once and hand it to each of its calls.
    pub fn with_extensions(mut self, state: Extensions) -> Self {
        self.state = state;
        self
    }

    /// The same context, reporting progress to `reporter`.
    pub fn with_reporter(mut self, reporter: Arc<dyn CallReporter>) -> Self {
        self.reporter = Some(reporter);
        self
    }

    /// State a tool set or agent shares; consulted after the context's own state.
    pub(crate) fn inheriting_state(mut self, state: &Extensions) -> Self {
        self.inherited_state = state.clone();
        self
    }

    /// The session this call belongs to (empty when there is none).
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The model's id for this call (empty outside an agent run).
    pub fn call_id(&self) -> &str {
        match (&self.call_id, &self.origin) {
            (Some(id), _) if !id.is_empty() => id,
            (_, Origin::Turn(call)) => call.turn.id(call.at),
            (id, Origin::Standalone(_)) => id.as_deref().unwrap_or_default(),
        }
    }

    /// The working directory, if the application set one.
    pub fn workspace(&self) -> Option<&std::path::Path> {
        self.workspace.as_deref().map(PathBuf::as_path)
    }

    /// Cancelled when the call times out or is cancelled. Long-running tools should
    /// select on `cancellation().cancelled()` or check [`is_cancelled`](Self::is_cancelled).
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.origin {
            Origin::Standalone(token) => token,
            Origin::Turn(call) => match &call.token {
                Some(token) => token,
                None => call.turn.token(call.at),
            },
        }
    }

    /// Whether this call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }

    /// Application state of type `T`: the context's own, else the tool set's.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.state
            .get::<T>()
            .or_else(|| {
                let Origin::Turn(call) = &self.origin else {
                    return None;
                };
                if TypeId::of::<T>() != TypeId::of::<NextTurn>() {
                    return None;
                }
                let next_turn: &dyn Any = call.turn.next_turn(call.at);
                next_turn.downcast_ref()
            })
            .or_else(|| self.inherited_state.get::<T>())
    }

    /// Report a preliminary result. Without a reporter (outside an executor) it is
    /// dropped. Fails when the tool's progress validator rejects the value.
    pub fn emit_progress(&self, value: Value) -> Result<(), ToolError> {
        match (&self.reporter, &self.origin) {
            (Some(reporter), _) => reporter.progress(self.call_id(), value),
            (None, Origin::Turn(call)) => call.turn.progress(call.at, value),
            (None, Origin::Standalone(_)) => Ok(()),
        }
    }

    /// Replace the application context seen by later turns of the run.
    pub fn set_context(&self, value: Value) {
        match (&self.reporter, &self.origin) {
            (Some(reporter), _) => reporter.set_context(self.call_id(), value),
            (None, Origin::Turn(call)) => call.turn.set_context(call.at, value),
            (None, Origin::Standalone(_)) => {}
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("session_id", &self.session_id)
            .field("call_id", &self.call_id())
            .field("workspace", &self.workspace)
            .field("cancelled", &self.is_cancelled())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// What a deferred tool sees when deciding whether to be offered to the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivationContext {
    /// The session being served.
    pub session_id: String,
    /// Names of the tools already offered.
    pub current_tools: Vec<String>,
    /// The working directory.
    pub workspace: PathBuf,
}

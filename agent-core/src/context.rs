//! What a running tool can see: [`ToolContext`] for calls, [`ActivationContext`] for
//! deciding whether a deferred tool is offered.

use crate::control::CallEntry;
use crate::error::ToolError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
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

    /// State of the call the reporter serves (such as its
    /// [`NextTurn`](crate::NextTurn)), consulted by [`ToolContext::state`] after the
    /// context's own.
    fn state(&self, _type_id: TypeId) -> Option<&(dyn Any + Send + Sync)> {
        None
    }
}

/// Where a context's cancellation token lives: its own, or its call's registration
/// with the turn, shared, so that a call's context holds no token of its own (cloning
/// and dropping a token takes a lock).
#[derive(Clone)]
enum Cancellation {
    Own(CancellationToken),
    Call(Arc<[CallEntry]>, usize),
}

impl Default for Cancellation {
    fn default() -> Self {
        Self::Own(CancellationToken::new())
    }
}

/// Everything a tool call can see besides its arguments.
///
/// `ToolContext::default()` is a complete context for tests: no session, a fresh
/// cancellation token, no state.
#[derive(Clone, Default)]
pub struct ToolContext {
    session_id: Arc<str>,
    call_id: Arc<str>,
    workspace: Option<Arc<PathBuf>>,
    cancellation: Cancellation,
    state: Extensions,
    inherited_state: Extensions,
    reporter: Option<Arc<dyn CallReporter>>,
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
        self.call_id = call_id.into();
        self
    }

    /// The same context with a working directory.
    pub fn with_workspace(mut self, workspace: impl Into<PathBuf>) -> Self {
        self.workspace = Some(Arc::new(workspace.into()));
        self
    }

    /// The same context, cancelled when `token` is.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Cancellation::Own(token);
        self
    }

    /// The context of one call made from this one: its id, its token (the registered
    /// call's at `at`, unless `own` is given) and its reporter. Every other field is
    /// shared with `self`.
    pub(crate) fn for_call(
        &self,
        call_id: Arc<str>,
        entries: &Arc<[CallEntry]>,
        at: usize,
        own: Option<CancellationToken>,
        reporter: Arc<dyn CallReporter>,
    ) -> Self {
        Self {
            session_id: self.session_id.clone(),
            call_id,
            workspace: self.workspace.clone(),
            cancellation: match own {
                Some(token) => Cancellation::Own(token),
                None => Cancellation::Call(entries.clone(), at),
            },
            state: self.state.clone(),
            inherited_state: self.inherited_state.clone(),
            reporter: Some(reporter),
        }
    }

    /// The same context with `value` available to `State<T>` parameters.
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
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
        &self.call_id
    }

    /// The working directory, if the application set one.
    pub fn workspace(&self) -> Option<&std::path::Path> {
        self.workspace.as_deref().map(PathBuf::as_path)
    }

    /// Cancelled when the call times out or is cancelled. Long-running tools should
    /// select on `cancellation().cancelled()` or check [`is_cancelled`](Self::is_cancelled).
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.cancellation {
            Cancellation::Own(token) => token,
            Cancellation::Call(entries, at) => entries[*at].token(),
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
                self.reporter
                    .as_ref()?
                    .state(TypeId::of::<T>())?
                    .downcast_ref()
            })
            .or_else(|| self.inherited_state.get::<T>())
    }

    /// Report a preliminary result. Without a reporter (outside an executor) it is
    /// dropped. Fails when the tool's progress validator rejects the value.
    pub fn emit_progress(&self, value: Value) -> Result<(), ToolError> {
        match &self.reporter {
            Some(reporter) => reporter.progress(&self.call_id, value),
            None => Ok(()),
        }
    }

    /// Replace the application context seen by later turns of the run.
    pub fn set_context(&self, value: Value) {
        if let Some(reporter) = &self.reporter {
            reporter.set_context(&self.call_id, value);
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("session_id", &self.session_id)
            .field("call_id", &self.call_id)
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

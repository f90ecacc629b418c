//! [`TurnContext`]: what one turn's calls run with.

use crate::execution::control::RunControl;
use crate::execution::events::{EventSink, Sinks};
use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;

/// What one turn's calls run with besides the calls themselves: who is calling, what
/// was offered, which calls are approved, where events go, and the control that
/// cancels them.
#[derive(Debug, Clone, Default)]
pub struct TurnContext {
    pub(super) session_id: String,
    pub(super) workspace: Option<PathBuf>,
    pub(super) app_context: Value,
    pub(super) offered: Option<HashSet<String>>,
    pub(super) approved: HashSet<String>,
    pub(super) control: RunControl,
    pub(super) sinks: Sinks,
    pub(super) run_id: Option<String>,
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

    /// The agent run the calls belong to: their contexts'
    /// [`idempotency_key`](crate::ToolContext::idempotency_key) names it.
    pub fn with_run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// The working directory tools see.
    pub fn with_workspace(mut self, workspace: impl Into<PathBuf>) -> Self {
        self.workspace = Some(workspace.into());
        self
    }

    /// The application context tools see as [`AppContext`](super::AppContext).
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

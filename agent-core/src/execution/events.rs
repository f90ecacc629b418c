//! The run's event stream: what happens, as it happens, for logs and user interfaces.

use crate::model::message::{AssistantMessage, LlmEvent};
use crate::model::outcome::ToolOutcome;
use crate::model::pending::PendingCall;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Something that happened during a run. Serializes as `{"type": "tool_started", ...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// The model is being asked for its next message.
    TurnStarted {
        /// The turn's number, from 1.
        turn: u32,
        /// The tools offered this turn.
        tools: Vec<String>,
    },
    /// A step of the model's answer as it is written, in streamed runs
    /// ([`Agent::run_stream`](crate::Agent::run_stream)): text, reasoning, tool-call
    /// pieces and usage. The whole answer follows as [`Message`](Self::Message).
    ModelDelta {
        /// The turn's number.
        turn: u32,
        /// The step, as the client streamed it (never [`LlmEvent::Done`]).
        event: LlmEvent,
    },
    /// The model answered.
    Message {
        /// The turn's number.
        turn: u32,
        /// The answer.
        message: AssistantMessage,
    },
    /// A tool call started running (it had its concurrency permits).
    ToolStarted {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The call's arguments.
        arguments: Value,
    },
    /// A running tool published a preliminary result.
    ToolProgress {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// The preliminary result.
        value: Value,
    },
    /// A running tool replaced the application context for later turns.
    ContextSet {
        /// The call's id.
        call_id: String,
        /// The new context.
        value: Value,
    },
    /// A tool call ended.
    ToolFinished {
        /// The call's id.
        call_id: String,
        /// The tool's name.
        name: String,
        /// What it produced (after truncation).
        outcome: ToolOutcome,
        /// How long it ran, in milliseconds.
        duration_ms: u64,
    },
    /// The run paused: these calls wait for a person or for the application.
    WaitingForHuman {
        /// The calls waiting.
        pending: Vec<PendingCall>,
    },
    /// The run ended with the model's final answer.
    RunFinished {
        /// The answer.
        answer: String,
    },
    /// The run ended with an error.
    RunFailed {
        /// The error.
        error: String,
    },
    /// The run used all its turns without a final answer.
    TurnLimitReached {
        /// The limit.
        max_turns: u32,
    },
    /// The run was cancelled.
    RunCancelled,
}

/// Where events go: a function called for each event, in order, from the task that
/// produced it. Keep it quick; to process events elsewhere, use [`EventSink::channel`].
#[derive(Clone)]
pub struct EventSink(Arc<dyn Fn(AgentEvent) + Send + Sync>);

impl EventSink {
    /// A sink calling `f` for each event.
    pub fn new(f: impl Fn(AgentEvent) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// A sink sending every event to the returned receiver. Events sent after the
    /// receiver is dropped are discarded.
    pub fn channel() -> (Self, mpsc::UnboundedReceiver<AgentEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self::new(move |event| {
                // A dropped receiver means nobody is listening any more; that is fine.
                let _ = tx.send(event);
            }),
            rx,
        )
    }

    /// Delivers `event`.
    pub fn emit(&self, event: AgentEvent) {
        (self.0)(event);
    }
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventSink")
    }
}

/// Every sink of a run (the agent's and the run's own), delivered to in turn. Cloning
/// is one reference-count bump.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sinks(Option<Arc<[EventSink]>>);

impl Sinks {
    pub(crate) fn push(&mut self, sink: EventSink) {
        let mut sinks: Vec<EventSink> = self.0.as_deref().map(<[_]>::to_vec).unwrap_or_default();
        sinks.push(sink);
        self.0 = Some(sinks.into());
    }

    pub(crate) fn emit(&self, event: AgentEvent) {
        self.emit_with(|| event);
    }

    /// Delivers the event `make` builds, building it only if some sink will get it.
    pub(crate) fn emit_with(&self, make: impl FnOnce() -> AgentEvent) {
        if let Some((last, rest)) = self.0.as_deref().and_then(<[_]>::split_last) {
            let event = make();
            for sink in rest {
                sink.emit(event.clone());
            }
            last.emit(event);
        }
    }
}

//! [`RunStream`]: a run as a stream of its events, the model's deltas included.

use crate::agent_loop::agent::Agent;
use crate::agent_loop::run::{RunOutcome, RunState};
use crate::execution::control::RunControl;
use crate::execution::events::{AgentEvent, EventSink};
use crate::model::error::{AgentError, AgentResult};
use futures::Stream;
use futures::future::BoxFuture;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// A run in progress, as a stream of its [`AgentEvent`]s: the model's deltas
/// ([`AgentEvent::ModelDelta`]) as they arrive, then the same events a run sends its
/// sinks. A run that fails ends the stream with its error, after every event before it.
/// The agent's sinks get the same events.
///
/// The run happens as the stream is polled, in the task polling it; dropping the stream
/// stops the run where it is (as cancelling a future does), with nothing left running.
/// When the stream has ended, [`outcome`](Self::outcome) says how the run returned.
///
/// ```
/// use toolwright_core::{Agent, agent::AgentEvent, llm::{AssistantMessage, LlmEvent}, testing::ScriptedLlm};
/// use futures::StreamExt;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> toolwright_core::AgentResult<()> {
/// let agent = Agent::builder(ScriptedLlm::new([AssistantMessage::text("Hello!")])).build()?;
/// let mut run = agent.start("Hi");
/// let mut events = agent.run_stream(&mut run);
/// let mut text = String::new();
/// while let Some(event) = events.next().await {
///     if let AgentEvent::ModelDelta { event: LlmEvent::TextDelta { text: delta }, .. } = event? {
///         text.push_str(&delta); // print it as it arrives
///     }
/// }
/// assert_eq!(text, "Hello!");
/// assert!(events.outcome().is_some());
/// # Ok(()) }
/// ```
pub struct RunStream<'a> {
    run: Option<BoxFuture<'a, AgentResult<RunOutcome>>>,
    events: mpsc::UnboundedReceiver<AgentEvent>,
    outcome: Option<RunOutcome>,
    error: Option<AgentError>,
}

impl Agent {
    /// Runs `state` as a stream of its events, the model's answer streamed delta by delta
    /// ([`AgentEvent::ModelDelta`]); see [`RunStream`]. Pauses and resumes as
    /// [`run`](Self::run): stream a paused run again after deciding its calls.
    pub fn run_stream<'a>(&'a self, state: &'a mut RunState) -> RunStream<'a> {
        RunStream::new(self, state, RunControl::new())
    }

    /// [`run_stream`](Self::run_stream) under `control`, to cancel it from elsewhere.
    pub fn run_stream_with<'a>(
        &'a self,
        state: &'a mut RunState,
        control: RunControl,
    ) -> RunStream<'a> {
        RunStream::new(self, state, control)
    }
}

impl<'a> RunStream<'a> {
    pub(crate) fn new(agent: &'a Agent, state: &'a mut RunState, control: RunControl) -> Self {
        let (sink, events) = EventSink::channel();
        let run = Box::pin(async move {
            agent
                .run_inner(state, &control, Some(sink), None, None)
                .await
        });
        Self {
            run: Some(run),
            events,
            outcome: None,
            error: None,
        }
    }

    /// How the run returned, once the stream has ended without an error.
    pub fn outcome(&self) -> Option<&RunOutcome> {
        self.outcome.as_ref()
    }
}

impl Stream for RunStream<'_> {
    type Item = AgentResult<AgentEvent>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        // Events already sent come first: the run sends them synchronously as it goes.
        if let Ok(event) = this.events.try_recv() {
            return Poll::Ready(Some(Ok(event)));
        }
        if let Some(run) = &mut this.run {
            match run.as_mut().poll(cx) {
                Poll::Ready(Ok(outcome)) => this.outcome = Some(outcome),
                Poll::Ready(Err(error)) => this.error = Some(error),
                Poll::Pending => {
                    return match this.events.try_recv() {
                        Ok(event) => Poll::Ready(Some(Ok(event))),
                        Err(_) => Poll::Pending,
                    };
                }
            }
            this.run = None;
        }
        if let Ok(event) = this.events.try_recv() {
            return Poll::Ready(Some(Ok(event)));
        }
        Poll::Ready(this.error.take().map(Err))
    }
}

impl fmt::Debug for RunStream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunStream")
            .field("running", &self.run.is_some())
            .field("outcome", &self.outcome)
            .finish_non_exhaustive()
    }
}

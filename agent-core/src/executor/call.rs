//! One call, from its permits to its result: the task, the timeout, cancellation,
//! retries, validation, the budget, the span and the events.

use crate::content::Content;
use crate::context::{CallReporter, ToolContext};
use crate::control::CallEntry;
use crate::error::{ToolError, ToolErrorKind};
use crate::events::{AgentEvent, Sinks};
use crate::llm::ToolCall;
use crate::tool::{ErrorPolicy, Tool};
use crate::truncate::truncate_output;
use serde_json::Value;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{NextTurn, ToolCallResult, ToolOutcome};

/// One call, ready to run. It owns what it needs, so a batch of calls can be driven
/// by a task of its own (see `run_batch`); only the tool itself runs in a further task.
pub(super) struct Job {
    pub(super) call: ToolCall,
    pub(super) tool: Arc<dyn Tool>,
    pub(super) policy: ErrorPolicy,
    /// The turn's registrations with the run's control; this call's is at `at`.
    pub(super) entries: Arc<[CallEntry]>,
    pub(super) at: usize,
    /// In acquisition order: exclusion group, per-tool limit, global limit.
    pub(super) permits: [Option<Arc<Semaphore>>; 3],
    pub(super) timeout_ms: u64,
    pub(super) retries: u32,
    /// What every call's context shares; the call's own context is made from it once
    /// the call has its permits.
    pub(super) base: Arc<ToolContext>,
    pub(super) max_output_chars: Option<usize>,
    pub(super) on_invalid_arguments: ErrorPolicy,
    pub(super) sinks: Sinks,
}

impl Job {
    pub(super) fn entry(&self) -> &CallEntry {
        &self.entries[self.at]
    }
}

/// Aborts the task when dropped, so a call abandoned for any reason (timeout,
/// cancellation, the whole turn dropped) does not keep running.
pub(super) struct AbortOnDrop<T>(pub(super) JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        // A task that ended has nothing to stop.
        if !self.0.is_finished() {
            self.0.abort();
        }
    }
}

/// What an attempt's task builds the call's context from. The task builds it (and
/// validates and cuts the output) itself: the task driving the calls, which every call
/// of the batch goes through, does only the bookkeeping.
struct Attempt {
    base: Arc<ToolContext>,
    call_id: Arc<str>,
    reporter: Arc<Reporter>,
    next_turn: NextTurn,
    token: CancellationToken,
    max_output_chars: Option<usize>,
}

/// One run of the tool, in its own task, under the timeout and the call's token.
async fn attempt(
    tool: &Arc<dyn Tool>,
    args: Value,
    parts: Attempt,
    timeout_ms: u64,
    span: &tracing::Span,
) -> Result<Vec<Content>, ToolError> {
    let name = tool.name();
    let task_tool = tool.clone();
    let token = parts.token.clone();
    let mut task = AbortOnDrop(tokio::spawn(
        async move {
            let Attempt {
                base,
                call_id,
                reporter,
                next_turn,
                token,
                max_output_chars,
            } = parts;
            let ctx = ToolContext::clone(&base)
                .with_call_id(call_id.clone())
                .with_cancellation(token)
                .with_reporter(reporter)
                .with_state(next_turn);
            let output = task_tool.call(&args, &ctx).await.map_err(ToolError::from);
            drop(ctx);
            output.and_then(|output| {
                task_tool.validate_output(&output).map_err(|reason| {
                    ToolError::execution(format!("Invalid tool output: {reason}"))
                })?;
                Ok(match max_output_chars {
                    Some(max) => truncate_output(output, max),
                    None => output,
                })
            })
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
    if !span.is_disabled() {
        span.record("outcome", label);
        span.record("duration_ms", duration_ms);
        span.in_scope(|| tracing::debug!(outcome = label, duration_ms, "tool call finished"));
    }
    sinks.emit_with(|| AgentEvent::ToolFinished {
        call_id: result.call.id.clone(),
        name: result.call.name.clone(),
        outcome: result.outcome.clone(),
        duration_ms,
    });
}

/// Runs one call: permits, then the tool in its own task under timeout and
/// cancellation (and retries), then validation and the budget. Inside a `tool_call`
/// span.
pub(super) fn drive(job: Job) -> impl Future<Output = ToolCallResult> + Send + 'static {
    let span = call_span(&job.call);
    let inner = span.clone();
    // The job is kept in one place and borrowed from there: an `async fn` taking it by
    // value would hold a copy per layer, and this future is allocated once per call.
    async move {
        let mut job = job;
        let result = run_call(&mut job, &inner).await;
        job.entry().end();
        result
    }
    .instrument(span)
}

async fn run_call(job: &mut Job, span: &tracing::Span) -> ToolCallResult {
    let call = &job.call;
    let tool = &job.tool;
    let entry = &job.entries[job.at];
    let timeout_ms = job.timeout_ms;
    let sinks = &job.sinks;
    // Arguments the tool could not decode are the model's mistake: they follow the
    // config's policy for them, not the tool's.
    let policies = Policies {
        tool: job.policy,
        invalid_arguments: job.on_invalid_arguments,
    };
    let token = &entry.token;
    let name = call.name.as_str();
    let mut held: [Option<SemaphorePermit<'_>>; 3] = [None, None, None];
    for (slot, semaphore) in held.iter_mut().zip(&job.permits) {
        let Some(semaphore) = semaphore else { continue };
        // Uncontended, the permit is taken without waiting or registering anything.
        if let Ok(permit) = semaphore.try_acquire() {
            *slot = Some(permit);
            continue;
        }
        let waited = async {
            tokio::select! {
                biased;
                () = token.cancelled() => Err(ToolError::cancelled(name)),
                permit = semaphore.acquire() => permit.map_err(|_| {
                    // Our semaphores are never closed; answer rather than assume.
                    ToolError::execution("the concurrency limiter was shut down")
                }),
            }
        }
        .await;
        match waited {
            Ok(permit) => *slot = Some(permit),
            Err(error) => {
                return finish(
                    span,
                    sinks,
                    owned(call),
                    Err(error),
                    policies,
                    None,
                    Duration::ZERO,
                );
            }
        }
    }
    if token.is_cancelled() {
        return finish(
            span,
            sinks,
            owned(call),
            Err(ToolError::cancelled(name)),
            policies,
            None,
            Duration::ZERO,
        );
    }
    sinks.emit_with(|| AgentEvent::ToolStarted {
        call_id: call.id.clone(),
        name: call.name.clone(),
        arguments: call.arguments.clone(),
    });
    let started = Instant::now();
    let mut retries_left = job.retries;
    // Made only now, so that a call waiting for its permits holds no allocations of
    // its own: a turn of many calls under a small limit has most of them waiting.
    let next_turn = NextTurn::default();
    let reporter = Arc::new(Reporter {
        tool: tool.clone(),
        sinks: sinks.clone(),
        context: Mutex::new(None),
    });
    let outcome = loop {
        // Each attempt of a call that may be retried has its own token, so a timed-out
        // attempt's cancellation does not reach the next one, while cancelling the
        // call reaches every attempt. A call run once uses the call's token itself.
        let attempt_token = if retries_left == 0 {
            token.clone()
        } else {
            token.child_token()
        };
        let parts = Attempt {
            base: job.base.clone(),
            call_id: entry.id.clone(),
            reporter: reporter.clone(),
            next_turn: next_turn.clone(),
            token: attempt_token,
            max_output_chars: job.max_output_chars,
        };
        // Boxed, so the timer and the task's handle are not part of every call's
        // future while it waits for its permits.
        let outcome = Box::pin(attempt(
            tool,
            call.arguments.clone(),
            parts,
            timeout_ms,
            span,
        ))
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
    let context_update = reporter.take_context();
    let mut result = finish(
        span,
        sinks,
        take_call(&mut job.call),
        outcome,
        policies,
        context_update,
        started.elapsed(),
    );
    result.next_turn = next_turn.take();
    result
}

/// The call as a result carries it, for a call that ended before it ran.
fn owned(call: &ToolCall) -> ToolCall {
    call.clone()
}

/// The job's call, moved out for its result (the job is done with it).
fn take_call(call: &mut ToolCall) -> ToolCall {
    std::mem::replace(
        call,
        ToolCall {
            id: String::new(),
            name: String::new(),
            arguments: Value::Null,
        },
    )
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

pub(super) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a non-text panic payload".to_owned()
    }
}

/// What the executor installs in each call's context; it also keeps the last
/// application context the call set.
struct Reporter {
    pub(super) tool: Arc<dyn Tool>,
    pub(super) sinks: Sinks,
    pub(super) context: Mutex<Option<Value>>,
}

impl Reporter {
    fn take_context(&self) -> Option<Value> {
        self.context
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

impl CallReporter for Reporter {
    fn progress(&self, call_id: &str, value: Value) -> Result<(), ToolError> {
        self.tool
            .validate_progress(&value)
            .map_err(|reason| ToolError::execution(format!("Invalid tool progress: {reason}")))?;
        self.sinks.emit_with(|| AgentEvent::ToolProgress {
            call_id: call_id.to_owned(),
            name: self.tool.name().to_owned(),
            value,
        });
        Ok(())
    }

    fn set_context(&self, call_id: &str, value: Value) {
        self.sinks.emit_with(|| AgentEvent::ContextSet {
            call_id: call_id.to_owned(),
            value: value.clone(),
        });
        *self.context.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
    }
}

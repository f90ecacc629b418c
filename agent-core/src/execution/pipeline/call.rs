//! One call, from its permits to its result: the timeout, cancellation, retries,
//! validation, the budget, the span and the events.

use crate::execution::events::{AgentEvent, Sinks};
use crate::execution::inflight::{InFlight, InFlightCall};
use crate::model::content::Content;
use crate::model::context::{ToolContext, TurnLink};
use crate::model::error::{ToolError, ToolErrorKind};
use crate::model::message::ToolCall;
use crate::model::outcome::{Reports, Settled, ToolOutcome};
use crate::model::set::ToolSet;
use crate::model::tool::{ErrorPolicy, Tool};
use crate::model::truncate::truncate_output;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::sync::SemaphorePermit;
use tokio::time::Instant;
use tracing::Instrument;

use super::ticker::Ticker;
use super::watchdog::CatchUnwind;
use super::{CallPermit, CallScope, ToolPolicy};

/// What every call of a turn shares, made once per turn (a single call is a turn of
/// one): the calls themselves, and what running them needs. Each [`ReadyCall`] holds it
/// rather than copies of its parts.
pub(crate) struct RunningTurn {
    /// The turn's calls, in order; each ready call's is at its `index`.
    pub(crate) calls: Vec<ToolCall>,
    pub(crate) tools: Arc<ToolSet>,
    /// One per tool of `tools`, in its order.
    pub(crate) policies: Arc<[ToolPolicy]>,
    /// The calls that run, in flight; each ready call's is at its `at`.
    pub(crate) inflight: Arc<InFlight>,
    /// `inflight`, as the calls' contexts reach it.
    pub(crate) link: Arc<dyn TurnLink>,
    /// What every call's context shares; a call's own context is made from it once the
    /// call has its permits.
    pub(crate) base: ToolContext,
    pub(crate) sinks: Sinks,
    pub(crate) max_output_chars: Option<usize>,
    pub(crate) on_invalid_arguments: ErrorPolicy,
    /// What each call of the turn runs inside, if anything.
    pub(crate) scope: Option<Arc<dyn CallScope>>,
    /// The runner's clock for watching batches.
    pub(crate) ticker: Arc<Ticker>,
}

impl RunningTurn {
    /// The turn's calls, given back once every call has ended: moved out, unless a tool
    /// still blocks its thread inside a call answered as timed out (then copied).
    pub(crate) fn into_calls(turn: Arc<Self>) -> Vec<ToolCall> {
        Arc::try_unwrap(turn).map_or_else(|turn| turn.calls.clone(), |turn| turn.calls)
    }
}

/// One call, ready to run. It owns what it needs (a share of its turn), so a batch of
/// calls can be driven by a task of its own, and moved to another (see `watchdog.rs`).
pub(crate) struct ReadyCall {
    pub(crate) turn: Arc<RunningTurn>,
    /// Where the call is in the turn's calls.
    pub(crate) index: usize,
    /// Where it is among the turn's calls in flight.
    pub(crate) at: usize,
    /// Where its tool is in the set.
    pub(crate) position: usize,
}

impl ReadyCall {
    pub(crate) fn call(&self) -> &ToolCall {
        &self.turn.calls[self.index]
    }

    pub(crate) fn entry(&self) -> &InFlightCall {
        self.turn.inflight.get(self.at)
    }

    pub(crate) fn policy(&self) -> &ToolPolicy {
        &self.turn.policies[self.position]
    }
}

/// One run of the tool, with its context, under its deadline and its token.
///
/// The tool is polled right here, in the batch's driver (see `watchdog.rs`): a call that
/// finishes in its first poll, as most do, costs no task and no timer. A tool that
/// blocks its thread is the driver's watchdog's business; a panic is caught here.
async fn attempt(
    tool: &Arc<dyn Tool>,
    args: &Value,
    ctx: ToolContext,
    max_output_chars: Option<usize>,
    deadline: Instant,
    timeout_ms: u64,
) -> Result<Vec<Content>, ToolError> {
    let work = async {
        let output = tool.call(args, &ctx).await.map_err(ToolError::from)?;
        tool.validate_output(&output)
            .map_err(|reason| ToolError::execution(format!("Invalid tool output: {reason}")))?;
        Ok(match max_output_chars {
            Some(max) => truncate_output(output, max),
            None => output,
        })
    };
    let mut work = CatchUnwind(std::pin::pin!(work));
    // The first poll, before any timer exists.
    let first = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut work).poll(cx))).await;
    let joined = match first {
        Poll::Ready(joined) => joined,
        // Boxed: the timer is then no part of the many calls that never need one.
        Poll::Pending => {
            let name = tool.name();
            let token = ctx.cancellation();
            let waited = Box::pin(async {
                tokio::select! {
                    biased;
                    joined = &mut work => Ok(joined),
                    () = token.cancelled() => Err(ToolError::cancelled(name)),
                    () = tokio::time::sleep_until(deadline) => {
                        // Cooperative work the tool started elsewhere (with a clone of
                        // its context) sees the cancellation; the call itself is
                        // dropped here.
                        token.cancel();
                        Err(ToolError::timeout(name, timeout_ms))
                    }
                }
            });
            waited.await?
        }
    };
    joined.unwrap_or_else(|panic| {
        Err(ToolError::execution(format!(
            "tool panicked: {}",
            panic_message(panic)
        )))
    })
}

fn call_span(call: &ToolCall) -> tracing::Span {
    // `tool` and `call_id` stay for existing log queries; the `gen_ai.*` names are the
    // OpenTelemetry GenAI conventions' for a tool execution.
    tracing::info_span!(
        "tool_call",
        otel.name = %format_args!("execute_tool {}", call.name),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %call.name,
        gen_ai.tool.call.id = %call.id,
        gen_ai.tool.type = "function",
        tool = %call.name,
        call_id = %call.id,
        outcome = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// Publishes a call that ended without running (refused before it ran, rejected, or
/// answered by the application): a `tool_call` span and a `ToolFinished` event, as a
/// call that ran gets.
pub(crate) fn announce_settled(call: &ToolCall, outcome: &ToolOutcome, sinks: &Sinks) {
    announce(&call_span(call), sinks, call, outcome, 0);
}

fn announce(
    span: &tracing::Span,
    sinks: &Sinks,
    call: &ToolCall,
    outcome: &ToolOutcome,
    duration_ms: u64,
) {
    let label = match outcome {
        ToolOutcome::Ok(_) => "ok",
        ToolOutcome::Err(error) => error.kind().as_str(),
        ToolOutcome::PendingApproval | ToolOutcome::PendingExternal | ToolOutcome::PendingInput => {
            "pending"
        }
    };
    if !span.is_disabled() {
        span.record("outcome", label);
        span.record("duration_ms", duration_ms);
        if let ToolOutcome::Err(_) = outcome {
            span.record("error.type", label);
        }
        span.in_scope(|| tracing::debug!(outcome = label, duration_ms, "tool call finished"));
    }
    sinks.emit_with(|| AgentEvent::ToolFinished {
        call_id: call.id.clone(),
        name: call.name.clone(),
        outcome: outcome.clone(),
        duration_ms,
    });
}

/// Runs one call: permits, then the tool under timeout and cancellation (and
/// retries), then validation and the budget. Inside a `tool_call` span, and inside the
/// turn's [`CallScope`], if it has one.
pub(crate) fn drive(job: ReadyCall) -> impl Future<Output = Settled> + Send + 'static {
    let span = call_span(job.call());
    let inner = span.clone();
    // The call is kept in one place and borrowed from there: an `async fn` taking it by
    // value would hold a copy per layer, and this future is allocated once per call.
    async move {
        let result = match &job.turn.scope {
            None => run_call(&job, &inner, None).await,
            // Boxed: only callers that ask for a scope pay for it.
            Some(scope) => Box::pin(run_scoped(scope.as_ref(), &job, &inner)).await,
        };
        job.entry().end();
        result
    }
    .instrument(span)
}

async fn run_scoped(scope: &dyn CallScope, job: &ReadyCall, span: &tracing::Span) -> Settled {
    let mut answer = None;
    // The global limit is the last of the call's permits; a scope may give it back.
    let permit = CallPermit::new(job.policy().permits[2].clone());
    let scoped = async {
        answer = Some(run_call(job, span, Some(&permit)).await);
    };
    scope.scope(Box::pin(scoped), &permit).await;
    permit.end();
    // A scope that dropped the call without running it to the end is a bug in the scope;
    // the call still gets an answer.
    answer.unwrap_or_else(|| {
        let error = ToolError::execution("the call's scope ended before the call did");
        Settled::new(ToolOutcome::Err(error), job.policy().on_error)
    })
}

/// The call's life from its permits on. With `global`, the call's global permit is
/// taken into it (a scope may give it back meanwhile) instead of held here.
async fn run_call(job: &ReadyCall, span: &tracing::Span, global: Option<&CallPermit>) -> Settled {
    let turn = &*job.turn;
    let call = job.call();
    let tool = turn.tools.tool_at(job.position);
    let policy = job.policy();
    let entry = job.entry();
    let timeout_ms = policy.timeout_ms;
    let sinks = &turn.sinks;
    let name = call.name.as_str();
    let mut held: [Option<SemaphorePermit<'_>>; 3] = [None, None, None];
    let own = if global.is_some() { 2 } else { 3 };
    for (slot, semaphore) in held.iter_mut().zip(&policy.permits).take(own) {
        let Some(semaphore) = semaphore else { continue };
        // Uncontended, the permit is taken without waiting or registering anything.
        if let Ok(permit) = semaphore.try_acquire() {
            *slot = Some(permit);
            continue;
        }
        // Boxed: the wait is no part of the many calls that never need it.
        let waited = Box::pin(async {
            tokio::select! {
                biased;
                () = entry.token().cancelled() => Err(ToolError::cancelled(name)),
                permit = semaphore.acquire() => permit.map_err(|_| {
                    // Our semaphores are never closed; answer rather than assume.
                    ToolError::execution("the concurrency limiter was shut down")
                }),
            }
        })
        .await;
        match waited {
            Ok(permit) => *slot = Some(permit),
            Err(error) => {
                return finish(job, span, Err(error), None, Duration::ZERO);
            }
        }
    }
    if let Some(global) = global
        && let Err(error) = global.acquire(entry.token(), name).await
    {
        return finish(job, span, Err(error), None, Duration::ZERO);
    }
    if entry.is_cancelled() {
        return finish(
            job,
            span,
            Err(ToolError::cancelled(name)),
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
    let mut retries_left = policy.retries;
    let mut attempt_started = started;
    let (outcome, ended) = loop {
        // Each attempt of a call that may be retried has its own token, so a timed-out
        // attempt's cancellation does not reach the next one, while cancelling the
        // call reaches every attempt. A call run once uses the call's token itself.
        let own_token = (retries_left > 0).then(|| entry.token().child_token());
        let ctx = turn.base.for_call(&turn.link, job.at, own_token.clone());
        let deadline = attempt_started + Duration::from_millis(timeout_ms);
        // Boxed, which keeps the call's own future small enough for the allocator's
        // fast path (both then are).
        let mut outcome = Box::pin(attempt(
            tool,
            &call.arguments,
            ctx,
            turn.max_output_chars,
            deadline,
            timeout_ms,
        ))
        .await;
        let ended = Instant::now();
        // A result this late comes from a tool that kept its thread past the deadline
        // where nothing could answer for it meanwhile (a current-thread runtime): it is
        // the timeout a second thread would have answered.
        if outcome.is_ok() && ended > deadline + LATE {
            own_token.as_ref().unwrap_or_else(|| entry.token()).cancel();
            outcome = Err(ToolError::timeout(name, timeout_ms));
        }
        match &outcome {
            Err(error)
                if retries_left > 0 && !entry.is_cancelled() && error.kind().is_retryable() =>
            {
                retries_left -= 1;
                attempt_started = ended;
                span.in_scope(
                    || tracing::debug!(error = %error, retries_left, "retrying tool call"),
                );
            }
            _ => break (outcome, ended),
        }
    };
    drop(held);
    if let Some(global) = global {
        global.end();
    }
    let reports = entry.take_reports();
    finish(job, span, outcome, reports, ended.duration_since(started))
}

/// How far past its deadline a result may come and still count: the batch's watchdog
/// gives up on a blocking poll within one tick of it.
const LATE: Duration = super::ticker::LONG_POLL;

/// The call's answer, announced unless the batch has given up on the call already (and
/// announced it timed out).
fn finish(
    job: &ReadyCall,
    span: &tracing::Span,
    outcome: Result<Vec<Content>, ToolError>,
    reports: Option<Box<Reports>>,
    elapsed: Duration,
) -> Settled {
    let duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    let tool_policy = job.policy().on_error;
    let (outcome, policy) = match outcome {
        Ok(content) => (ToolOutcome::Ok(content), tool_policy),
        Err(error) => {
            let policy = match error.kind() {
                // The application cancelled this call and wants the run to go on.
                ToolErrorKind::Cancelled => ErrorPolicy::ReturnToModel,
                // Arguments the tool could not decode are the model's mistake: they
                // follow the config's policy for them, not the tool's.
                ToolErrorKind::InvalidArguments => job.turn.on_invalid_arguments,
                _ => tool_policy,
            };
            (ToolOutcome::Err(error), policy)
        }
    };
    let settled = Settled {
        outcome,
        policy,
        reports,
    };
    if job.entry().claim_answer() {
        announce(
            span,
            &job.turn.sinks,
            job.call(),
            &settled.outcome,
            duration_ms,
        );
    }
    settled
}

pub(crate) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a non-text panic payload".to_owned()
    }
}

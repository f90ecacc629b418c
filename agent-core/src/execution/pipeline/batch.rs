//! [`Batch`]: calls that run concurrently, each answered at its place in the turn
//! however its future ends (finished, stalled in a blocking poll, or failed in our code).

use crate::model::error::ToolError;
use crate::model::message::ToolCall;
use crate::model::outcome::{Settled, ToolOutcome};
use crate::model::tool::ErrorPolicy;
use std::time::Duration;

use super::call::{ReadyCall, RunningTurn, announce_settled, drive, panic_message};
use super::watchdog::{self, BoxFuture, Outcome};

/// Calls that run concurrently, with what each answer needs should the call's future
/// not give one.
#[derive(Default)]
pub(crate) struct Batch {
    calls: Vec<ReadyCall>,
    places: Vec<Place>,
}

/// Where a batch's call goes in the answers, and what answers it if it stalls.
struct Place {
    index: usize,
    on_error: ErrorPolicy,
    at: usize,
    timeout_ms: u64,
}

impl Place {
    /// The answer of this place's call when one of its polls outlives its timeout.
    fn timed_out(&self, call: &ToolCall) -> ToolOutcome {
        ToolOutcome::Err(ToolError::timeout(&call.name, self.timeout_ms))
    }
}

/// A call's future, as the batch runs it.
fn start(call: ReadyCall) -> BoxFuture<Settled> {
    Box::pin(drive(call))
}

impl Batch {
    pub(crate) fn with_capacity(calls: usize) -> Self {
        Self {
            calls: Vec::with_capacity(calls),
            places: Vec::with_capacity(calls),
        }
    }

    /// Adds `call`.
    pub(crate) fn push(&mut self, call: ReadyCall) {
        let policy = call.policy();
        self.places.push(Place {
            index: call.index,
            on_error: policy.on_error,
            at: call.at,
            timeout_ms: policy.timeout_ms,
        });
        self.calls.push(call);
    }

    /// Runs the calls and stores each answer at its call's index.
    pub(crate) async fn run(mut self, answers: &mut [Option<Settled>]) {
        if self.calls.len() == 1
            && let (Some(call), Some(place)) = (self.calls.pop(), self.places.pop())
        {
            let index = place.index;
            answers[index] = Some(run_one(call, place).await);
            return;
        }
        let Some(turn) = self.calls.first().map(|call| call.turn.clone()) else {
            return;
        };
        let timeouts = self
            .places
            .iter()
            .map(|place| Duration::from_millis(place.timeout_ms))
            .collect();
        let places = &self.places;
        let give_up = |index: usize| places[index].give_up(&turn);
        let outcomes = watchdog::run(self.calls, start, timeouts, give_up, &turn.ticker).await;
        for (place, outcome) in self.places.iter().zip(outcomes) {
            answers[place.index] = Some(place.settle(&turn, outcome));
        }
    }
}

/// Runs `call`, alone: what a batch of one does, without a batch's shared state (see
/// [`watchdog::run_one`]).
pub(crate) async fn run_single(call: ReadyCall) -> Settled {
    let policy = call.policy();
    let place = Place {
        index: call.index,
        on_error: policy.on_error,
        at: call.at,
        timeout_ms: policy.timeout_ms,
    };
    run_one(call, place).await
}

async fn run_one(call: ReadyCall, place: Place) -> Settled {
    let turn = call.turn.clone();
    let timeout = Duration::from_millis(place.timeout_ms);
    let give_up = || place.give_up(&turn);
    let outcome = watchdog::run_one(drive(call), timeout, give_up, &turn.ticker).await;
    place.settle(&turn, outcome)
}

impl Place {
    /// Gives up on this place's call, whose poll outlived its timeout: the call is
    /// cancelled, ended and announced at once, so that work its tool started elsewhere
    /// need not wait for the rest of the batch to hear of the timeout, nor the run's
    /// control and events to learn that the call is over. False if the call has just
    /// settled its answer itself.
    fn give_up(&self, turn: &RunningTurn) -> bool {
        let entry = turn.inflight.get(self.at);
        let claimed = entry.claim_answer();
        if claimed {
            entry.cancel();
            entry.end();
            let call = &turn.calls[self.index];
            announce_settled(call, &self.timed_out(call), &turn.sinks);
        }
        claimed
    }

    /// The answer of this place's call, from what became of its future.
    fn settle(&self, turn: &RunningTurn, outcome: Outcome<Settled>) -> Settled {
        let call = &turn.calls[self.index];
        let entry = turn.inflight.get(self.at);
        let outcome = match outcome {
            Outcome::Done(answer) => return answer,
            // A poll of the tool outlived its timeout (it blocks its thread): the call
            // is answered now, and dropped when that poll returns.
            Outcome::Stalled => {
                entry.cancel();
                self.timed_out(call)
            }
            // `drive` is our code and does not panic (the tool's panics are caught inside
            // it); if it ever did, the call still gets an answer.
            Outcome::Panicked(panic) => ToolOutcome::Err(ToolError::execution(format!(
                "the runtime failed while running the call: {}",
                panic_message(panic)
            ))),
        };
        entry.end();
        let answer = Settled::new(outcome, self.on_error);
        // A call given up on was announced then (see `give_up`).
        if entry.claim_answer() {
            announce_settled(call, &answer.outcome, &turn.sinks);
        }
        answer
    }
}

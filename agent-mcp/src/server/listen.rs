//! `subscriptions/listen` (protocol 2026-07-28): the streams on which clients without a
//! session hear that the tools changed. rmcp acknowledges each stream, tags what goes on
//! it with its `subscriptionId` and drops what the client's filter did not ask for; this
//! module keeps the open streams with who opened them (so that a change to an item the
//! caller may not read is not told to it), tells them of changes, and bounds how many
//! one caller may hold open, so that opening streams cannot exhaust the server.

use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use rmcp::service::SubscriptionSink;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use toolwright_core::Principal;

/// The open listen streams of a server, by caller.
#[derive(Default)]
pub(crate) struct Listeners {
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    /// Streams by a number given at opening, so that a closing stream removes its own.
    streams: HashMap<u64, Stream>,
    /// How many streams each caller holds, by principal subject (callers of a server
    /// without authentication share the empty subject).
    per_caller: HashMap<Arc<str>, usize>,
    next: u64,
}

/// An open stream, and the principal that opened it (`None` on a transport that does
/// not authenticate).
struct Stream {
    sink: SubscriptionSink,
    principal: Option<Principal>,
}

/// A listen stream's place among the open ones, given back when it is dropped.
pub(crate) struct ListenSlot {
    listeners: Arc<Listeners>,
    id: u64,
    caller: Arc<str>,
}

impl Listeners {
    /// Registers `sink` for the caller `principal` names, unless the caller already
    /// holds `limit` streams.
    pub(crate) fn open(
        self: &Arc<Self>,
        principal: Option<Principal>,
        sink: SubscriptionSink,
        limit: usize,
    ) -> Result<ListenSlot, McpError> {
        let caller = principal.as_ref().map_or("", |p| p.subject.as_str());
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let held = open.per_caller.get(caller).copied().unwrap_or(0);
        if held >= limit {
            return Err(McpError::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "too many subscriptions/listen streams open: this caller holds {held}, \
                     the most this server allows one caller; close one before opening another"
                ),
                None,
            ));
        }
        let caller: Arc<str> = Arc::from(caller);
        *open.per_caller.entry(caller.clone()).or_default() += 1;
        let id = open.next;
        open.next += 1;
        open.streams.insert(id, Stream { sink, principal });
        Ok(ListenSlot {
            listeners: self.clone(),
            id,
            caller,
        })
    }

    /// The sinks of every open stream.
    pub(crate) fn sinks(&self) -> Vec<SubscriptionSink> {
        self.sinks_of(|_| true)
    }

    /// The sinks of the streams whose caller `may_hear` accepts.
    pub(crate) fn sinks_of(
        &self,
        may_hear: impl Fn(Option<&Principal>) -> bool,
    ) -> Vec<SubscriptionSink> {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.streams
            .values()
            .filter(|stream| may_hear(stream.principal.as_ref()))
            .map(|stream| stream.sink.clone())
            .collect()
    }

    /// How many listen streams are open, over all callers.
    pub(crate) fn len(&self) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.streams.len()
    }
}

impl Drop for ListenSlot {
    fn drop(&mut self) {
        let mut open = self
            .listeners
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        open.streams.remove(&self.id);
        if let Some(held) = open.per_caller.get_mut(&self.caller) {
            *held -= 1;
            if *held == 0 {
                open.per_caller.remove(&self.caller);
            }
        }
    }
}

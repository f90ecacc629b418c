//! A tracing subscriber that records every span's name and fields, for tests of what a
//! call records on its `tool_call` span (shared by the executor's and the MCP server's).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span's name and the fields recorded on it.
pub type SpanRecord = (String, HashMap<String, String>);

/// The fields recorded on each span, by span id.
#[derive(Default, Clone)]
pub struct Recorder {
    next: Arc<AtomicU64>,
    pub spans: Arc<Mutex<HashMap<u64, SpanRecord>>>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut fields = HashMap::new();
        span.record(&mut Fields(&mut fields));
        self.spans
            .lock()
            .unwrap()
            .insert(id, (span.metadata().name().to_owned(), fields));
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some((_, fields)) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Recorder {
    /// The fields of every `tool_call` span, by call id.
    pub fn tool_calls(&self) -> Vec<HashMap<String, String>> {
        let mut calls: Vec<_> = self
            .spans
            .lock()
            .unwrap()
            .values()
            .filter(|(name, _)| name == "tool_call")
            .map(|(_, fields)| fields.clone())
            .collect();
        calls.sort_by_key(|fields| fields["call_id"].clone());
        calls
    }
}

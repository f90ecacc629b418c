#![allow(dead_code)] // each test binary uses its own part of this helper.

//! A client of the stream transport that writes and reads raw JSON-RPC lines, to a server
//! served by `serve_io` (with its fast path) or by rmcp's own `serve` (the reference),
//! and a record of the requests rmcp's service loop handled, to tell the two paths apart.

use super::events::within;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use toolwright_mcp::McpServer;

/// How the server end is served.
#[derive(Clone, Copy, Debug)]
pub enum Via {
    /// `toolwright_mcp::serve_io`, with its fast path.
    Stream,
    /// rmcp's own `serve`, the reference for what a client must see.
    Rmcp,
}

/// A client writing and reading raw JSON-RPC lines.
pub struct Raw {
    pub write: WriteHalf<DuplexStream>,
    pub lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    pub served: tokio::task::JoinHandle<()>,
}

impl Raw {
    pub fn open(server: McpServer, via: Via) -> Self {
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (input, output) = tokio::io::split(server_end);
        let served = tokio::spawn(async move {
            match via {
                Via::Stream => {
                    let _ = toolwright_mcp::serve_io(server, input, output).await;
                }
                Via::Rmcp => {
                    if let Ok(running) = server.serve((input, output)).await {
                        let _ = running.waiting().await;
                    }
                }
            }
        });
        let (read, write) = tokio::io::split(client);
        Self {
            write,
            lines: BufReader::new(read).lines(),
            served,
        }
    }

    /// A session initialized with `capabilities`.
    pub async fn initialized(server: McpServer, via: Via, capabilities: Value) -> Self {
        let mut raw = Self::open(server, via);
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "0"}}}),
        )
        .await;
        let reply = raw.next().await;
        assert!(reply.contains("\"serverInfo\""), "{reply}");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    pub async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    pub async fn send_line(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    /// The next line from the server.
    pub async fn next(&mut self) -> String {
        within("a line from the server", self.lines.next_line())
            .await
            .unwrap()
            .expect("the server still writes")
    }
}

/// rmcp's "received request" events: the requests rmcp's service loop handled, by the
/// thread that handled them and their id. One subscriber for the whole test binary,
/// installed as the global default: a subscriber set per thread (`set_default`) while
/// other tests' threads hit the same callsites misses events now and then, as tracing
/// caches a callsite's interest for all threads.
#[derive(Default)]
struct RmcpRequests(Mutex<Vec<(ThreadId, String)>>);

static RMCP_REQUESTS: OnceLock<Arc<RmcpRequests>> = OnceLock::new();

/// The ids of the requests rmcp's service loop handled on this thread since last asked
/// (every task of a `#[tokio::test]` runs on its thread).
fn handled_here() -> Vec<String> {
    let requests = RMCP_REQUESTS.get_or_init(|| {
        let requests = Arc::new(RmcpRequests::default());
        tracing::subscriber::set_global_default(Recorder(requests.clone()))
            .expect("no other global subscriber in this test binary");
        requests
    });
    // A callsite first hit on another thread while the subscriber was being installed
    // may have cached "no interest": asked again, now that it is in place.
    tracing::callsite::rebuild_interest_cache();
    let here = std::thread::current().id();
    let mut all = requests.0.lock().unwrap();
    let (mine, others) = all.drain(..).partition(|(thread, _)| *thread == here);
    *all = others;
    mine.into_iter().map(|(_, id)| id).collect()
}

struct Recorder(Arc<RmcpRequests>);

struct Fields<'a> {
    message: &'a mut String,
    id: &'a mut String,
}

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => *self.message = format!("{value:?}"),
            "id" => *self.id = format!("{value:?}"),
            _ => {}
        }
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let (mut message, mut id) = (String::new(), String::new());
        event.record(&mut Fields {
            message: &mut message,
            id: &mut id,
        });
        if message == "received request" {
            let here = std::thread::current().id();
            (self.0).0.lock().unwrap().push((here, id));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The replies to `lines`, one request at a time, in a session of `server` served `via`,
/// and the ids of the requests rmcp's service loop handled meanwhile.
pub async fn replies(server: McpServer, via: Via, lines: &[Value]) -> (Vec<String>, Vec<String>) {
    handled_here();
    replies_in(Raw::initialized(server, via, json!({})).await, lines).await
}

/// The replies to `lines`, one request at a time, in `raw`'s session, and the ids of the
/// requests rmcp's service loop handled meanwhile.
pub async fn replies_in(mut raw: Raw, lines: &[Value]) -> (Vec<String>, Vec<String>) {
    handled_here();
    let mut replies = Vec::new();
    for line in lines {
        raw.send(line).await;
        replies.push(raw.next().await);
    }
    (replies, handled_here())
}

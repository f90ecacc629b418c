//! Streamable HTTP under load: N concurrent clients over loopback call the same
//! `forecast` tool on our server (`McpHttpServer`, i.e. `McpServer::router_with` with its
//! default limits) and on rmcp's own `StreamableHttpService` on axum serving a server
//! written with rmcp's `#[tool_router]` macros. Both keep stateful sessions, loopback
//! host and origin checks and a 4 MiB body limit.
//!
//! A load test rather than a criterion measurement: it runs a fixed number of calls and
//! prints a table of calls/s, p50/p99 latency, server CPU per call and the process's
//! RSS before and after every round. Our server answers these calls as
//! `application/json` on its fast path (the tool cannot need its client mid-call), rmcp
//! on an event stream; the table's head says which content type each gave.
//!
//! ```text
//! cargo bench --manifest-path bench-mcp/Cargo.toml --bench http_load             # 2,000 calls a client, 3 rounds
//! cargo bench --manifest-path bench-mcp/Cargo.toml --bench http_load -- --quick  # 200 calls a client, 2 rounds
//! ```
//!
//! `MCP_LOAD_QUICK=1` selects the quick mode too; `MCP_LOAD_CALLS` and `MCP_LOAD_ROUNDS`
//! set the calls a client and the rounds. Instructions per call: run the bench binary
//! under `valgrind --tool=callgrind --separate-threads=yes` with two call counts and sum
//! the profiles of the threads that ran `server_thread_ours` (or `server_thread_rmcp`),
//! which each thread of a server's runtime calls as it starts; the difference between the
//! runs, divided by the difference in calls, is a server's instructions a call
//! (`scripts/bench-goals.sh http` does this). Each server runs in its own tokio
//! runtime whose threads record their ids as they start; a server's CPU is the run time
//! the kernel counts for those threads (`/proc/self/task/<tid>/schedstat`), so the
//! clients, which run in a third runtime, are not counted.
//!
//! Both protocol revisions are measured, one after the other (`MCP_LOAD_REVISION=2025`
//! or `2026` selects one, as instruction counts need). On 2025-06-18 each client opens a
//! session (`initialize`, `notifications/initialized`) before the timed part, posts
//! `tools/call` requests one after another with reqwest, and closes its session
//! (`DELETE`) after it. On 2026-07-28 there is no session: each call carries what a
//! 2026-07-28 client sends (`MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers,
//! the protocol version, client capabilities and client info in its `_meta`), which
//! rmcp's service serves statelessly, as our endpoint does.

mod forecast;

use axum::serve::ListenerExt;
use forecast::{BEIJING_3_DAYS, RmcpServer, forecast_tool};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use toolwright_core::tools;
use toolwright_mcp::{MAX_MESSAGE_BYTES, McpHttpServer, McpServer};

/// The protocol revision the clients speak.
#[derive(Clone, Copy, PartialEq)]
enum Revision {
    /// 2025-06-18: a session per client (`initialize`, then calls with its id).
    Sessions,
    /// 2026-07-28: no session; every call names its protocol version and its client in
    /// its `_meta`, and its method and tool in the `Mcp-Method` and `Mcp-Name` headers.
    Stateless,
}

impl Revision {
    fn version(self) -> &'static str {
        match self {
            Self::Sessions => "2025-06-18",
            Self::Stateless => "2026-07-28",
        }
    }

    /// The revisions `MCP_LOAD_REVISION` names (`2025`, `2026`, or both when unset).
    fn selected() -> Vec<Self> {
        match std::env::var("MCP_LOAD_REVISION").as_deref() {
            Ok("2025") => vec![Self::Sessions],
            Ok("2026") => vec![Self::Stateless],
            Ok(other) if !other.is_empty() => {
                panic!("MCP_LOAD_REVISION is `{other}`; expected `2025` or `2026`")
            }
            _ => vec![Self::Sessions, Self::Stateless],
        }
    }
}
/// The session idle timeout both servers use (our default).
const SESSION_IDLE: Duration = Duration::from_secs(300);

/// Called first by each thread of our server's runtime, so that a profile per thread
/// (`callgrind --separate-threads=yes`) shows which threads are this server's.
#[inline(never)]
fn server_thread_ours() {
    std::hint::black_box("ours");
}

/// [`server_thread_ours`] for rmcp's server (a body of its own, so that the two are
/// never merged into one function).
#[inline(never)]
fn server_thread_rmcp() {
    std::hint::black_box("rmcp");
}

/// A tokio runtime serving one server, and the ids of its threads.
struct ServerRuntime {
    name: &'static str,
    runtime: Runtime,
    threads: Arc<Mutex<Vec<String>>>,
    url: String,
}

impl ServerRuntime {
    /// A two-worker runtime (the machine the figures come from has two cores), whose
    /// threads each call `marker` as they start.
    fn new(name: &'static str, marker: fn()) -> Self {
        let threads = Arc::new(Mutex::new(Vec::new()));
        let recorder = threads.clone();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(name)
            .on_thread_start(move || {
                marker();
                // "<pid>/task/<tid>": the thread's own entry, read later from outside it.
                if let Ok(link) = std::fs::read_link("/proc/thread-self") {
                    let tid = link
                        .file_name()
                        .map(|tid| tid.to_string_lossy().into_owned());
                    recorder.lock().expect("not poisoned").extend(tid);
                }
            })
            .enable_all()
            .build()
            .expect("server runtime");
        Self {
            name,
            runtime,
            threads,
            url: String::new(),
        }
    }

    /// Nanoseconds the server's threads have run. A thread that has ended no longer
    /// counts; a server runtime's workers live as long as it does.
    fn cpu_ns(&self) -> u64 {
        let threads = self.threads.lock().expect("not poisoned");
        threads
            .iter()
            .filter_map(|tid| {
                std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()
            })
            .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
            .sum()
    }
}

/// Our server, as `examples/mcp-server --http` serves it.
fn ours() -> ServerRuntime {
    let mut server = ServerRuntime::new("ours", server_thread_ours);
    let http = server
        .runtime
        .block_on(McpHttpServer::bind(
            McpServer::new(tools![forecast_tool]),
            "127.0.0.1:0",
        ))
        .expect("binds");
    server.url = http.url();
    server.runtime.spawn(http.run());
    server
}

/// rmcp's Streamable HTTP service on axum, with our defaults where rmcp has them.
fn rmcp() -> ServerRuntime {
    let mut server = ServerRuntime::new("rmcp", server_thread_rmcp);
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(SESSION_IDLE);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(
            ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .flat_map(|host| ["http", "https"].map(|scheme| format!("{scheme}://{host}:*"))),
        )
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES);
    let service = StreamableHttpService::new(|| Ok(RmcpServer), Arc::new(sessions), config);
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = server
        .runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("binds");
    server.url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    // As our server does: without TCP_NODELAY each answer waits for a delayed ACK.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    server
        .runtime
        .spawn(async move { axum::serve(listener, router).await });
    server
}

/// One client of a server: a session (2025-06-18), or none (2026-07-28).
struct Session {
    http: reqwest::Client,
    url: String,
    revision: Revision,
    /// The session's id; `None` on 2026-07-28.
    id: Option<String>,
}

impl Session {
    /// `initialize`, then `notifications/initialized`; nothing on 2026-07-28.
    async fn open(http: reqwest::Client, url: &str, revision: Revision) -> Self {
        if revision == Revision::Stateless {
            return Self {
                http,
                url: url.to_owned(),
                revision,
                id: None,
            };
        }
        let response = post(
            &http,
            url,
            None,
            revision,
            serde_json::json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": revision.version(),
                    "capabilities": {},
                    "clientInfo": {"name": "load", "version": "0"}
                }
            }),
        )
        .await;
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|id| id.to_str().ok())
            .expect("the server opens a session")
            .to_owned();
        response.bytes().await.expect("initialize answered");
        let session = Self {
            http,
            url: url.to_owned(),
            revision,
            id: Some(id),
        };
        let notified = post(
            &session.http,
            url,
            session.id.as_deref(),
            revision,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        assert!(notified.status().is_success(), "{}", notified.status());
        session
    }

    /// One `tools/call`, checked; the answer's content type.
    async fn call(&self, id: u64) -> String {
        let mut params = serde_json::json!({
            "name": "forecast",
            "arguments": {"city": "Beijing", "days": 3, "unit": "celsius"}
        });
        if self.revision == Revision::Stateless {
            params["_meta"] = serde_json::json!({
                "io.modelcontextprotocol/protocolVersion": self.revision.version(),
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "0"}
            });
        }
        let response = post(
            &self.http,
            &self.url,
            self.id.as_deref(),
            self.revision,
            serde_json::json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params
            }),
        )
        .await;
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|kind| kind.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = response.bytes().await.expect("answered");
        let body = String::from_utf8_lossy(&body);
        assert!(body.contains(BEIJING_3_DAYS), "unexpected answer: {body}");
        kind
    }

    async fn close(self) {
        let Some(id) = &self.id else {
            return;
        };
        let closed = self
            .http
            .delete(&self.url)
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", self.revision.version())
            .send()
            .await
            .expect("DELETE answered");
        assert!(closed.status().is_success(), "{}", closed.status());
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    revision: Revision,
    message: serde_json::Value,
) -> reqwest::Response {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", revision.version());
    }
    // The headers a 2026-07-28 client sends with every request (SEP-2243).
    if revision == Revision::Stateless {
        request = request
            .header("mcp-protocol-version", revision.version())
            .header("mcp-method", message["method"].as_str().unwrap_or_default());
        if let Some(name) = message["params"]["name"].as_str() {
            request = request.header("mcp-name", name);
        }
    }
    let request = request.body(serde_json::to_vec(&message).expect("serializable"));
    let response = request.send().await.expect("the server answers");
    assert!(
        response.status().is_success(),
        "{} from {url}",
        response.status()
    );
    response
}

/// What one round against one server measured.
struct Round {
    calls: usize,
    elapsed: Duration,
    cpu_ns: u64,
    /// Each call's latency, in microseconds.
    latencies: Vec<u32>,
    rss_before_kib: u64,
    rss_after_kib: u64,
}

/// `clients` clients each make `calls` calls, one after another.
fn round(
    clients_rt: &Runtime,
    server: &ServerRuntime,
    revision: Revision,
    clients: usize,
    calls: usize,
) -> Round {
    let rss_before_kib = rss_kib();
    let http = reqwest::Client::new();
    let sessions: Vec<Session> = clients_rt.block_on(async {
        let opening = (0..clients).map(|_| {
            let (http, url) = (http.clone(), server.url.clone());
            tokio::spawn(async move { Session::open(http, &url, revision).await })
        });
        let mut sessions = Vec::new();
        for session in opening.collect::<Vec<_>>() {
            sessions.push(session.await.expect("session opens"));
        }
        sessions
    });
    let cpu_before = server.cpu_ns();
    let started = Instant::now();
    let (sessions, latencies) = clients_rt.block_on(async {
        let running: Vec<_> = sessions
            .into_iter()
            .map(|session| {
                tokio::spawn(async move {
                    let mut latencies = Vec::with_capacity(calls);
                    for id in 1..=calls as u64 {
                        let call = Instant::now();
                        session.call(id).await;
                        latencies
                            .push(u32::try_from(call.elapsed().as_micros()).unwrap_or(u32::MAX));
                    }
                    (session, latencies)
                })
            })
            .collect();
        let mut sessions = Vec::new();
        let mut latencies = Vec::new();
        for client in running {
            let (session, client_latencies) = client.await.expect("client ran");
            sessions.push(session);
            latencies.extend(client_latencies);
        }
        (sessions, latencies)
    });
    let elapsed = started.elapsed();
    let cpu_ns = server.cpu_ns() - cpu_before;
    clients_rt.block_on(async {
        for session in sessions {
            session.close().await;
        }
    });
    drop(http);
    Round {
        calls: clients * calls,
        elapsed,
        cpu_ns,
        latencies,
        rss_before_kib,
        rss_after_kib: rss_kib(),
    }
}

/// The whole process's resident set, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(rank).copied().unwrap_or(0)
}

/// Calls/s, p50 and p99 in µs, server CPU µs per call.
fn summary(rounds: &[Round]) -> (f64, u32, u32, f64) {
    let calls: usize = rounds.iter().map(|round| round.calls).sum();
    let elapsed: f64 = rounds.iter().map(|round| round.elapsed.as_secs_f64()).sum();
    let cpu_ns: u64 = rounds.iter().map(|round| round.cpu_ns).sum();
    let mut latencies: Vec<u32> = rounds
        .iter()
        .flat_map(|round| round.latencies.iter().copied())
        .collect();
    latencies.sort_unstable();
    (
        calls as f64 / elapsed,
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        cpu_ns as f64 / 1_000.0 / calls as f64,
    )
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick")
        || std::env::var_os("MCP_LOAD_QUICK").is_some_and(|quick| quick != "0");
    let (calls, rounds) = if quick { (200, 2) } else { (2_000, 3) };
    // Fixed counts, for instructions under callgrind (see the doc comment).
    let count = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(default)
    };
    let (calls, rounds) = (
        count("MCP_LOAD_CALLS", calls),
        count("MCP_LOAD_ROUNDS", rounds),
    );
    // Plain HTTP needs no TLS, but reqwest's client wants a provider installed.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let clients_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("clients")
        .enable_all()
        .build()
        .expect("client runtime");
    let servers = [ours(), rmcp()];
    println!(
        "MCP tools/call over Streamable HTTP on loopback: {calls} calls a client, {rounds} rounds{}",
        if quick { " (quick)" } else { "" }
    );
    for revision in Revision::selected() {
        println!();
        println!(
            "== protocol {} ({})",
            revision.version(),
            match revision {
                Revision::Sessions => "a session per client",
                Revision::Stateless => "stateless: no session, the 2026-07-28 headers and _meta",
            }
        );
        run_revision(&clients_rt, &servers, revision, calls, rounds);
    }
    for server in servers {
        server.runtime.shutdown_background();
    }
    clients_rt.shutdown_background();
}

/// Rounds of 8 then 50 clients against both servers, speaking `revision`.
fn run_revision(
    clients_rt: &Runtime,
    servers: &[ServerRuntime; 2],
    revision: Revision,
    calls: usize,
    rounds: usize,
) {
    // How each server answers a call: ours as JSON when the tool cannot need its
    // client mid-call, rmcp's service on an event stream.
    for server in servers {
        let kind = clients_rt.block_on(async {
            let session = Session::open(reqwest::Client::new(), &server.url, revision).await;
            let kind = session.call(1).await;
            session.close().await;
            kind
        });
        println!("{} answers tools/call as {kind}", server.name);
    }
    for clients in [8, 50] {
        let mut results: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
        println!();
        println!(
            "{clients} clients   {:<5} {:>6} {:>9} {:>8} {:>8} {:>11} {:>10} {:>10}",
            "round",
            "server",
            "calls/s",
            "p50 µs",
            "p99 µs",
            "CPU µs/call",
            "RSS before",
            "RSS after"
        );
        for index in 0..rounds {
            // Alternate which server goes first, so neither always runs on a warmer machine.
            let order = if index % 2 == 0 { [0, 1] } else { [1, 0] };
            for which in order {
                let server = &servers[which];
                let measured = round(clients_rt, server, revision, clients, calls);
                let (rate, p50, p99, cpu) = summary(std::slice::from_ref(&measured));
                println!(
                    "{:<11} {:<5} {:>6} {:>9.0} {:>8} {:>8} {:>11.1} {:>7} MiB {:>6} MiB",
                    "",
                    index + 1,
                    server.name,
                    rate,
                    p50,
                    p99,
                    cpu,
                    measured.rss_before_kib / 1024,
                    measured.rss_after_kib / 1024
                );
                results[which].push(measured);
            }
        }
        let ours = summary(&results[0]);
        let theirs = summary(&results[1]);
        println!(
            "{clients} clients, all rounds: calls/s {:.0} ours / {:.0} rmcp; p50 {} / {} µs; p99 {} / {} µs; CPU per call {:.1} / {:.1} µs = {:.2}x rmcp",
            ours.0,
            theirs.0,
            ours.1,
            theirs.1,
            ours.2,
            theirs.2,
            ours.3,
            theirs.3,
            ours.3 / theirs.3
        );
    }
}

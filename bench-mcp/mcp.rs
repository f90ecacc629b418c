//! `tools/call` round trips over an in-memory transport with the same rmcp client:
//! our server (`toolwright_mcp::McpServer` over a `#[tool]`), served by `toolwright_mcp::serve_io`
//! (the stdio path) and by rmcp's own `serve`, against a server written with rmcp's own
//! `#[tool_router]`/`#[tool]` macros exposing the same tool; and `tools/list` of 1,000
//! tools from our server.
//!
//! `cargo bench --manifest-path bench-mcp/Cargo.toml --bench mcp` (CI adds `-- --quick`)
//!
//! Wall-clock speed on a shared machine moves by up to half over tenths of a second, so
//! the servers are measured side by side: each criterion sample is a paired round on
//! fresh instances of all three, whose calls take turns in short chunks. Each server's
//! criterion line is its own share of those rounds; after them one line gives the median
//! ratio of each of ours to rmcp's over the rounds, the figure the comparison is about.

mod forecast;
mod in_memory;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use forecast::{BEIJING_3_DAYS, RmcpServer, forecast_tool};
use in_memory::{call_params, client_of, client_of_stream};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use toolwright_core::{AgentResult, ToolContext, ToolSet, tool::TypedTool, tools};
use toolwright_mcp::McpServer;

/// The servers compared, by their criterion names; the last is the reference.
const SERVERS: [&str; 3] = ["ours", "ours_via_rmcp", "rmcp_macros"];

/// Calls a server makes in a row before the next one's turn: a chunk lasts about a
/// millisecond, far shorter than the machine's changes of speed, yet long enough for
/// each server to run from its own warm caches.
const CHUNK: u64 = 64;

/// Rounds with fewer calls per server are left out of the ratio line: their few chunks
/// are at the mercy of a single interruption.
const MIN_CALLS_FOR_RATIO: u64 = 256;

/// One of many tools for the listing benchmark.
struct Noop(String);

#[toolwright_core::async_trait]
impl TypedTool for Noop {
    type Args = ();
    type Output = &'static str;
    fn name(&self) -> &str {
        &self.0
    }
    fn description(&self) -> &'static str {
        "Does nothing."
    }
    async fn call_typed(&self, _: (), _: &ToolContext) -> AgentResult<&'static str> {
        Ok("ok")
    }
}

/// A client of each server in `SERVERS`' order, each on a fresh instance whose answer
/// has been checked (that first call also warms it).
async fn fresh_clients(params: &CallToolRequestParams) -> [RunningService<RoleClient, ()>; 3] {
    let clients = [
        client_of_stream(McpServer::new(tools![forecast_tool])).await,
        client_of(McpServer::new(tools![forecast_tool])).await,
        client_of(RmcpServer).await,
    ];
    for client in &clients {
        let result = client
            .call_tool(params.clone())
            .await
            .expect("call succeeds");
        let text = serde_json::to_value(&result.content).expect("serializable");
        assert_eq!(
            text[0]["text"], BEIJING_3_DAYS,
            "all servers answer the same text"
        );
    }
    clients
}

/// `calls` round trips to each server on fresh instances, taking turns chunk by chunk
/// (who goes first rotates); the time each server spent, set-up left out.
async fn paired_round(calls: u64, params: &CallToolRequestParams) -> [Duration; 3] {
    let clients = fresh_clients(params).await;
    let mut spent = [Duration::ZERO; 3];
    let mut done = 0;
    let mut first = 0;
    while done < calls {
        let chunk = CHUNK.min(calls - done);
        for turn in 0..clients.len() {
            let server = (first + turn) % clients.len();
            let start = Instant::now();
            for _ in 0..chunk {
                clients[server]
                    .call_tool(params.clone())
                    .await
                    .expect("call succeeds");
            }
            spent[server] += start.elapsed();
        }
        done += chunk;
        first += 1;
    }
    for client in clients {
        client.cancel().await.expect("client stops");
    }
    spent
}

/// The lower quartile, median and upper quartile of `values` (nearest rank).
fn quartiles(mut values: Vec<f64>) -> [f64; 3] {
    values.sort_by(f64::total_cmp);
    let last = values.len() - 1;
    [1, 2, 3].map(|quarter| values[(last * quarter + 2) / 4])
}

/// Prints, for each of ours, the median over `rounds` of its time over rmcp's with the
/// middle half of the rounds, then each server's median time a call.
fn report_ratios(rounds: &[(u64, [Duration; 3])]) {
    let rounds: Vec<_> = rounds
        .iter()
        .filter(|(calls, _)| *calls >= MIN_CALLS_FOR_RATIO)
        .collect();
    if rounds.is_empty() {
        println!(
            "mcp_tools_call ratio: no paired round of {MIN_CALLS_FOR_RATIO} calls or more ran"
        );
        return;
    }
    let of_each = |value: &dyn Fn(u64, &[Duration; 3]) -> f64| {
        quartiles(
            rounds
                .iter()
                .map(|(calls, spent)| value(*calls, spent))
                .collect(),
        )
    };
    let reference = SERVERS.len() - 1;
    for (server, name) in SERVERS.iter().enumerate().take(reference) {
        let [low, median, high] =
            of_each(&|_, spent| spent[server].as_secs_f64() / spent[reference].as_secs_f64());
        println!(
            "mcp_tools_call ratio {name}/{}: {median:.3} (median of {} paired rounds, middle half {low:.3}-{high:.3})",
            SERVERS[reference],
            rounds.len(),
        );
    }
    let per_call: Vec<String> = SERVERS
        .iter()
        .enumerate()
        .map(|(server, name)| {
            let [_, median, _] =
                of_each(&|calls, spent| spent[server].as_secs_f64() * 1e6 / calls as f64);
            format!("{name} {median:.2} us")
        })
        .collect();
    println!(
        "mcp_tools_call a call, median of the same rounds: {}",
        per_call.join(", ")
    );
}

fn round_trips(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let params = call_params();
    let rounds = RefCell::new(Vec::new());
    let mut group = c.benchmark_group("mcp_tools_call");
    for (server, name) in SERVERS.iter().enumerate() {
        group.bench_function(*name, |b| {
            b.to_async(&runtime).iter_custom(|calls| {
                let (params, rounds) = (&params, &rounds);
                async move {
                    let spent = paired_round(calls, params).await;
                    rounds.borrow_mut().push((calls, spent));
                    spent[server]
                }
            })
        });
    }
    group.finish();
    report_ratios(&rounds.into_inner());
}

fn listing(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut set = ToolSet::new();
    for i in 0..1_000 {
        set.register_tool(Noop(format!("noop_{i}"))).expect("valid");
    }
    let client = runtime.block_on(client_of(McpServer::new(set)));
    let listed = runtime.block_on(client.list_all_tools()).expect("listing");
    assert_eq!(listed.len(), 1_000);
    let mut group = c.benchmark_group("mcp_tools_list");
    group.bench_function("ours_1000_tools_all_pages", |b| {
        b.to_async(&runtime)
            .iter(|| async { client.list_all_tools().await.expect("listing").len() })
    });
    group.finish();
}

criterion_group! {
    name = calls;
    // Each sample runs all three servers, so a second of one server's time is three of
    // the clock's; quick mode (CI's) stops a server's doubling batches there at the
    // latest, where a shared machine's noise could otherwise keep it going for five.
    // `--warm-up-time` and `--measurement-time` still override both.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(1));
    targets = round_trips
}
criterion_group!(list, listing);
criterion_main!(calls, list);

//! Peak memory while 8 clients each send a body just under the size limit: the server's
//! memory grows by at most twice what they sent, whatever the bodies hold. One test in
//! its own binary, so nothing else moves this process's memory meanwhile.

#[path = "support/raw_http.rs"]
mod raw_http;

use raw_http::{open_session, post, rpc};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use toolwright_core::{tool, tools};
use toolwright_mcp::{HttpOptions, McpHttpServer, McpServer};

/// Counts the items of `items`.
#[tool]
async fn count(items: Value, pad: String) -> usize {
    items.as_array().map_or(0, Vec::len) + pad.len()
}

/// The resident set size of this process, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Sends the 8 bodies at once; the peak growth of this process's memory, in bytes,
/// sampled every millisecond, and the statuses.
async fn peak_growth(
    addr: SocketAddr,
    session: Option<&str>,
    bodies: Vec<Vec<u8>>,
) -> (u64, Vec<u16>) {
    let before = rss_kib();
    let peak = Arc::new(AtomicU64::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    let mut tasks = Vec::new();
    for body in bodies {
        let session = session.map(str::to_owned);
        tasks.push(tokio::spawn(async move {
            post(addr, session.as_deref(), &[], &body)
                .await
                .unwrap()
                .status
        }));
    }
    let mut statuses = Vec::new();
    for task in tasks {
        statuses.push(task.await.unwrap());
    }
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let grown = peak.load(Ordering::Relaxed).saturating_sub(before) * 1024;
    (grown, statuses)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_near_limit_bodies_grow_memory_by_at_most_twice_their_size() {
    let options = HttpOptions::default();
    let (limit, max_values) = (options.max_body_bytes, options.max_json_values);
    let http = McpHttpServer::bind(McpServer::new(tools![count]), "127.0.0.1:0")
        .await
        .unwrap()
        .with_options(options);
    let addr = http.local_addr();
    let stop = http.shutdown_token();
    tokio::spawn(http.run());
    let (_, session) = open_session(addr, &[]).await.unwrap();

    // Each body is the limit less a little; `items` items, the rest a string.
    let body = |id: u64, items: usize| {
        let pad = limit - 4096 - 2 * items;
        let arguments = json!({"items": vec![0u8; items], "pad": "x".repeat(pad)});
        rpc(
            id,
            "tools/call",
            json!({"name": "count", "arguments": arguments}),
        )
    };
    let shapes = [
        // One long string.
        ("text", 0, 200),
        // As many values as a body may hold.
        ("values", max_values - 100, 200),
        // Nothing but values: refused before it is parsed.
        ("flood", (limit - 4096) / 2, 413),
    ];
    for (shape, items, status) in shapes {
        let bodies: Vec<Vec<u8>> = (0..8).map(|i| body(100 + i, items)).collect();
        let sent: usize = bodies.iter().map(Vec::len).sum();
        let (grown, statuses) = peak_growth(addr, session.as_deref(), bodies).await;
        eprintln!(
            "{shape}: memory grew {:.1} MiB for {:.1} MiB of bodies ({:.2}x)",
            grown as f64 / 1048576.0,
            sent as f64 / 1048576.0,
            grown as f64 / sent as f64
        );
        assert!(
            statuses.iter().all(|&s| s == status),
            "{shape}: {statuses:?}"
        );
        assert!(
            grown <= 2 * sent as u64,
            "{shape}: memory grew {grown} bytes for {sent} bytes of bodies"
        );
    }
    stop.cancel();
}

//! `resources/read` and `prompts/get` round trips over an in-memory transport with the
//! same rmcp client: our server (`toolwright_mcp::McpServer` with `#[resource]` and
//! `#[prompt]` fns), served by `toolwright_mcp::serve_io` (the stdio path) and by rmcp's
//! own `serve`, against a server exposing the same items with rmcp's own means (its
//! `#[prompt_router]`/`#[prompt]` macros; `read_resource` by hand, rmcp having no
//! resource macro). Three requests: a fixed text resource, a templated one whose one URI
//! variable is parsed, and a prompt with one argument.
//!
//! `cargo bench --manifest-path bench-mcp/Cargo.toml --bench features` (CI adds `-- --quick`)
//!
//! The servers are timed side by side as `mcp.rs` times `tools/call` (see `paired.rs`):
//! after each request's group one line gives the median ratio of each of ours to rmcp's.

mod in_memory;
mod items;
mod paired;

use criterion::{Criterion, criterion_group, criterion_main};
use in_memory::{Client, client_of, client_of_stream};
use items::{Request, RmcpFeatures};
use paired::bench_side_by_side;

/// The servers compared, by their criterion names; the last is the reference.
const SERVERS: [&str; 3] = ["ours", "ours_via_rmcp", "rmcp"];

/// A client of each server in `SERVERS`' order, each on a fresh instance whose answer
/// to `request` has been checked (that first request also warms it).
async fn fresh_clients(request: Request) -> [Client; 3] {
    let clients = [
        client_of_stream(items::ours()).await,
        client_of(items::ours()).await,
        client_of(RmcpFeatures::new()).await,
    ];
    for (client, server) in clients.iter().zip(SERVERS) {
        assert_eq!(
            request.send(client).await.as_deref(),
            Some(request.answer()),
            "{server} answers {request:?} as the others do"
        );
    }
    clients
}

fn round_trips(c: &mut Criterion) {
    for request in Request::ALL {
        bench_side_by_side(
            c,
            &format!("mcp_{}", request.name()),
            SERVERS,
            async || fresh_clients(request).await,
            async |client| {
                request.send(client).await;
            },
        );
    }
}

criterion_group! {
    name = features;
    config = paired::config();
    targets = round_trips
}
criterion_main!(features);

//! Servers timed side by side, as the in-process benchmarks measure them.
//!
//! Wall-clock speed on a shared machine moves by up to half over tenths of a second, so
//! each criterion sample is a paired round on fresh instances of every server compared,
//! whose requests take turns in short chunks. Each server's criterion line is its own
//! share of those rounds; after them one line gives, for each server but the last (the
//! reference), the median ratio of its time to the reference's over the rounds.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use criterion::Criterion;

use crate::in_memory::Client;

/// Requests a server makes in a row before the next one's turn: a chunk lasts about a
/// millisecond, far shorter than the machine's changes of speed, yet long enough for
/// each server to run from its own warm caches.
const CHUNK: u64 = 64;

/// Rounds with fewer requests per server are left out of the ratio line: their few
/// chunks are at the mercy of a single interruption.
const MIN_CALLS_FOR_RATIO: u64 = 256;

/// Criterion's settings for side-by-side groups. Each sample runs every server, so a
/// second of one server's time is several of the clock's; quick mode (CI's) stops a
/// server's doubling batches there at the latest, where a shared machine's noise could
/// otherwise keep it going for five. `--warm-up-time` and `--measurement-time` still
/// override both.
pub fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(1))
}

/// Benchmarks `servers` (criterion names; the last is the reference) in the criterion
/// group `group`: each sample is a paired round on the clients `connect` makes (fresh
/// instances, answers checked, in `servers`' order) in which each makes the sample's
/// number of `request`s. Prints the ratio lines when the group is done.
pub fn bench_side_by_side<const N: usize>(
    c: &mut Criterion,
    group: &str,
    servers: [&str; N],
    connect: impl AsyncFn() -> [Client; N],
    request: impl AsyncFn(&Client),
) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let rounds = RefCell::new(Vec::new());
    let mut measured = c.benchmark_group(group);
    for (server, name) in servers.iter().enumerate() {
        measured.bench_function(*name, |b| {
            b.to_async(&runtime).iter_custom(|calls| {
                let (connect, request, rounds) = (&connect, &request, &rounds);
                async move {
                    let spent = paired_round(connect().await, calls, request).await;
                    rounds.borrow_mut().push((calls, spent));
                    spent[server]
                }
            })
        });
    }
    measured.finish();
    report_ratios(group, &servers, &rounds.into_inner());
}

/// `calls` requests to each of `clients`, taking turns chunk by chunk (who goes first
/// rotates); the time each spent. The clients are stopped afterwards.
async fn paired_round<const N: usize>(
    clients: [Client; N],
    calls: u64,
    request: &impl AsyncFn(&Client),
) -> [Duration; N] {
    let mut spent = [Duration::ZERO; N];
    let mut done = 0;
    let mut first = 0;
    while done < calls {
        let chunk = CHUNK.min(calls - done);
        for turn in 0..N {
            let server = (first + turn) % N;
            let start = Instant::now();
            for _ in 0..chunk {
                request(&clients[server]).await;
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

/// Prints, for each server but the reference, the median over `rounds` of its time over
/// the reference's with the middle half of the rounds, then each server's median time a
/// request.
fn report_ratios<const N: usize>(
    group: &str,
    servers: &[&str; N],
    rounds: &[(u64, [Duration; N])],
) {
    let rounds: Vec<_> = rounds
        .iter()
        .filter(|(calls, _)| *calls >= MIN_CALLS_FOR_RATIO)
        .collect();
    if rounds.is_empty() {
        println!("{group} ratio: no paired round of {MIN_CALLS_FOR_RATIO} calls or more ran");
        return;
    }
    let of_each = |value: &dyn Fn(u64, &[Duration; N]) -> f64| {
        quartiles(
            rounds
                .iter()
                .map(|(calls, spent)| value(*calls, spent))
                .collect(),
        )
    };
    let reference = N - 1;
    for (server, name) in servers.iter().enumerate().take(reference) {
        let [low, median, high] =
            of_each(&|_, spent| spent[server].as_secs_f64() / spent[reference].as_secs_f64());
        println!(
            "{group} ratio {name}/{}: {median:.3} (median of {} paired rounds, middle half {low:.3}-{high:.3})",
            servers[reference],
            rounds.len(),
        );
    }
    let per_call: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(server, name)| {
            let [_, median, _] =
                of_each(&|calls, spent| spent[server].as_secs_f64() * 1e6 / calls as f64);
            format!("{name} {median:.2} us")
        })
        .collect();
    println!(
        "{group} a call, median of the same rounds: {}",
        per_call.join(", ")
    );
}

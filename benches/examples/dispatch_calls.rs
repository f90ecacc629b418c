//! Makes `N` calls through one path of the dispatch benchmark, so that an instruction
//! counter (`valgrind --tool=callgrind`) run at two values of `N` gives the instructions
//! of one call, free of the noise of timing: `scripts/dispatch-instructions.sh`.
//!
//! The paths `noop_among_10` and `noop_among_10000` call a no-op tool, the last one
//! registered, in a set of 10 and of 10,000 tools: the scale benchmark's call, counted
//! the same way.
//!
//! `cargo run --release -p agent-benches --example dispatch_calls -- tool_macro 100000`

use agent_benches::dispatch::{Fixture, by_hand, by_hand_from_value};
use agent_benches::{noop_name, noop_set};
use serde_json::json;
use std::hint::black_box;
use std::process::ExitCode;

const PATHS: [&str; 6] = [
    "hand_written",
    "hand_written_from_value",
    "tool_macro",
    "typed_tool",
    "noop_among_10",
    "noop_among_10000",
];

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(Ok(calls))) = (args.next(), args.next().map(|n| n.parse::<u64>())) else {
        eprintln!(
            "usage: dispatch_calls PATH CALLS, where PATH is one of {}",
            PATHS.join(", ")
        );
        return ExitCode::FAILURE;
    };
    if !PATHS.contains(&path.as_str()) {
        eprintln!(
            "unknown path `{path}`: expected one of {}",
            PATHS.join(", ")
        );
        return ExitCode::FAILURE;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime needs no resources that can be missing");
    let f = Fixture::default();
    // The set of no-ops and the name called, built only for the scale paths.
    let size = match path.as_str() {
        "noop_among_10" => 10,
        "noop_among_10000" => 10_000,
        _ => 0,
    };
    let noops = noop_set(size);
    let noop = noop_name(size.saturating_sub(1));
    let no_args = json!({});
    let failed = runtime.block_on(async {
        let mut failed = 0u64;
        for _ in 0..calls {
            let result = match path.as_str() {
                "hand_written" => by_hand(black_box(&f.args)).await,
                "hand_written_from_value" => by_hand_from_value(black_box(&f.args)).await,
                "tool_macro" => {
                    f.tool_macro
                        .call(black_box("forecast"), black_box(&f.args), &f.ctx)
                        .await
                }
                "noop_among_10" | "noop_among_10000" => {
                    noops
                        .call(black_box(noop.as_str()), black_box(&no_args), &f.ctx)
                        .await
                }
                _ => {
                    f.typed
                        .call(black_box("forecast"), black_box(&f.args), &f.ctx)
                        .await
                }
            };
            failed += u64::from(black_box(result).is_err());
        }
        failed
    });
    if failed > 0 {
        eprintln!("{failed} of {calls} calls failed");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

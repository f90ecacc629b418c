//! Runnable examples live beside this crate: `cargo run --example <name>`.

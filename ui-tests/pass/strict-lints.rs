//! The generated code resolves as the user's own (so that an edit does not re-check every
//! later tool) and is linted as the user's: it raises none of these lints, and it needs no
//! `allow`, which a crate forbidding the lint would refuse (`forbid-lints.rs`).
//! (`unused_qualifications` and `unused` are only denied: serde's derives allow them.)
#![forbid(unused_results, unreachable_pub)]
#![deny(
    unused_qualifications,
    missing_docs,
    unused,
    missing_debug_implementations,
    nonstandard_style,
    rust_2018_idioms,
    trivial_casts,
    trivial_numeric_casts,
    unused_lifetimes,
    single_use_lifetimes,
    let_underscore_drop,
    elided_lifetimes_in_paths,
    unused_import_braces
)]

use toolwright_core::{Progress, State, ToolContext, tool, toolbox, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Units.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Celsius.
    Celsius,
    /// Fahrenheit.
    Fahrenheit,
}

/// A report.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Report {
    /// Lines.
    pub lines: u32,
}

/// Forecast for a city.
#[tool(timeout = "5s", read_only)]
pub async fn forecast(
    /// City name.
    city: String,
    /// Days ahead.
    #[arg(default = 1)]
    days: u8,
    /// Unit.
    unit: Option<Unit>,
    ctx: &ToolContext,
    progress: Progress,
) -> Result<String, String> {
    progress.emit(serde_json::json!({"step": 1})).map_err(|e| e.to_string())?;
    Ok(format!("{city} {days} {unit:?} {}", ctx.call_id()))
}

/// A counter.
#[derive(Debug, Clone)]
pub struct Counter;

/// Count.
#[tool]
pub async fn count(counter: State<Counter>) -> Report {
    let _counter: &Counter = &counter;
    Report { lines: 1 }
}

/// A library.
#[derive(Debug)]
pub struct Library {
    books: Vec<String>,
}

#[toolbox]
impl Library {
    /// Number of books.
    #[tool]
    pub async fn size(&self) -> usize {
        self.books.len()
    }
}

fn main() {
    let set = tools![forecast, count];
    drop(set);
    let library = Arc::new(Library { books: Vec::new() });
    drop(library.into_toolset());
}

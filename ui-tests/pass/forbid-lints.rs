//! A crate that forbids the lints generated code could raise can still use every macro:
//! rustc refuses an `allow` under `forbid` (E0453), so the generated code carries none.
//! The tool types are named like their fns and may go unused, and the traits the
//! expansion imports to pick a conversion may go unused too: those tokens are the
//! macro's own, where rustc reports no lint. (No type here derives `Deserialize`, which
//! allows `non_camel_case_types` itself.)
#![forbid(
    dead_code,
    unused_imports,
    unused_mut,
    unused_variables,
    non_camel_case_types,
    non_snake_case,
    missing_docs
)]

use toolwright_core::{State, ToolContext, tool, toolbox, tools};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::Arc;

/// A report, with a schema (the output schema is the type's).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Report {
    /// Lines.
    pub lines: u32,
}

/// A value without a schema (no output schema).
#[derive(Debug, Serialize)]
pub struct Plain {
    /// Text.
    pub text: String,
}

/// An error that is `Display` only.
#[derive(Debug)]
pub struct Oops;

impl std::fmt::Display for Oops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("oops")
    }
}

/// Listed, with a default and a schema'd output.
#[tool(timeout = "5s")]
pub async fn listed(
    /// Days ahead.
    #[arg(default = 1)]
    days: u8,
    /// Unit.
    unit: Option<String>,
) -> Report {
    Report {
        lines: u32::from(days) + u32::from(unit.is_some()),
    }
}

/// Never listed nor called, private, output without a schema, a `Display` error.
#[tool]
async fn unlisted(text: String) -> Result<Plain, Oops> {
    if text.is_empty() {
        Err(Oops)
    } else {
        Ok(Plain { text })
    }
}

/// Registered, with state and the context.
#[tool(register)]
pub async fn registered(counter: State<Counter>, ctx: &ToolContext) -> Result<String, String> {
    Ok(format!("{} {}", counter.count, ctx.call_id()))
}

/// A counter.
#[derive(Debug, Clone)]
pub struct Counter {
    /// The count.
    pub count: u32,
}

/// A shelf whose toolset is never taken.
#[derive(Debug)]
pub struct Shelf {
    titles: Vec<String>,
}

#[toolbox]
impl Shelf {
    /// The title at a position.
    #[tool]
    pub async fn title(&self, index: usize) -> Result<String, Oops> {
        self.titles.get(index).cloned().ok_or(Oops)
    }
}

/// A toolbox without tools.
#[derive(Debug)]
pub struct Empty;

#[toolbox]
impl Empty {
    /// Not a tool.
    pub fn plain(&self) -> u8 {
        0
    }
}

fn main() {
    let set = tools![listed];
    assert_eq!(set.len(), 1);
    let _shelf = Shelf { titles: Vec::new() };
    assert_eq!(Arc::new(Empty).plain(), 0);
}

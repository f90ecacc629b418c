//! Every return form.
use toolwright_core::{AgentResult, Content, ToolError, tool};
use schemars::JsonSchema;
use serde::Serialize;

#[derive(Serialize, JsonSchema)]
struct Report {
    lines: usize,
}

#[derive(Debug)]
struct MyError;

impl std::fmt::Display for MyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("my error")
    }
}

/// Text.
#[tool]
async fn text() -> String { String::new() }

/// Static text.
#[tool]
async fn static_text() -> &'static str { "x" }

/// Content.
#[tool]
async fn content() -> Content { Content::text("x") }

/// Contents.
#[tool]
async fn contents() -> Vec<Content> { vec![] }

/// Unit.
#[tool]
async fn unit() {}

/// Explicit unit.
#[tool]
async fn explicit_unit() -> () {}

/// JSON.
#[tool]
async fn report() -> Report { Report { lines: 1 } }

/// Number.
#[tool]
async fn number() -> f64 { 1.0 }

/// Tool error.
#[tool]
async fn tool_error() -> Result<String, ToolError> { Ok(String::new()) }

/// Agent result.
#[tool]
async fn agent_result() -> AgentResult<Report> { Ok(Report { lines: 0 }) }

/// Display error.
#[tool]
async fn display_error() -> Result<(), MyError> { Err(MyError) }

/// String error.
#[tool]
async fn string_error() -> Result<u8, String> { Ok(1) }

/// io::Result.
#[tool]
async fn io_result() -> std::io::Result<String> { Ok(String::new()) }

/// Full path.
#[tool]
async fn full_path() -> ::core::result::Result<Vec<Content>, Box<dyn std::error::Error + Send + Sync>> {
    Ok(vec![])
}

fn main() {
    let _ = (text {}, static_text {}, content {}, contents {}, unit {}, explicit_unit {});
    let _ = (report {}, number {}, tool_error {}, agent_result {}, display_error {});
    let _ = (string_error {}, io_result {}, full_path {});
}

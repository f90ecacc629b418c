//! Bytes a model could send, as a tool name and JSON arguments, through `ToolSet::call`:
//! nothing may panic, and every error must be a tool error of a kind the model can act on.
#![no_main]

use async_trait::async_trait;
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use toolwright_core::{AgentResult, ToolContext, ToolErrorKind, ToolSet, tool::TypedTool};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Careful { retries: u8 },
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Args {
    name: String,
    count: u32,
    mode: Mode,
    points: Vec<Point>,
    #[serde(default)]
    tags: BTreeMap<String, i64>,
    nested: Option<Box<Args>>,
}

struct Rich;

#[async_trait]
impl TypedTool for Rich {
    type Args = Args;
    type Output = String;
    fn name(&self) -> &'static str {
        "rich"
    }
    fn description(&self) -> &'static str {
        "Takes one of every kind of parameter."
    }
    async fn call_typed(&self, args: Args, _: &ToolContext) -> AgentResult<String> {
        Ok(describe(&args))
    }
}

/// Every field read, so the decoded value is used the way a real tool would use it.
fn describe(args: &Args) -> String {
    let mode = match args.mode {
        Mode::Fast => "fast".to_owned(),
        Mode::Careful { retries } => format!("careful x{retries}"),
    };
    let points: f64 = args.points.iter().map(|p| p.x + p.y.unwrap_or(0.0)).sum();
    let tags: i64 = args.tags.values().fold(0, |sum, v| sum.wrapping_add(*v));
    let nested = args.nested.as_deref().map(describe).unwrap_or_default();
    format!(
        "{} {} {mode} {points} {tags} [{nested}]",
        args.name, args.count
    )
}

fn harness() -> &'static (tokio::runtime::Runtime, ToolSet) {
    static HARNESS: OnceLock<(tokio::runtime::Runtime, ToolSet)> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let set = ToolSet::new().with_tool(Rich).expect("valid tool");
        (runtime, set)
    })
}

fuzz_target!(|data: &[u8]| {
    // First line: the tool name; the rest: the arguments as JSON text.
    let (name, args) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"rich"[..], data),
    };
    let Ok(name) = std::str::from_utf8(name) else {
        return;
    };
    let Ok(args) = serde_json::from_slice::<serde_json::Value>(args) else {
        return;
    };
    let (runtime, set) = harness();
    if let Err(error) = runtime.block_on(set.call(name, &args, &ToolContext::default())) {
        let kind = error.tool_error_kind();
        assert!(
            matches!(
                kind,
                Some(ToolErrorKind::InvalidArguments | ToolErrorKind::UnknownTool)
            ),
            "unexpected error: {error:?}"
        );
        assert!(!error.to_string().is_empty());
    }
});

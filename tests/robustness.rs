//! Whatever a model sends, dispatch answers: arbitrary JSON (wrong types, missing and
//! extra fields, deep nesting, huge strings and numbers, `NaN`-like strings) reaches
//! representative tools through `ToolSet::call` and through the executor; nothing
//! panics, and every failure is a structured error that says what was wrong.

// The tools read their arguments through `Debug`, which dead-code analysis ignores.
#![allow(dead_code)]

use async_trait::async_trait;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Number, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use toolwright_core::{
    AgentError, AgentResult, Tool, ToolContext, ToolErrorKind, ToolSet,
    exec::{Executor, TurnContext},
    llm::ToolCall,
    schema::{ArgsSchema, decode_args},
    tool,
    tool::{TypedTool, into_content},
    toolset::ToolConfig,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Fast,
    Careful { retries: u8 },
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RichArgs {
    name: String,
    count: u32,
    ratio: Option<f32>,
    mode: Mode,
    points: Vec<Point>,
    #[serde(default)]
    tags: BTreeMap<String, i64>,
    origin: Option<Point>,
}

/// Validates everything it is given, then reports what it received.
struct Rich;

#[async_trait]
impl TypedTool for Rich {
    type Args = RichArgs;
    type Output = String;
    fn name(&self) -> &'static str {
        "rich"
    }
    fn description(&self) -> &'static str {
        "Takes one of every kind of parameter."
    }
    async fn call_typed(&self, args: RichArgs, _: &ToolContext) -> AgentResult<String> {
        Ok(format!("{args:?}"))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct DivideArgs {
    a: i64,
    b: i64,
}

/// Fails on its own terms for some valid inputs.
struct Divide;

#[async_trait]
impl TypedTool for Divide {
    type Args = DivideArgs;
    type Output = i64;
    fn name(&self) -> &'static str {
        "divide"
    }
    fn description(&self) -> &'static str {
        "Integer division."
    }
    async fn call_typed(&self, args: DivideArgs, _: &ToolContext) -> AgentResult<i64> {
        args.a.checked_div(args.b).ok_or_else(|| {
            toolwright_core::ToolError::execution("division by zero or overflow").into()
        })
    }
}

/// `Rich` as a `#[tool]`, with defaulted parameters (one where `null` and absent differ)
/// and a `Value`, which decodes from anything, however deep.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn rich_tool(
    name: String,
    count: u32,
    ratio: Option<f32>,
    mode: Mode,
    points: Vec<Point>,
    #[arg(default)] tags: BTreeMap<String, i64>,
    origin: Option<Point>,
    #[arg(default = 7)] level: u8,
    #[arg(default = Some(3))] limit: Option<u8>,
    meta: Option<Value>,
) -> String {
    format!(
        "{name} {count} {ratio:?} {mode:?} {points:?} {tags:?} {origin:?} {level} {limit:?} {meta:?}"
    )
}

/// `rich_tool`'s parameters as serde's derive decodes them: the reference `#[tool]`'s
/// own reader must match, property by property and error by error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RichToolArgs {
    name: String,
    count: u32,
    ratio: Option<f32>,
    mode: Mode,
    points: Vec<Point>,
    #[serde(default)]
    tags: BTreeMap<String, i64>,
    origin: Option<Point>,
    #[serde(default = "seven")]
    level: u8,
    #[serde(default = "some_three")]
    limit: Option<u8>,
    meta: Option<Value>,
}

fn seven() -> u8 {
    7
}

fn some_three() -> Option<u8> {
    Some(3)
}

/// `#[tool]` reads the arguments its own way: whatever the model sends, the call must
/// answer as `decode_args` into the derived `RichToolArgs`, then the fn, would (same
/// content, or the same error).
fn same_as_decode_args(args: &Value) -> Result<(), TestCaseError> {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime =
            tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    }
    let ctx = ToolContext::default();
    let tool = rich_tool {};
    let (actual, expected) = RUNTIME.with(|runtime| {
        runtime.block_on(async {
            let actual = Tool::call(&tool, args, &ctx).await;
            let schema =
                ArgsSchema::from_schema(Tool::schema(&tool)).decoder_denies_unknown_fields();
            let expected = match decode_args::<RichToolArgs>(&schema, args) {
                Ok(a) => {
                    let output = rich_tool(
                        a.name, a.count, a.ratio, a.mode, a.points, a.tags, a.origin, a.level,
                        a.limit, a.meta,
                    )
                    .await;
                    into_content(output).map_err(AgentError::from)
                }
                Err(error) => Err(error.into()),
            };
            (actual, expected)
        })
    });
    match (actual, expected) {
        (Ok(actual), Ok(expected)) => prop_assert_eq!(actual, expected),
        (Err(actual), Err(expected)) => prop_assert_eq!(actual.to_string(), expected.to_string()),
        (actual, expected) => prop_assert!(false, "{args}: {actual:?}, expected {expected:?}"),
    }
    Ok(())
}

const FIELDS: [&str; 9] = [
    "name", "count", "ratio", "mode", "points", "tags", "origin", "a", "b",
];

fn toolset() -> ToolSet {
    ToolSet::new()
        .with_tool(Rich)
        .unwrap()
        .with_tool(Divide)
        .unwrap()
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        Just(json!(1e308)),
        Just(json!(-0.0)),
        Just(json!(u64::MAX)),
    ]
}

fn string() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::from),
        prop::sample::select(vec![
            "NaN",
            "Infinity",
            "-Infinity",
            "1e999",
            "null",
            "",
            "\u{0}",
            "\u{feff}",
            "fast",
            "careful",
        ])
        .prop_map(Value::from),
        (0usize..100_000).prop_map(|n| Value::from("x".repeat(n))),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(FIELDS.to_vec()).prop_map(str::to_owned),
        prop::sample::select(vec![
            "Name",
            "COUNT",
            "x",
            "y",
            "retries",
            "careful",
            "__proto__"
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        string(),
    ];
    leaf.prop_recursive(24, 256, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..8)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A nearly valid argument object with one part broken, so decoding gets deep before
/// it fails, as a model's near-misses do.
fn near_miss() -> impl Strategy<Value = Value> {
    let valid = json!({
        "name": "n", "count": 1, "ratio": 0.5, "mode": {"careful": {"retries": 2}},
        "points": [{"x": 1.0, "y": 2.0}], "tags": {"a": 1}, "origin": null
    });
    (
        prop::sample::select(FIELDS[..7].to_vec()),
        json_value(),
        any::<bool>(),
    )
        .prop_map(move |(field, replacement, remove)| {
            let mut args = valid.clone();
            let map = args.as_object_mut().expect("object");
            if remove {
                map.remove(field);
            } else {
                map.insert(field.to_owned(), replacement);
            }
            args
        })
}

fn check(name: &str, args: &Value) -> Result<(), TestCaseError> {
    thread_local! {
        static HARNESS: (tokio::runtime::Runtime, Arc<ToolSet>, Executor) = {
            let set = Arc::new(toolset());
            let executor = Executor::new(set.clone(), ToolConfig::default());
            (
                tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"),
                set,
                executor,
            )
        };
    }
    let (direct, through_executor) = HARNESS.with(|(runtime, set, executor)| {
        runtime.block_on(async {
            let direct = set.call(name, args, &ToolContext::default()).await;
            let call = ToolCall::new("call", name, args.clone());
            let mut results = executor.execute(&[call], &TurnContext::new()).await;
            (direct, results.pop().expect("one result per call"))
        })
    });
    // The executor answers exactly as the bare dispatch does.
    match (&direct, through_executor.outcome.error()) {
        (Ok(content), None) => {
            prop_assert_eq!(Some(content.as_slice()), through_executor.outcome.content());
        }
        (Err(error), Some(via_executor)) => {
            prop_assert_eq!(error.as_tool_error(), Some(via_executor));
        }
        (direct, executor) => {
            prop_assert!(false, "dispatch {direct:?} but executor {executor:?}");
        }
    }
    let Err(error) = direct else {
        return Ok(());
    };
    let kind = error.tool_error_kind();
    prop_assert!(
        matches!(
            kind,
            Some(ToolErrorKind::InvalidArguments | ToolErrorKind::Execution)
        ),
        "unexpected error for {args}: {error:?}"
    );
    let message = error.to_string();
    if kind == Some(ToolErrorKind::InvalidArguments) {
        let names_what = FIELDS.iter().any(|f| message.contains(f))
            || message.contains("expected a JSON object")
            || message.contains("nested deeper")
            || message.contains("unknown field")
            || message.contains("invalid type")
            || message.contains("unknown variant");
        prop_assert!(
            message.starts_with("Invalid arguments: ") && names_what,
            "the message does not say what was wrong: {message}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6_000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_json_never_panics_and_errors_say_why(args in json_value()) {
        check("rich", &args)?;
        check("divide", &args)?;
    }

    #[test]
    fn near_misses_are_refused_with_the_field_named(args in near_miss()) {
        check("rich", &args)?;
    }

    #[test]
    fn a_tool_macro_decodes_as_decode_args_does(args in json_value()) {
        same_as_decode_args(&args)?;
    }

    #[test]
    fn a_tool_macro_decodes_near_misses_as_decode_args_does(
        args in near_miss(),
        extra in prop::sample::select(vec!["level", "limit", "meta"]),
        value in prop_oneof![Just(None), Just(Some(Value::Null)), json_value().prop_map(Some)],
        deep in any::<bool>(),
    ) {
        let mut args = args;
        if let (Some(map), Some(value)) = (args.as_object_mut(), value) {
            map.insert(extra.to_owned(), value);
        }
        if let (Some(map), true) = (args.as_object_mut(), deep) {
            let deep = (0..200).fold(json!(1), |inner, _| json!([inner]));
            map.insert("meta".to_owned(), deep);
        }
        same_as_decode_args(&args)?;
        // Strict-mode providers send every optional as `null`.
        if let Some(map) = args.as_object_mut() {
            for optional in ["ratio", "tags", "origin", "level", "limit", "meta"] {
                map.entry(optional).or_insert(Value::Null);
            }
        }
        same_as_decode_args(&args)?;
    }
}

#[test]
fn invalid_utf16_escapes_fail_at_parsing_never_at_dispatch() {
    // A lone surrogate cannot become a Rust string: serde_json refuses the text, so no
    // such value can reach a tool. Escaped pairs that are valid decode normally.
    for text in [r#"{"name": "\ud800"}"#, r#"{"name": "\udc00x"}"#] {
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
    }
    let ok: Value = serde_json::from_str(r#"{"a": 1, "b": "\ud83d\ude00"}"#).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let error = runtime
        .block_on(toolset().call("divide", &ok, &ToolContext::default()))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Invalid arguments: b: invalid type: string \"😀\", expected i64"
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Node {
    v: u32,
    child: Option<Box<Node>>,
}

/// Reads a tree.
#[tool]
async fn read_tree(
    /// The tree.
    node: Node,
) -> String {
    format!("{node:?}")
}

/// `levels` of `{"v": 1, "child": …}` around `leaf`.
fn nest(levels: usize, leaf: Value) -> Value {
    (0..levels).fold(leaf, |child, _| json!({"v": 1, "child": child}))
}

/// Calls `read_tree` with `args` on a thread of its own; its error, unless it takes a
/// minute.
fn read_tree_error_within_a_minute(args: Value) -> toolwright_core::AgentError {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let set = toolwright_core::tools![read_tree];
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _ = tx.send(runtime.block_on(set.call("read_tree", &args, &ToolContext::default())));
    });
    let answer = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the call was answered within a minute");
    answer.expect_err("the arguments are invalid")
}

#[test]
fn a_mistake_deep_in_a_recursive_type_is_located_in_linear_time() {
    // Locating it used to walk the subtree twice per level: 2^100 steps here.
    let node = nest(100, json!({"v": "bad"}));
    let error = read_tree_error_within_a_minute(json!({ "node": node }));
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::InvalidArguments)
    );
    let expected = format!("node.{}v: invalid type", "child.".repeat(100));
    assert!(error.to_string().contains(&expected), "{error}");
}

//! Whatever arguments an MCP client sends to `tools/call`, the server answers with a
//! result: the tool's output, or `isError: true` with a text block saying what was
//! wrong. Never a transport failure, never a panic; 10,000 generated cases a run.

#[path = "support/in_memory.rs"]
mod in_memory;

use in_memory::Session;
use proptest::prelude::*;
use rmcp::model::CallToolRequestParams;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Number, Value, json};
use std::sync::OnceLock;
use toolwright_core::{tool, tools};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // read through Debug
enum Mode {
    Fast,
    Careful { retries: u8 },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // read through Debug
struct Point {
    x: f64,
    y: f64,
}

/// Takes one of every kind of parameter and reports what it received.
#[tool]
async fn rich(
    name: String,
    count: u32,
    mode: Mode,
    points: Vec<Point>,
    origin: Option<Point>,
) -> String {
    format!("{name} {count} {mode:?} {points:?} {origin:?}")
}

/// Integer division that fails on its own terms.
#[tool]
async fn divide(a: i64, b: i64) -> Result<i64, String> {
    a.checked_div(b)
        .ok_or_else(|| "division by zero or overflow".to_owned())
}

fn session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(|| Session::serve(tools![rich, divide]))
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        any::<String>().prop_map(Value::from),
        prop::sample::select(vec!["NaN", "Infinity", "fast", "careful", "1e999", ""])
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(8, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "name", "count", "mode", "points", "origin", "a", "b", "x", "y", "retries",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((key(), json_value()), 0..8)
        .prop_map(|entries| entries.into_iter().collect())
}

fn check(tool: &'static str, arguments: Map<String, Value>) -> Result<(), TestCaseError> {
    let params = CallToolRequestParams::new(tool).with_arguments(arguments.clone());
    let result = session()
        .call(params)
        .map_err(|e| TestCaseError::fail(format!("transport error for {arguments:?}: {e}")))?;
    let content = serde_json::to_value(&result.content).expect("serializable");
    if result.is_error == Some(true) {
        let text = content[0]["text"].as_str().unwrap_or_default();
        prop_assert!(!text.is_empty(), "an error without a message: {content}");
    } else {
        prop_assert!(
            content.as_array().is_some_and(|c| !c.is_empty()),
            "{content}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

    #[test]
    fn any_arguments_to_rich_get_a_result(arguments in arguments()) {
        check("rich", arguments)?;
    }

    #[test]
    fn any_arguments_to_divide_get_a_result(arguments in arguments()) {
        check("divide", arguments)?;
    }
}

#[test]
fn a_well_formed_call_is_answered_on_the_shared_session() {
    let Value::Object(arguments) = json!({"a": 7, "b": 2}) else {
        unreachable!("a literal object")
    };
    let result = session()
        .call(CallToolRequestParams::new("divide").with_arguments(arguments))
        .expect("the call succeeds");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        "3"
    );
}

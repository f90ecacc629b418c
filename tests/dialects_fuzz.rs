//! Dialects on arbitrary schemas: rendering, checking and mapping arguments back never
//! panic, and whatever rendering returns obeys its dialect and the 2020-12 metaschema.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolwright_core::{
    dialect::{Dialect, check},
    tool::ToolAnnotations,
    toolset::ToolDefinition,
};

const NAMES: &[&str] = &["a", "b", "kind", "key", "value", "x/y", "~"];

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(NAMES.to_vec()).prop_map(str::to_owned)
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..300).prop_map(|n| json!(n)),
        Just(json!(0.5)),
        name().prop_map(Value::String),
    ]
}

/// Schemas built from the keywords the dialects treat differently.
fn schema() -> impl Strategy<Value = Value> {
    let types = prop::sample::select(vec![
        "string", "integer", "number", "boolean", "null", "object", "array",
    ]);
    let leaf = prop_oneof![
        types.clone().prop_map(|t| json!({ "type": t })),
        (types.clone(), types).prop_map(|(a, b)| json!({ "type": [a, b] })),
        scalar().prop_map(|v| json!({ "const": v })),
        prop::collection::vec(scalar(), 1..4).prop_map(|v| json!({ "enum": v })),
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        Just(json!({"$ref": "#/$defs/A"})),
        Just(json!({"$ref": "#/$defs/B", "description": "beside"})),
        Just(json!({"$ref": "#/$defs/Missing"})),
        Just(json!({"$ref": "https://example.com/x.json"})),
        prop::sample::select(vec!["email", "uri", "uint8", "date-time", "enum"])
            .prop_map(|f| json!({"type": "string", "format": f})),
        Just(json!({"type": "string", "minLength": 2, "maxLength": 9, "pattern": "^a"})),
        Just(json!({"type": "integer", "minimum": 1, "exclusiveMaximum": 9, "multipleOf": 2})),
        Just(json!({"type": "string", "default": "x", "examples": ["y"], "title": "T"})),
    ];
    leaf.prop_recursive(6, 64, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec((name(), inner.clone()), 0..4),
                prop::collection::vec(name(), 0..3),
                prop_oneof![
                    Just(None),
                    Just(Some(json!(false))),
                    Just(Some(json!(true))),
                    inner.clone().prop_map(Some),
                ],
            )
                .prop_map(|(props, required, additional)| {
                    let mut m = Map::new();
                    m.insert("type".into(), json!("object"));
                    m.insert(
                        "properties".into(),
                        Value::Object(props.into_iter().collect()),
                    );
                    m.insert("required".into(), json!(required));
                    if let Some(additional) = additional {
                        m.insert("additionalProperties".into(), additional);
                    }
                    Value::Object(m)
                }),
            inner
                .clone()
                .prop_map(|v| json!({"type": ["object", "null"], "additionalProperties": v})),
            // Maps whose keys match a pattern (schemars' form for integer keys), with
            // the rest closed or left open, and objects of several key patterns.
            (inner.clone(), prop::option::of(Just(json!(false)))).prop_map(|(v, additional)| {
                let mut m = Map::new();
                m.insert("type".into(), json!("object"));
                m.insert("patternProperties".into(), json!({"^\\d+$": v}));
                if let Some(additional) = additional {
                    m.insert("additionalProperties".into(), additional);
                }
                Value::Object(m)
            }),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({
                "type": "object",
                "additionalProperties": false,
                "patternProperties": {"^a": a, "^b": b},
            })),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| json!({ "anyOf": v })),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| json!({ "oneOf": v })),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| json!({ "allOf": v })),
            inner
                .clone()
                .prop_map(|v| json!({"type": "array", "items": v, "minItems": 2})),
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|v| json!({"type": "array", "prefixItems": v})),
            inner
                .clone()
                .prop_map(|v| json!({"type": "string", "not": v})),
            (inner.clone(), name())
                .prop_map(|(v, d)| json!({"anyOf": [v, {"type": "null"}], "description": d})),
        ]
    })
}

fn root() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec((name(), schema()), 0..5),
        prop::collection::vec(name(), 0..3),
        schema(),
        schema(),
    )
        .prop_map(|(props, required, a, b)| {
            json!({
                "type": "object",
                "properties": Value::Object(props.into_iter().collect()),
                "required": required,
                "$defs": {"A": a, "B": b},
            })
        })
}

fn args() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((name(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1_000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_schemas_render_cleanly_or_say_why(parameters in root(), answer in args()) {
        let definition = ToolDefinition {
            name: "fuzz".into(),
            title: None,
            description: "Fuzzed.".into(),
            parameters,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            ..Default::default()
        };
        for dialect in Dialect::ALL {
            let _ = check(dialect, &definition.parameters);
            let _ = dialect.normalize_arguments(&definition, answer.clone());
            match dialect.render_parameters(&definition) {
                Ok(rendered) => {
                    let violations = check(dialect, &rendered);
                    prop_assert!(violations.is_empty(), "{dialect}: {violations:?}\n{rendered:#}");
                    if matches!(dialect, Dialect::OpenAiStrict | Dialect::AnthropicStrict | Dialect::Gemini) {
                        prop_assert!(
                            jsonschema::draft202012::meta::validate(&rendered).is_ok(),
                            "{dialect}: not a 2020-12 schema\n{rendered:#}"
                        );
                    }
                }
                Err(error) => {
                    prop_assert_eq!(&error.tool, "fuzz");
                    prop_assert!(!error.reason.is_empty());
                }
            }
        }
    }
}

//! Provider schema dialects: tricky parameter types rendered in every dialect (golden
//! files under `fixtures/dialects/`, regenerated with `UPDATE_GOLDEN=1`), every
//! rendering checked by its dialect's rules and by the draft 2020-12 metaschema, the
//! checkers shown to reject each rule's violation, and strict-mode answers mapped back
//! to the same typed arguments as plain answers.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use toolwright_core::{
    AgentResult, ToolContext, ToolSet, async_trait,
    dialect::{Dialect, assert_dialects, assert_dialects_for, check, dialect_report},
    schema::{ArgsSchema, decode_args},
    tool::{ToolAnnotations, TypedTool},
    toolset::ToolDefinition,
};

// ---------------------------------------------------------------------------------
// Fixtures: the parameter types every provider trips over.
// ---------------------------------------------------------------------------------

/// A postal address.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Address {
    /// Street and number
    street: String,
    city: String,
    /// Postal code
    #[schemars(length(min = 3, max = 10))]
    zip: Option<String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Customer {
    name: String,
    /// Where to deliver
    address: Address,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NestedStructs {
    customer: Customer,
    note: Option<String>,
}

/// Temperature unit
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Square(f64),
    Point,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Enums {
    unit: Unit,
    shape: Shape,
    fallback: Option<Unit>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Command {
    Move {
        x: i32,
        y: i32,
    },
    Say {
        text: String,
        #[serde(default)]
        loud: bool,
    },
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
enum Event {
    Click(u32),
    Key { code: String },
    Idle,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaggedEnums {
    command: Command,
    event: Event,
}

fn three() -> u8 {
    3
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Window {
    width: u32,
    #[serde(default)]
    height: Option<u32>,
    #[serde(default)]
    fullscreen: bool,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OptionalNested {
    /// Billing address, if different
    billing: Option<Address>,
    window: Option<Window>,
    #[serde(default)]
    retries: u8,
    #[serde(default = "three")]
    days: u8,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LineItem {
    sku: String,
    quantity: u32,
    discount: Option<f32>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VecOfStructs {
    /// What to order
    items: Vec<LineItem>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Counter {
    hits: u64,
    last: Option<String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Maps {
    /// Labels to attach
    labels: HashMap<String, String>,
    counters: BTreeMap<String, Counter>,
    limits: Option<BTreeMap<String, u32>>,
}

// Maps with integer keys: schemars writes them as one `patternProperties` entry beside
// `additionalProperties: false`, not with `additionalProperties`.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct IntegerKeys {
    /// Names by id
    names: HashMap<u32, String>,
    offsets: Option<BTreeMap<i64, Slot>>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Slot {
    hits: u64,
    #[serde(default)]
    pinned: bool,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Tuples {
    point: (f64, f64),
    pair: (String, u8),
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BigIntegers {
    id: u64,
    offset: i64,
    small: u8,
    signed: i32,
}

/// A tree of numbers.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Tree {
    value: i64,
    children: Vec<Tree>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Recursive {
    tree: Tree,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Constrained {
    /// Display name
    #[schemars(length(min = 3, max = 20))]
    name: String,
    #[schemars(regex(pattern = r"^[A-Z]{3}-[0-9]{4}$"))]
    code: String,
    #[schemars(range(min = 1, max = 10))]
    level: u8,
    #[schemars(range(min = 0.0, max = 1.0))]
    ratio: f64,
    #[schemars(email)]
    contact: String,
    #[schemars(url)]
    homepage: Option<String>,
    #[schemars(length(min = 2, max = 5))]
    tags: Vec<String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AnyValue {
    payload: Value,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoParameters {}

fn definition_of<T: JsonSchema>(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        title: None,
        description: format!("The {name} fixture."),
        parameters: ArgsSchema::of::<T>().schema().clone(),
        output_schema: None,
        annotations: ToolAnnotations::default(),
        ..Default::default()
    }
}

fn fixtures() -> Vec<ToolDefinition> {
    vec![
        definition_of::<NestedStructs>("nested_structs"),
        definition_of::<Enums>("enums"),
        definition_of::<TaggedEnums>("tagged_enums"),
        definition_of::<OptionalNested>("optional_nested"),
        definition_of::<VecOfStructs>("vec_of_structs"),
        definition_of::<Maps>("maps"),
        definition_of::<IntegerKeys>("integer_keys"),
        definition_of::<Tuples>("tuples"),
        definition_of::<BigIntegers>("big_integers"),
        definition_of::<Recursive>("recursive"),
        definition_of::<Constrained>("constrained"),
        definition_of::<AnyValue>("any_value"),
        definition_of::<NoParameters>("no_parameters"),
    ]
}

fn fixture(name: &str) -> ToolDefinition {
    fixtures()
        .into_iter()
        .find(|d| d.name == name)
        .expect("a fixture by that name")
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/dialects")
        .join(format!("{name}.json"))
}

/// Every dialect's rendering of one fixture, errors included, as one JSON document.
fn render_all(definition: &ToolDefinition) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("schema".into(), definition.parameters.clone());
    for dialect in Dialect::ALL {
        let rendered = match dialect.render(definition) {
            Ok(tool) => tool,
            Err(error) => json!({ "error": error.to_string() }),
        };
        out.insert(dialect.as_str().into(), rendered);
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------------------
// Golden files, rule checkers and the metaschema on every fixture.
// ---------------------------------------------------------------------------------

#[test]
fn every_fixture_matches_its_golden_file_in_every_dialect() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut stale = Vec::new();
    for definition in fixtures() {
        let rendered = render_all(&definition);
        let path = golden_path(&definition.name);
        let text = serde_json::to_string_pretty(&rendered).unwrap() + "\n";
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(golden) if golden == text => {}
            Ok(_) => stale.push(format!("{} differs", path.display())),
            Err(_) => stale.push(format!("{} is missing", path.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "golden files out of date (rerun with UPDATE_GOLDEN=1 and review the diff):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_rendering_obeys_its_dialect_and_the_2020_12_metaschema() {
    for definition in fixtures() {
        for dialect in Dialect::ALL {
            let Ok(parameters) = dialect.render_parameters(&definition) else {
                continue;
            };
            let violations = check(dialect, &parameters);
            assert!(
                violations.is_empty(),
                "{} in {dialect}: {violations:?}",
                definition.name
            );
            if let Err(error) = jsonschema::draft202012::meta::validate(&parameters) {
                panic!(
                    "{} in {dialect} is not a valid 2020-12 schema: {error}\n{parameters:#}",
                    definition.name
                );
            }
        }
    }
}

#[test]
fn the_original_schemas_render_unchanged_where_the_dialect_takes_json_schema() {
    for definition in fixtures() {
        for dialect in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Mcp] {
            assert_eq!(
                dialect.render_parameters(&definition).unwrap(),
                definition.parameters,
                "{} in {dialect}",
                definition.name
            );
        }
    }
}

#[test]
fn only_schemas_a_dialect_cannot_express_fail_and_the_error_names_tool_and_reason() {
    let mut failures = Vec::new();
    for definition in fixtures() {
        for dialect in Dialect::ALL {
            if let Err(error) = dialect.render(&definition) {
                assert_eq!(error.tool, definition.name);
                assert_eq!(error.dialect, dialect);
                assert!(
                    error
                        .to_string()
                        .contains(&format!("tool `{}`", definition.name))
                );
                failures.push(format!("{} {dialect}", definition.name));
            }
        }
    }
    assert_eq!(
        failures,
        [
            "recursive anthropic-strict",
            "recursive gemini",
            "any_value openai-strict",
            "any_value anthropic-strict",
            "any_value gemini",
        ]
    );
    let error = Dialect::Gemini.render(&fixture("recursive")).unwrap_err();
    assert!(
        error.reason.contains("`Tree` is a recursive type"),
        "{error}"
    );
    let error = Dialect::OpenAiStrict
        .render(&fixture("any_value"))
        .unwrap_err();
    assert!(
        error.reason.contains("/properties/payload") && error.reason.contains("any shape"),
        "{error}"
    );
}

// ---------------------------------------------------------------------------------
// What each dialect does, stated as behaviour.
// ---------------------------------------------------------------------------------

#[test]
fn openai_strict_requires_every_property_and_makes_optionals_nullable_at_every_level() {
    let tool = Dialect::OpenAiStrict
        .render(&fixture("optional_nested"))
        .unwrap();
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["strict"], true);
    let parameters = &tool["function"]["parameters"];
    assert_eq!(
        parameters["required"],
        json!(["billing", "window", "retries", "days"])
    );
    assert_eq!(parameters["additionalProperties"], false);
    assert_eq!(
        parameters["properties"]["retries"]["type"],
        json!(["integer", "null"])
    );
    // `$ref` with a description beside it is expanded (strict mode refuses siblings).
    let billing = &parameters["properties"]["billing"];
    assert!(
        billing["anyOf"]
            .as_array()
            .unwrap()
            .contains(&json!({"type": "null"}))
    );
    let window = &parameters["$defs"]["Window"];
    assert_eq!(window["required"], json!(["width", "height", "fullscreen"]));
    assert_eq!(window["additionalProperties"], false);
    assert_eq!(
        window["properties"]["height"]["type"],
        json!(["integer", "null"])
    );
}

#[test]
fn openai_strict_keeps_recursive_types_as_references() {
    let parameters = Dialect::OpenAiStrict
        .render_parameters(&fixture("recursive"))
        .unwrap();
    assert_eq!(parameters["properties"]["tree"]["$ref"], "#/$defs/Tree");
    assert_eq!(
        parameters["$defs"]["Tree"]["properties"]["children"]["items"]["$ref"],
        "#/$defs/Tree"
    );
}

#[test]
fn unsupported_constraints_are_folded_into_descriptions() {
    let parameters = Dialect::OpenAiStrict
        .render_parameters(&fixture("constrained"))
        .unwrap();
    let name = &parameters["properties"]["name"];
    assert_eq!(name.get("minLength"), None);
    assert_eq!(
        name["description"],
        "Display name (at least 3 characters; at most 20 characters)"
    );
    // Supported in strict mode: kept as keywords.
    assert_eq!(
        parameters["properties"]["code"]["pattern"],
        "^[A-Z]{3}-[0-9]{4}$"
    );
    assert_eq!(parameters["properties"]["level"]["maximum"], 10);
    assert_eq!(parameters["properties"]["contact"]["format"], "email");
    // `uri` is not among strict mode's formats.
    let homepage = &parameters["properties"]["homepage"];
    assert_eq!(homepage.get("format"), None);
    assert_eq!(homepage["description"], "Format: uri");

    let anthropic = Dialect::AnthropicStrict
        .render_parameters(&fixture("constrained"))
        .unwrap();
    let level = &anthropic["properties"]["level"];
    assert_eq!(level.get("maximum"), None);
    assert_eq!(level["description"], "At least 1; at most 10");
    assert_eq!(anthropic["properties"]["tags"].get("minItems"), None);
}

#[test]
fn gemini_inlines_references_and_uses_nullable_instead_of_null_types() {
    let declaration = Dialect::Gemini.render(&fixture("optional_nested")).unwrap();
    assert_eq!(declaration["name"], "optional_nested");
    let parameters = &declaration["parameters"];
    assert_eq!(parameters.get("$defs"), None);
    assert_eq!(parameters.get("additionalProperties"), None);
    let billing = &parameters["properties"]["billing"];
    assert_eq!(billing["type"], "object");
    assert_eq!(billing["nullable"], true);
    assert_eq!(billing["description"], "Billing address, if different");
    assert_eq!(billing["properties"]["zip"]["type"], "string");
    assert_eq!(billing["properties"]["zip"]["nullable"], true);
    assert_eq!(billing["properties"]["zip"]["minLength"], 3);
}

#[test]
fn gemini_turns_const_tags_into_single_value_enums() {
    let parameters = Dialect::Gemini
        .render_parameters(&fixture("tagged_enums"))
        .unwrap();
    let variants = parameters["properties"]["command"]["anyOf"]
        .as_array()
        .unwrap();
    assert_eq!(variants[0]["properties"]["kind"]["enum"], json!(["move"]));
    assert_eq!(variants[0]["properties"]["kind"].get("const"), None);
}

#[test]
fn a_tool_without_parameters_declares_none_for_gemini() {
    let declaration = Dialect::Gemini.render(&fixture("no_parameters")).unwrap();
    assert_eq!(
        declaration,
        json!({"name": "no_parameters", "description": "The no_parameters fixture."})
    );
}

#[test]
fn maps_become_lists_of_entries_where_objects_must_be_closed() {
    let parameters = Dialect::OpenAiStrict
        .render_parameters(&fixture("maps"))
        .unwrap();
    let labels = &parameters["properties"]["labels"];
    assert_eq!(labels["type"], "array");
    assert_eq!(labels["items"]["required"], json!(["key", "value"]));
    assert!(
        labels["description"]
            .as_str()
            .unwrap()
            .starts_with("Labels to attach")
    );
    let limits = &parameters["properties"]["limits"];
    assert_eq!(limits["type"], json!(["array", "null"]));
    // Plain JSON Schema dialects keep the map as it is.
    let mcp = Dialect::Mcp.render_parameters(&fixture("maps")).unwrap();
    assert_eq!(mcp["properties"]["labels"]["type"], "object");
}

#[test]
fn tuples_become_arrays_with_their_order_described() {
    let parameters = Dialect::OpenAiStrict
        .render_parameters(&fixture("tuples"))
        .unwrap();
    let pair = &parameters["properties"]["pair"];
    assert_eq!(pair.get("prefixItems"), None);
    assert_eq!(pair["minItems"], 2);
    assert_eq!(pair["maxItems"], 2);
    assert_eq!(pair["items"]["anyOf"].as_array().unwrap().len(), 2);
    assert!(
        pair["description"]
            .as_str()
            .unwrap()
            .contains("in this order: string, integer")
    );
}

#[test]
fn each_dialect_wraps_the_schema_the_way_its_api_expects() {
    let mut definition = fixture("enums");
    definition.title = Some("Enums".into());
    definition.output_schema = Some(json!({"type": "object", "properties": {}}));
    definition.annotations = ToolAnnotations {
        title: Some("Enums".into()),
        read_only: Some(true),
        destructive: None,
        idempotent: Some(true),
        open_world: Some(false),
    };
    let openai = Dialect::OpenAi.render(&definition).unwrap();
    assert_eq!(openai["function"]["name"], "enums");
    assert_eq!(openai["function"].get("strict"), None);
    let anthropic = Dialect::Anthropic.render(&definition).unwrap();
    assert_eq!(anthropic["input_schema"], definition.parameters);
    assert_eq!(anthropic.get("strict"), None);
    assert_eq!(
        Dialect::AnthropicStrict.render(&definition).unwrap()["strict"],
        true
    );
    let mcp = Dialect::Mcp.render(&definition).unwrap();
    assert_eq!(mcp["title"], "Enums");
    assert_eq!(mcp["inputSchema"], definition.parameters);
    assert_eq!(
        mcp["outputSchema"],
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(
        mcp["annotations"],
        json!({"title": "Enums", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false})
    );
}

#[test]
fn a_name_the_providers_refuse_is_an_error_not_a_request() {
    let mut definition = fixture("enums");
    definition.name = "tools.enums".into();
    let error = Dialect::OpenAi.render(&definition).unwrap_err();
    assert!(error.to_string().contains("tool `tools.enums`"), "{error}");
    assert!(Dialect::Mcp.render(&definition).is_ok());
}

#[test]
fn render_all_keeps_order_and_stops_at_the_first_failure() {
    let good = [fixture("enums"), fixture("maps")];
    let tools = Dialect::Anthropic.render_all(&good).unwrap();
    let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
    assert_eq!(names, ["enums", "maps"]);
    let mixed = [fixture("enums"), fixture("any_value")];
    let error = Dialect::Gemini.render_all(&mixed).unwrap_err();
    assert_eq!(error.tool, "any_value");
}

#[test]
fn dialects_parse_from_their_names() {
    for dialect in Dialect::ALL {
        assert_eq!(dialect.as_str().parse::<Dialect>(), Ok(dialect));
    }
    for dialect in Dialect::ALL {
        let name = serde_json::to_value(dialect).unwrap();
        assert_eq!(name, dialect.as_str());
        assert_eq!(serde_json::from_value::<Dialect>(name).unwrap(), dialect);
    }
    let error = "openai-lenient".parse::<Dialect>().unwrap_err();
    assert!(error.to_string().contains("openai-strict, openai"));
}

// ---------------------------------------------------------------------------------
// The checkers reject each rule's violation.
// ---------------------------------------------------------------------------------

fn rejects(dialect: Dialect, schema: Value, expected: &str) {
    let violations = check(dialect, &schema);
    assert!(
        violations.iter().any(|v| v.to_string().contains(expected)),
        "{dialect} should report \"{expected}\" for {schema}, got {violations:?}"
    );
}

fn strict_object(properties: Value) -> Value {
    let required: Vec<&String> = properties.as_object().unwrap().keys().collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

#[test]
fn the_openai_strict_checker_rejects_every_broken_rule() {
    let d = Dialect::OpenAiStrict;
    assert_eq!(
        check(d, &strict_object(json!({"a": {"type": "string"}}))),
        []
    );
    rejects(
        d,
        json!({"type": "string"}),
        "root must be {\"type\": \"object\"}",
    );
    rejects(
        d,
        json!({"type": "object", "anyOf": [], "properties": {}, "required": [], "additionalProperties": false}),
        "`anyOf` at the root",
    );
    rejects(
        d,
        json!({"type": "object", "properties": {}, "required": []}),
        "`additionalProperties: false`",
    );
    rejects(
        d,
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": [], "additionalProperties": false}),
        "missing: a",
    );
    rejects(
        d,
        strict_object(json!({"a": {"type": "string", "minLength": 1}})),
        "does not support `minLength`",
    );
    for keyword in ["allOf", "not", "if", "oneOf", "prefixItems", "default"] {
        let mut schema = strict_object(json!({"a": {"type": "string"}}));
        schema["properties"]["a"][keyword] = json!([]);
        rejects(d, schema, &format!("does not support `{keyword}`"));
    }
    rejects(
        d,
        strict_object(json!({"a": {"type": "string", "format": "uri"}})),
        "format \"uri\"",
    );
    rejects(d, strict_object(json!({"a": {}})), "say its type");
    rejects(
        d,
        strict_object(json!({"a": {"type": "array"}})),
        "`items` on every array",
    );
    rejects(
        d,
        strict_object(json!({"a": {"$ref": "#/$defs/A", "description": "x"}})),
        "beside `$ref`",
    );
    rejects(
        d,
        strict_object(json!({"a": {"$ref": "#/$defs/Missing"}})),
        "`$defs` does not define",
    );
    // Eleven objects deep.
    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = strict_object(json!({ "inner": deep }));
    }
    rejects(d, deep, "allows 10");
    let many: serde_json::Map<String, Value> = (0..5_001)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    rejects(d, strict_object(Value::Object(many)), "5001 properties");
    let values: Vec<String> = (0..1_001).map(|i| format!("v{i}")).collect();
    rejects(
        d,
        strict_object(json!({"a": {"type": "string", "enum": values}})),
        "1001 enum values",
    );
    let long: Vec<String> = (0..300).map(|i| format!("{i:0>60}")).collect();
    rejects(
        d,
        strict_object(json!({"a": {"type": "string", "enum": long}})),
        "more than 250 strings",
    );
    let name = "n".repeat(120_001);
    rejects(
        d,
        strict_object(json!({ name: {"type": "string"} })),
        "120001 characters",
    );
}

#[test]
fn the_anthropic_strict_checker_rejects_every_broken_rule() {
    let d = Dialect::AnthropicStrict;
    let ok = json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": false,
    });
    assert_eq!(check(d, &ok), []);
    rejects(
        d,
        json!({"type": "object", "properties": {}}),
        "`additionalProperties: false`",
    );
    for (keyword, value) in [
        ("minimum", json!(1)),
        ("maximum", json!(1)),
        ("multipleOf", json!(2)),
        ("minLength", json!(1)),
        ("maxLength", json!(1)),
        ("maxItems", json!(1)),
        ("oneOf", json!([])),
    ] {
        let mut schema = ok.clone();
        schema["properties"]["a"][keyword] = value;
        rejects(d, schema, &format!("does not support `{keyword}`"));
    }
    let mut schema = ok.clone();
    schema["properties"]["a"]["format"] = json!("ipv4-cidr");
    rejects(d, schema, "format \"ipv4-cidr\"");
    let mut schema = ok.clone();
    schema["properties"]["a"] =
        json!({"type": "array", "items": {"type": "string"}, "minItems": 2});
    rejects(d, schema, "`minItems` of 0 or 1");
    rejects(
        d,
        json!({
            "type": "object",
            "properties": {"t": {"$ref": "#/$defs/T"}},
            "additionalProperties": false,
            "$defs": {"T": {
                "type": "object",
                "properties": {"c": {"type": "array", "items": {"$ref": "#/$defs/T"}}},
                "additionalProperties": false,
            }},
        }),
        "`T` is recursive",
    );
    let optional: serde_json::Map<String, Value> = (0..25)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    rejects(
        d,
        json!({"type": "object", "properties": optional, "additionalProperties": false}),
        "25 optional parameters",
    );
    let unions: serde_json::Map<String, Value> = (0..17)
        .map(|i| (format!("p{i}"), json!({"type": ["string", "null"]})))
        .collect();
    let required: Vec<&String> = unions.keys().collect();
    rejects(
        d,
        json!({"type": "object", "properties": unions, "required": required, "additionalProperties": false}),
        "17 parameters with `anyOf` or type arrays",
    );
}

#[test]
fn the_gemini_checker_rejects_every_broken_rule() {
    let d = Dialect::Gemini;
    let ok = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert_eq!(check(d, &ok), []);
    for (keyword, value) in [
        ("$ref", json!("#/$defs/A")),
        ("additionalProperties", json!(false)),
        ("const", json!("x")),
        ("exclusiveMinimum", json!(0)),
        ("exclusiveMaximum", json!(0)),
        ("multipleOf", json!(2)),
        ("oneOf", json!([])),
    ] {
        let mut schema = ok.clone();
        schema["properties"]["a"][keyword] = value;
        rejects(d, schema, &format!("does not support `{keyword}`"));
    }
    for keyword in ["$schema", "$defs"] {
        let mut schema = ok.clone();
        schema[keyword] = json!({});
        rejects(d, schema, &format!("does not support `{keyword}`"));
    }
    let mut schema = ok.clone();
    schema["properties"]["a"]["type"] = json!(["string", "null"]);
    rejects(d, schema, "type arrays");
    let mut schema = ok.clone();
    schema["properties"]["a"] = json!({"type": "integer", "enum": [1, 2]});
    rejects(d, schema, "strings only");
    let mut schema = ok.clone();
    schema["properties"]["a"] = json!({"type": "object", "properties": {}});
    rejects(d, schema, "object without properties");
    let mut schema = ok.clone();
    schema["properties"]["a"] = json!({"type": "null"});
    rejects(d, schema, "no type \"null\"");
    let mut schema = ok.clone();
    schema["properties"]["a"] = json!({"type": "string", "format": "email"});
    rejects(d, schema, "format \"email\"");
    let mut schema = ok;
    schema["properties"]["a"] = json!({"description": "anything"});
    rejects(d, schema, "say its type");
}

#[test]
fn every_checker_rejects_what_the_metaschema_refuses() {
    for d in Dialect::ALL {
        rejects(
            d,
            json!({"type": "object", "properties": {"a": {"anyOf": []}}}),
            "`anyOf` must be a non-empty array",
        );
        rejects(
            d,
            json!({"type": "object", "properties": {"a": {"type": ["string", "string"]}}}),
            "not a JSON Schema type",
        );
        rejects(
            d,
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]}),
            "lists `a` twice",
        );
    }
    for d in [
        Dialect::OpenAiStrict,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
    ] {
        rejects(
            d,
            json!({"type": "object", "properties": {}, "required": ["ghost"]}),
            "`ghost`, which is not a property",
        );
    }
}

#[test]
fn the_json_schema_checkers_reject_a_non_object_root_and_dangling_references() {
    for d in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Mcp] {
        rejects(d, json!({"type": "array"}), "root must be");
        rejects(
            d,
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}}),
            "`$defs` does not define",
        );
        rejects(
            d,
            json!({"type": "object", "properties": {"a": {"type": "text"}}}),
            "not a JSON Schema type",
        );
    }
}

#[test]
fn checking_and_rendering_survive_hostile_schemas() {
    let mut deep = json!({"type": "string"});
    // Deeper than any walk goes, yet shallow enough for the test's own drop.
    for _ in 0..300 {
        deep = json!({"type": "object", "properties": {"a": deep}});
    }
    let definition = ToolDefinition {
        name: "deep".into(),
        title: None,
        description: "Deep.".into(),
        parameters: deep,
        output_schema: None,
        annotations: ToolAnnotations::default(),
        ..Default::default()
    };
    for dialect in Dialect::ALL {
        assert!(!check(dialect, &definition.parameters).is_empty());
        assert!(dialect.render(&definition).is_err());
        let _ = dialect.render(&definition);
        let _ = dialect.normalize_arguments(&definition, json!({"a": {"a": null}}));
    }
    // References that expand exponentially when inlined.
    let mut defs = serde_json::Map::new();
    defs.insert("D0".into(), json!({"type": "string"}));
    for i in 1..40 {
        let prev = format!("#/$defs/D{}", i - 1);
        defs.insert(
            format!("D{i}"),
            json!({"type": "object", "properties": {"l": {"$ref": prev}, "r": {"$ref": prev}}}),
        );
    }
    let wide = ToolDefinition {
        parameters: json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/D39"}}, "$defs": defs}),
        ..definition
    };
    let error = Dialect::Gemini.render(&wide).unwrap_err();
    assert!(error.reason.contains("nodes"), "{error}");
}

// ---------------------------------------------------------------------------------
// Mapping the model's arguments back.
// ---------------------------------------------------------------------------------

/// Decodes `answer` as the model sent it for `dialect`: it must validate against the
/// rendered schema, and after mapping back it must decode.
fn decode_answer<T: DeserializeOwned + JsonSchema + 'static>(
    name: &str,
    dialect: Dialect,
    answer: Value,
) -> T {
    decode_answer_for(&fixture(name), dialect, answer)
}

/// [`decode_answer`] for a definition that is not one of the fixtures.
fn decode_answer_for<T: DeserializeOwned + JsonSchema + 'static>(
    definition: &ToolDefinition,
    dialect: Dialect,
    answer: Value,
) -> T {
    let name = &definition.name;
    let rendered = dialect.render_parameters(definition).unwrap();
    // A 2020-12 validator does not read Gemini's OpenAPI `nullable`, so Gemini
    // answers are only checked by decoding.
    if dialect != Dialect::Gemini {
        let validator = jsonschema::draft202012::new(&rendered).unwrap();
        if let Err(error) = validator.validate(&answer) {
            panic!("{answer} does not fit the {dialect} schema of {name}: {error}");
        }
    }
    let args = dialect.normalize_arguments(definition, answer);
    decode_args::<T>(&ArgsSchema::of::<T>(), &args)
        .unwrap_or_else(|e| panic!("{name} in {dialect}: {e:?} for {args}"))
}

fn decode_plain<T: DeserializeOwned + JsonSchema + 'static>(answer: Value) -> T {
    decode_args::<T>(&ArgsSchema::of::<T>(), &answer).unwrap()
}

#[test]
fn a_strict_answer_with_nulls_decodes_like_the_plain_answer() {
    let plain = json!({"window": {"width": 640}});
    let strict = json!({
        "billing": null,
        "window": {"width": 640, "height": null, "fullscreen": null},
        "retries": null,
        "days": null,
    });
    let expected: OptionalNested = decode_plain(plain);
    assert_eq!(expected.days, 3);
    for dialect in [Dialect::OpenAiStrict, Dialect::Gemini] {
        let decoded: OptionalNested = decode_answer("optional_nested", dialect, strict.clone());
        assert_eq!(decoded, expected, "{dialect}");
    }
    // Without mapping back, the nested null breaks `#[serde(default)]` fields.
    let raw = decode_args::<OptionalNested>(&ArgsSchema::of::<OptionalNested>(), &strict);
    let error = raw.unwrap_err().to_string();
    assert!(error.contains("window.fullscreen"), "{error}");
}

#[test]
fn nested_optionals_inside_lists_and_enum_variants_map_back() {
    let plain = json!({"items": [{"sku": "A-1", "quantity": 2}]});
    let strict = json!({"items": [{"sku": "A-1", "quantity": 2, "discount": null}]});
    let expected: VecOfStructs = decode_plain(plain);
    assert_eq!(
        decode_answer::<VecOfStructs>("vec_of_structs", Dialect::OpenAiStrict, strict),
        expected
    );

    let plain = json!({"command": {"kind": "say", "text": "hi"}, "event": {"type": "idle"}});
    let strict = json!({
        "command": {"kind": "say", "text": "hi", "loud": null},
        "event": {"type": "idle"},
    });
    let expected: TaggedEnums = decode_plain(plain);
    assert_eq!(
        decode_answer::<TaggedEnums>("tagged_enums", Dialect::OpenAiStrict, strict),
        expected
    );
}

#[test]
fn maps_sent_as_entries_decode_like_maps() {
    let plain = json!({
        "labels": {"team": "core"},
        "counters": {"home": {"hits": 3}},
    });
    let entries = json!({
        "labels": [{"key": "team", "value": "core"}],
        "counters": [{"key": "home", "value": {"hits": 3, "last": null}}],
        "limits": null,
    });
    let expected: Maps = decode_plain(plain);
    for dialect in [
        Dialect::OpenAiStrict,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
    ] {
        let decoded: Maps = decode_answer("maps", dialect, entries.clone());
        assert_eq!(decoded, expected, "{dialect}");
    }
    let with_limits = json!({
        "labels": [],
        "counters": [],
        "limits": [{"key": "cpu", "value": 4}],
    });
    let decoded: Maps = decode_answer("maps", Dialect::OpenAiStrict, with_limits);
    assert_eq!(
        decoded.limits,
        Some(BTreeMap::from([("cpu".to_owned(), 4)]))
    );
}

#[test]
fn integer_keyed_maps_round_trip_in_every_dialect() {
    let definition = fixture("integer_keys");
    let expected: IntegerKeys = decode_plain(json!({
        "names": {"7": "seven"},
        "offsets": {"-2": {"hits": 3}},
    }));
    assert_eq!(expected.names[&7], "seven");
    for dialect in Dialect::ALL {
        let rendered = dialect
            .render_parameters(&definition)
            .unwrap_or_else(|e| panic!("{e}"));
        // Strict mode sends `null` for the defaulted field inside the map's value,
        // which decoding refuses unless it is mapped back.
        let slot = if dialect == Dialect::OpenAiStrict {
            json!({"hits": 3, "pinned": null})
        } else {
            json!({"hits": 3})
        };
        let answer = if dialect.maps_as_entries() {
            json!({
                "names": [{"key": "7", "value": "seven"}],
                "offsets": [{"key": "-2", "value": slot}],
            })
        } else {
            json!({"names": {"7": "seven"}, "offsets": {"-2": slot}})
        };
        let validator = jsonschema::draft202012::new(&rendered).unwrap();
        if let Err(error) = validator.validate(&answer) {
            panic!("{answer} does not fit the {dialect} schema: {error}\n{rendered:#}");
        }
        let mut bad_key = answer.clone();
        let args = dialect.normalize_arguments(&definition, answer);
        let decoded = decode_args::<IntegerKeys>(&ArgsSchema::of::<IntegerKeys>(), &args)
            .unwrap_or_else(|e| panic!("{dialect}: {e} for {args}"));
        assert_eq!(decoded, expected, "{dialect}");
        if dialect.maps_as_entries() {
            // The key's pattern is kept, so the model cannot send a key the tool
            // cannot decode.
            let key = &rendered["properties"]["names"]["items"]["properties"]["key"];
            assert_eq!(key["pattern"], r"^\d+$", "{dialect}");
            bad_key["names"][0]["key"] = json!("seven");
            assert!(!validator.is_valid(&bad_key), "{dialect}");
        }
    }
    // Strict mode sends `null` for the absent optional map.
    let answer = json!({"names": [], "offsets": null});
    let decoded: IntegerKeys = decode_answer("integer_keys", Dialect::OpenAiStrict, answer);
    assert_eq!(decoded, decode_plain(json!({"names": {}})));
}

#[test]
fn objects_keyed_by_patterns_the_dialect_cannot_express_are_an_error() {
    // Several key patterns: entries would lose which values go with which keys.
    let several = hand_written(json!({
        "type": "object",
        "properties": {"ids": {
            "type": "object",
            "additionalProperties": false,
            "patternProperties": {"^a": {"type": "string"}, "^b": {"type": "integer"}},
        }},
    }));
    // One pattern, but values of any shape (`HashMap<u32, serde_json::Value>`).
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct AnyValues {
        values: HashMap<u32, Value>,
    }
    let any_values = definition_of::<AnyValues>("any_values");
    for dialect in [
        Dialect::OpenAiStrict,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
    ] {
        let error = dialect.render(&several).unwrap_err();
        assert!(
            error.reason.contains("/properties/ids") && error.reason.contains("several patterns"),
            "{error}"
        );
        let error = dialect.render(&any_values).unwrap_err();
        assert!(
            error
                .reason
                .contains("/properties/values/patternProperties/")
                && error.reason.contains("any shape"),
            "{error}"
        );
    }
    for dialect in [Dialect::OpenAi, Dialect::Anthropic, Dialect::Mcp] {
        assert!(dialect.render(&several).is_ok(), "{dialect}");
    }
}

// An untagged enum of derived structs without `deny_unknown_fields`: each variant's
// schema is open, so any object "fits" the first one unless the keys sent decide.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct ByName {
    name: String,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct ById {
    #[serde(default)]
    verbose: bool,
    id: u32,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Lookup {
    ByName(ByName),
    ById(ById),
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UntaggedArgs {
    target: Lookup,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Grouping {
    Labels(BTreeMap<String, String>),
    ById(ById),
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GroupingArgs {
    target: Grouping,
}

#[test]
fn untagged_variants_map_back_as_the_variant_whose_fields_were_sent() {
    let definition = definition_of::<UntaggedArgs>("untagged");
    let by_id = |labels: &[(&str, &str)]| {
        Lookup::ById(ById {
            verbose: false,
            id: 7,
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        })
    };
    let by_name = || Lookup::ByName(ByName { name: "x".into() });
    let cases = [
        // Strict mode sends `null` for the defaulted fields, which only ById reads
        // back as absent.
        (
            Dialect::OpenAiStrict,
            json!({"target": {"verbose": null, "id": 7, "labels": null}}),
            by_id(&[]),
        ),
        // The map inside the variant arrives as entries, which only ById turns back
        // into a map.
        (
            Dialect::OpenAiStrict,
            json!({"target": {"verbose": null, "id": 7, "labels": [{"key": "a", "value": "b"}]}}),
            by_id(&[("a", "b")]),
        ),
        (
            Dialect::AnthropicStrict,
            json!({"target": {"id": 7, "labels": [{"key": "a", "value": "b"}]}}),
            by_id(&[("a", "b")]),
        ),
        (
            Dialect::OpenAiStrict,
            json!({"target": {"name": "x"}}),
            by_name(),
        ),
        (
            Dialect::AnthropicStrict,
            json!({"target": {"name": "x"}}),
            by_name(),
        ),
    ];
    for (dialect, answer, expected) in cases {
        let decoded: UntaggedArgs = decode_answer_for(&definition, dialect, answer);
        assert_eq!(decoded.target, expected, "{dialect}");
    }

    // A map variant takes any keys, but where maps are sent as entries an object
    // cannot be meant for it.
    let definition = definition_of::<GroupingArgs>("grouping");
    let labels = Grouping::Labels(BTreeMap::from([("a".to_owned(), "b".to_owned())]));
    let cases = [
        (
            Dialect::OpenAiStrict,
            json!({"target": {"verbose": null, "id": 7, "labels": null}}),
            Grouping::ById(ById {
                verbose: false,
                id: 7,
                labels: BTreeMap::new(),
            }),
        ),
        (
            Dialect::OpenAiStrict,
            json!({"target": [{"key": "a", "value": "b"}]}),
            labels,
        ),
        (
            Dialect::OpenAi,
            json!({"target": {"a": "b"}}),
            Grouping::Labels(BTreeMap::from([("a".to_owned(), "b".to_owned())])),
        ),
    ];
    for (dialect, answer, expected) in cases {
        let decoded: GroupingArgs = decode_answer_for(&definition, dialect, answer);
        assert_eq!(decoded.target, expected, "{dialect}");
    }
}

#[test]
fn tuples_and_recursive_types_decode_from_strict_answers() {
    let answer = json!({"point": [1.5, 2.0], "pair": ["a", 7]});
    let decoded: Tuples = decode_answer("tuples", Dialect::OpenAiStrict, answer);
    assert_eq!(decoded.pair, ("a".to_owned(), 7));
    let answer = json!({"tree": {"value": 1, "children": [{"value": 2, "children": []}]}});
    let decoded: Recursive = decode_answer("recursive", Dialect::OpenAiStrict, answer);
    assert_eq!(decoded.tree.children[0].value, 2);
}

#[test]
fn a_null_for_a_required_property_is_left_for_decoding_to_refuse() {
    let definition = fixture("nested_structs");
    let args = json!({"customer": null, "note": null});
    let normalized = Dialect::OpenAiStrict.normalize_arguments(&definition, args);
    assert_eq!(normalized, json!({"customer": null}));
    let error =
        decode_args::<NestedStructs>(&ArgsSchema::of::<NestedStructs>(), &normalized).unwrap_err();
    assert!(error.to_string().contains("customer"), "{error}");
}

// ---------------------------------------------------------------------------------
// assert_dialects, as a user's test suite calls it.
// ---------------------------------------------------------------------------------

struct Fixture<A>(&'static str, std::marker::PhantomData<A>);

#[async_trait]
impl<A: DeserializeOwned + JsonSchema + Send + Sync + 'static> TypedTool for Fixture<A> {
    type Args = A;
    type Output = String;

    fn name(&self) -> &'static str {
        self.0
    }

    fn description(&self) -> &'static str {
        "A fixture tool."
    }

    async fn call_typed(&self, _args: A, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(String::new())
    }
}

fn tool<A: DeserializeOwned + JsonSchema + Send + Sync + 'static>(
    name: &'static str,
) -> Fixture<A> {
    Fixture(name, std::marker::PhantomData)
}

#[test]
fn assert_dialects_passes_for_tools_that_render_everywhere() {
    let set = ToolSet::new()
        .with_tool(tool::<NestedStructs>("nested"))
        .unwrap()
        .with_tool(tool::<Maps>("maps"))
        .unwrap()
        .with_tool(tool::<Tuples>("tuples"))
        .unwrap();
    assert_dialects(&set);
}

#[test]
fn assert_dialects_panics_with_every_problem_listed() {
    let set = ToolSet::new()
        .with_tool(tool::<NestedStructs>("fine"))
        .unwrap()
        .with_tool(tool::<Recursive>("tree"))
        .unwrap()
        .with_tool(tool::<AnyValue>("blob"))
        .unwrap();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| assert_dialects(&set)))
        .unwrap_err();
    let report = panic.downcast_ref::<String>().unwrap();
    assert!(
        report.starts_with("5 problem(s) rendering 3 tool(s)"),
        "{report}"
    );
    for line in [
        "tool `tree` cannot be rendered for gemini",
        "tool `tree` cannot be rendered for anthropic-strict",
        "tool `blob` cannot be rendered for openai-strict",
        "tool `blob` cannot be rendered for anthropic-strict",
        "tool `blob` cannot be rendered for gemini",
    ] {
        assert!(report.contains(line), "missing `{line}` in:\n{report}");
    }
    assert!(!report.contains("`fine`"), "{report}");
    // Only the dialects you send to.
    assert_dialects_for(&set, &[Dialect::OpenAi, Dialect::Anthropic, Dialect::Mcp]);
}

#[test]
fn the_report_counts_anthropic_strict_limits_across_the_set() {
    let mut set = ToolSet::new();
    for name in [
        "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "t11", "t12", "t13",
        "t14", "t15", "t16", "t17", "t18", "t19", "t20", "t21",
    ] {
        set.register_tool(tool::<Enums>(name)).unwrap();
    }
    let report = dialect_report(&set, &[Dialect::AnthropicStrict]);
    assert!(
        report.iter().any(|p| p.contains("21 strict tools")),
        "{report:?}"
    );
    assert!(
        report
            .iter()
            .any(|p| p.contains("42 parameters with `anyOf` or type arrays")),
        "{report:?}"
    );
    assert!(dialect_report(&set, &[Dialect::OpenAiStrict]).is_empty());
}

// ---------------------------------------------------------------------------------
// Hand-written schemas: the constructs derived schemas rarely use.
// ---------------------------------------------------------------------------------

fn hand_written(parameters: Value) -> ToolDefinition {
    ToolDefinition {
        name: "hand_written".into(),
        title: None,
        description: "A hand-written schema.".into(),
        parameters,
        output_schema: None,
        annotations: ToolAnnotations::default(),
        ..Default::default()
    }
}

#[test]
fn all_of_objects_are_merged_and_other_keywords_are_told_in_words() {
    let definition = hand_written(json!({
        "type": "object",
        "properties": {
            "person": {
                "description": "Who",
                "allOf": [
                    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                    {"properties": {"age": {"type": "integer", "exclusiveMinimum": 0}}},
                ],
            },
            "code": {"type": "string", "not": {"const": "root"}, "examples": ["abc"]},
            "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true},
            "old": {"type": "boolean", "deprecated": true},
        },
        "required": ["person", "code", "ids", "old"],
    }));
    for dialect in [
        Dialect::OpenAiStrict,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
    ] {
        let parameters = dialect.render_parameters(&definition).unwrap();
        let person = &parameters["properties"]["person"];
        assert_eq!(person.get("allOf"), None, "{dialect}");
        assert_eq!(person["description"], "Who");
        assert!(person["properties"]["age"].is_object(), "{dialect}");
        assert_eq!(
            parameters["properties"]["code"]["description"],
            "Must not match the schema {\"const\":\"root\"}; for example: \"abc\""
        );
        assert_eq!(
            parameters["properties"]["ids"]["description"],
            "Items are unique"
        );
        assert_eq!(parameters["properties"]["old"]["description"], "Deprecated");
    }
    let strict = Dialect::OpenAiStrict
        .render_parameters(&definition)
        .unwrap();
    let person = &strict["properties"]["person"];
    assert_eq!(person["required"], json!(["name", "age"]));
    assert_eq!(
        person["properties"]["age"]["type"],
        json!(["integer", "null"])
    );
    let gemini = Dialect::Gemini.render_parameters(&definition).unwrap();
    assert_eq!(
        gemini["properties"]["person"]["properties"]["age"]["description"],
        "Greater than 0"
    );
}

#[test]
fn conflicting_all_of_members_are_an_error() {
    let definition = hand_written(json!({
        "type": "object",
        "properties": {"x": {"allOf": [{"type": "string"}, {"type": "integer"}]}},
    }));
    let error = Dialect::OpenAiStrict.render(&definition).unwrap_err();
    assert!(error.reason.contains("disagree on `type`"), "{error}");
    assert!(error.reason.contains("/properties/x"), "{error}");
}

#[test]
fn draft_7_definitions_are_read_and_rendered_as_defs() {
    let definition = hand_written(json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/Point"}},
        "required": ["p"],
        "definitions": {"Point": {
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
        }},
    }));
    let strict = Dialect::OpenAiStrict
        .render_parameters(&definition)
        .unwrap();
    assert_eq!(strict["properties"]["p"]["$ref"], "#/$defs/Point");
    assert_eq!(strict["$defs"]["Point"]["additionalProperties"], false);
    assert_eq!(strict.get("definitions"), None);
    let gemini = Dialect::Gemini.render_parameters(&definition).unwrap();
    assert_eq!(gemini["properties"]["p"]["required"], json!(["x", "y"]));
}

#[test]
fn a_limit_the_rewrite_cannot_meet_is_reported_not_sent() {
    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = json!({"type": "object", "properties": {"inner": deep}, "required": ["inner"]});
    }
    let definition = hand_written(deep);
    let error = Dialect::OpenAiStrict.render(&definition).unwrap_err();
    assert!(
        error.reason.contains("OpenAI strict mode allows 10"),
        "{error}"
    );
    assert!(Dialect::OpenAi.render(&definition).is_ok());
}

#[test]
fn references_outside_the_schema_are_an_error() {
    let definition = hand_written(json!({
        "type": "object",
        "properties": {"p": {"$ref": "https://example.com/point.json"}},
    }));
    for dialect in [
        Dialect::OpenAiStrict,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
    ] {
        let error = dialect.render(&definition).unwrap_err();
        assert!(error.reason.contains("only references into"), "{error}");
    }
}

#[test]
fn escaped_definition_names_resolve() {
    let definition = hand_written(json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/geo~1Point~0"}},
        "required": ["p"],
        "$defs": {"geo/Point~": {"type": "object", "properties": {"x": {"type": "number"}}}},
    }));
    let strict = Dialect::OpenAiStrict
        .render_parameters(&definition)
        .unwrap();
    assert_eq!(strict["properties"]["p"]["$ref"], "#/$defs/geo~1Point~0");
    assert!(strict["$defs"]["geo/Point~"].is_object());
    let gemini = Dialect::Gemini.render_parameters(&definition).unwrap();
    assert_eq!(
        gemini["properties"]["p"]["properties"]["x"]["type"],
        "number"
    );
    let args = Dialect::OpenAiStrict.normalize_arguments(&definition, json!({"p": {"x": null}}));
    assert_eq!(args, json!({"p": {}}));
}

#[tokio::test]
async fn a_strict_answer_runs_through_the_tool_set_once_mapped_back() {
    let set = ToolSet::new()
        .with_tool(tool::<OptionalNested>("optional_nested"))
        .unwrap();
    let definition = set.definition("optional_nested").unwrap();
    let answer = json!({
        "billing": null,
        "window": {"width": 640, "height": null, "fullscreen": null},
        "retries": null,
        "days": null,
    });
    let ctx = ToolContext::default();
    // As the model sent it, the nested nulls are refused...
    let refused = set
        .call("optional_nested", &answer, &ctx)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("fullscreen"), "{refused}");
    // ...and mapped back, the call goes through.
    let args = Dialect::OpenAiStrict.normalize_arguments(definition, answer);
    set.call("optional_nested", &args, &ctx).await.unwrap();
}

//! The tool model's public behaviour: the `Tool` trait's defaults, `TypedTool`'s schema,
//! argument decoding and output conversion, and `ToolSet`'s registration and dispatch.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use toolwright_core::{
    AgentError, AgentResult, Content, Tool, ToolContext, ToolErrorKind, ToolSet,
    tool::{
        ActivationContext, ApprovalPolicy, ErrorPolicy, Extensions, ExternalTool, ToolAnnotations,
        ToolConcurrency, ToolExposure, ToolMetadata, TypedTool,
    },
};

// ---------------------------------------------------------------------------------
// The seed's WeatherTool, both ways, unchanged but for the crate name.

mod seed_tool {
    use async_trait::async_trait;
    use serde_json::{Value, json};
    use toolwright_core::{AgentResult, Content, Tool, ToolContext};

    pub struct WeatherTool;

    #[async_trait]
    impl Tool for WeatherTool {
        fn name(&self) -> &'static str {
            "get_weather"
        }

        fn description(&self) -> &'static str {
            "Get current weather for a city"
        }

        fn schema(&self) -> Value {
            json!({
                "type": "object",
                "properties": {
                    "city": {
                        "type": "string",
                        "description": "City name, e.g. 'Beijing'"
                    }
                },
                "required": ["city"]
            })
        }

        async fn call(&self, args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
            let city = args["city"].as_str().unwrap_or("unknown");
            // In production, call a real weather API here
            Ok(vec![Content::text(format!(
                "Weather in {}: 22°C, sunny",
                city
            ))])
        }
    }
}

mod seed_typed {
    use async_trait::async_trait;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use toolwright_core::{AgentResult, ToolContext, tool::TypedTool};

    #[derive(Deserialize, JsonSchema)]
    pub struct WeatherArgs {
        /// City name, e.g. "Beijing"
        city: String,
    }

    pub struct WeatherTool;

    #[async_trait]
    impl TypedTool for WeatherTool {
        type Args = WeatherArgs;
        type Output = String; // String → Content::text directly; other types → JSON

        fn name(&self) -> &'static str {
            "get_weather"
        }
        fn description(&self) -> &'static str {
            "Get current weather for a city"
        }

        async fn call_typed(&self, args: WeatherArgs, _ctx: &ToolContext) -> AgentResult<String> {
            Ok(format!("Weather in {}: 22°C, sunny", args.city))
        }
    }
}

fn ctx() -> ToolContext {
    ToolContext::default()
}

fn texts(content: &[Content]) -> Vec<&str> {
    content.iter().filter_map(Content::as_text).collect()
}

#[tokio::test]
async fn seed_weather_tool_registers_and_runs_by_name() {
    let mut set = ToolSet::new();
    set.register_tool(seed_tool::WeatherTool).unwrap();
    let out = set
        .call("get_weather", &json!({"city": "Beijing"}), &ctx())
        .await
        .unwrap();
    assert_eq!(texts(&out), ["Weather in Beijing: 22°C, sunny"]);
    assert_eq!(set.len(), 1);
    assert_eq!(set.get("get_weather").unwrap().name(), "get_weather");
}

#[tokio::test]
async fn seed_typed_weather_tool_registers_and_runs_by_name() {
    let mut set = ToolSet::new();
    set.register_tool(seed_typed::WeatherTool).unwrap();
    let out = set
        .call("get_weather", &json!({"city": "Paris"}), &ctx())
        .await
        .unwrap();
    assert_eq!(texts(&out), ["Weather in Paris: 22°C, sunny"]);
    let schema = set.get("get_weather").unwrap().schema();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. \"Beijing\""}
            },
            "required": ["city"],
            "additionalProperties": false
        })
    );
}

// ---------------------------------------------------------------------------------
// Defaults of the trait.

struct Minimal;

#[async_trait]
impl Tool for Minimal {
    fn name(&self) -> &'static str {
        "minimal"
    }
    fn description(&self) -> &'static str {
        "Does nothing."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        Ok(vec![])
    }
}

#[tokio::test]
async fn every_optional_method_has_the_documented_default() {
    let tool = Minimal;
    assert_eq!(tool.timeout_ms(), None);
    assert_eq!(
        tool.metadata(),
        ToolMetadata {
            name: "minimal".into(),
            description: "Does nothing.".into(),
            origin: "custom".into(),
            version: "unknown".into(),
            requirements: vec![],
        }
    );
    assert_eq!(tool.exposure(), ToolExposure::Direct);
    assert!(tool.should_activate(&ActivationContext::default()).await);
    assert_eq!(tool.approval(&json!({})), ApprovalPolicy::Unspecified);
    assert_eq!(tool.on_error(), ErrorPolicy::ReturnToModel);
    assert_eq!(tool.output_schema(), None);
    assert_eq!(tool.annotations(), ToolAnnotations::default());
    assert_eq!(tool.concurrency(), ToolConcurrency::default());
    assert!(!tool.is_external());
    assert_eq!(tool.validate_output(&[Content::text("x")]), Ok(()));
    assert_eq!(tool.validate_progress(&json!(1)), Ok(()));
}

#[tokio::test]
async fn typed_tool_defaults_match_tool_defaults() {
    let tool = seed_typed::WeatherTool;
    let tool: &dyn Tool = &tool;
    assert_eq!(tool.timeout_ms(), None);
    assert_eq!(tool.metadata().origin, "custom");
    assert_eq!(tool.metadata().version, "unknown");
    assert_eq!(tool.exposure(), ToolExposure::Direct);
    assert!(tool.should_activate(&ActivationContext::default()).await);
    assert_eq!(tool.approval(&json!({})), ApprovalPolicy::Unspecified);
    assert_eq!(tool.on_error(), ErrorPolicy::ReturnToModel);
    assert_eq!(tool.output_schema(), None);
    assert_eq!(tool.annotations(), ToolAnnotations::default());
    assert!(!tool.is_external());
}

// ---------------------------------------------------------------------------------
// Schema shape.

#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Window {
    /// First day, 0 = today
    start: u8,
    days: u8,
}

fn default_days() -> u8 {
    3
}

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
struct ForecastArgs {
    /// City name
    city: String,
    /// Temperature unit
    unit: Option<Unit>,
    #[serde(default = "default_days")]
    days: u8,
    #[serde(rename = "countryCode")]
    country: Option<String>,
    window: Option<Window>,
}

#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    days: u8,
    unit: Option<Unit>,
}

/// Echoes its decoded arguments, so tests can see exactly what the tool received.
struct ForecastTool;

#[async_trait]
impl TypedTool for ForecastTool {
    type Args = ForecastArgs;
    type Output = Forecast;

    fn name(&self) -> &'static str {
        "forecast"
    }
    fn description(&self) -> &'static str {
        "Forecast for a city."
    }
    async fn call_typed(&self, args: ForecastArgs, _ctx: &ToolContext) -> AgentResult<Forecast> {
        Ok(Forecast {
            city: args.city,
            days: args.days,
            unit: args.unit,
        })
    }
}

#[test]
fn schema_covers_optional_defaulted_renamed_enum_and_nested_fields() {
    let schema = Tool::schema(&ForecastTool);
    assert_eq!(schema["type"], "object");
    assert!(
        schema.get("$schema").is_none(),
        "no generator noise: {schema}"
    );
    assert!(
        schema.get("title").is_none(),
        "no generator noise: {schema}"
    );
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["city"]));
    let props = &schema["properties"];
    assert_eq!(props["city"]["description"], "City name");
    assert_eq!(props["days"]["default"], 3);
    assert!(props.get("countryCode").is_some(), "renamed: {props}");
    assert!(props.get("country").is_none());
    assert_eq!(
        schema["$defs"]["Unit"],
        json!({"type": "string", "enum": ["celsius", "fahrenheit"]})
    );
    assert_eq!(
        schema["$defs"]["Window"]["required"],
        json!(["start", "days"])
    );
    assert_eq!(
        props["window"]["anyOf"],
        json!([{"$ref": "#/$defs/Window"}, {"type": "null"}])
    );
}

#[test]
fn a_tool_without_parameters_has_an_empty_closed_object_schema() {
    #[derive(Deserialize, JsonSchema)]
    struct NoArgs {}
    struct Ping;
    #[async_trait]
    impl TypedTool for Ping {
        type Args = NoArgs;
        type Output = &'static str;
        fn name(&self) -> &'static str {
            "ping"
        }
        fn description(&self) -> &'static str {
            "Answers pong."
        }
        async fn call_typed(&self, _: NoArgs, _: &ToolContext) -> AgentResult<&'static str> {
            Ok("pong")
        }
    }
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert_eq!(Tool::schema(&Ping), empty);
    assert_eq!(
        toolwright_core::schema::ArgsSchema::of::<()>().schema(),
        &empty
    );
}

// ---------------------------------------------------------------------------------
// Argument decoding.

async fn forecast(args: Value) -> AgentResult<Vec<Content>> {
    forecast_ref(&args).await
}

async fn forecast_ref(args: &Value) -> AgentResult<Vec<Content>> {
    let set = ToolSet::new().with_tool(ForecastTool).unwrap();
    set.call("forecast", args, &ctx()).await
}

fn invalid(result: AgentResult<Vec<Content>>) -> String {
    let error = result.expect_err("the arguments should be refused");
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::InvalidArguments),
        "{error}"
    );
    error.to_string()
}

#[tokio::test]
async fn a_wrong_type_names_the_field() {
    let msg = invalid(forecast(json!({"city": "Oslo", "days": "3"})).await);
    assert_eq!(
        msg,
        "Invalid arguments: days: invalid type: string \"3\", expected u8"
    );
}

#[tokio::test]
async fn a_wrong_type_in_a_nested_field_names_its_path() {
    let msg = invalid(forecast(json!({"city": "Oslo", "window": {"start": 0, "days": -1}})).await);
    assert!(msg.contains("window.days"), "{msg}");
}

#[tokio::test]
async fn a_missing_field_is_named() {
    let msg = invalid(forecast(json!({"days": 2})).await);
    assert_eq!(msg, "Invalid arguments: missing field `city`");
}

#[tokio::test]
async fn an_unknown_field_is_refused_and_the_expected_ones_listed() {
    let msg = invalid(forecast(json!({"city": "Oslo", "cty": "x"})).await);
    assert!(msg.contains("unknown field `cty`"), "{msg}");
    assert!(msg.contains("`city`"), "{msg}");
}

#[tokio::test]
async fn an_unknown_field_is_refused_even_when_the_args_type_allows_it() {
    // The schema tells the model the object is closed; dispatch holds it to that.
    let set = ToolSet::new().with_tool(seed_typed::WeatherTool).unwrap();
    let result = set
        .call("get_weather", &json!({"city": "Oslo", "extra": 1}), &ctx())
        .await;
    assert!(invalid(result).contains("unknown field `extra`"));
}

#[tokio::test]
async fn non_object_arguments_are_refused_with_their_kind() {
    for (args, kind) in [
        (json!(null), "null"),
        (json!("Oslo"), "a string"),
        (json!([1]), "an array"),
        (json!(7), "a number"),
        (json!(true), "a boolean"),
    ] {
        let msg = invalid(forecast(args).await);
        assert_eq!(
            msg,
            format!("Invalid arguments: expected a JSON object, got {kind}")
        );
    }
}

#[tokio::test]
async fn deeply_nested_arguments_are_refused_without_overflowing_the_stack() {
    // Built as text, as a model's arguments arrive; serde_json's own limit is 128.
    let depth = 120;
    let text = format!(
        "{{\"city\": \"Oslo\", \"window\": {}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let args: Value = serde_json::from_str(&text).unwrap();
    let msg = invalid(forecast(args).await);
    assert!(msg.contains("window"), "{msg}");

    // Built in memory, far deeper than any parser allows.
    let mut deep = json!(1);
    for _ in 0..5_000 {
        deep = Value::Array(vec![deep]);
    }
    let mut args = json!({"city": "Oslo"});
    args["window"] = deep;
    let msg = invalid(forecast_ref(&args).await);
    assert_eq!(msg, "Invalid arguments: nested deeper than 128 levels");
    // Drop iteratively: serde_json's recursive Drop is the test's concern, not ours.
    let mut value = args;
    while let Some(inner) = value
        .as_object_mut()
        .and_then(|m| m.remove("window"))
        .or_else(|| value.as_array_mut().and_then(|a| a.pop()))
    {
        value = inner;
    }
}

#[tokio::test]
async fn huge_numbers_are_refused_not_truncated() {
    let msg = invalid(forecast(json!({"city": "Oslo", "days": 1e300})).await);
    assert!(
        msg.starts_with("Invalid arguments: days: invalid type: floating point"),
        "{msg}"
    );
    let msg = invalid(forecast(json!({"city": "Oslo", "days": u64::MAX})).await);
    assert!(msg.contains("days"), "{msg}");
    assert!(msg.contains("expected u8"), "{msg}");
}

#[tokio::test]
async fn null_for_an_optional_or_defaulted_parameter_means_absent() {
    let out = forecast(json!({"city": "Oslo", "unit": null, "days": null, "countryCode": null}))
        .await
        .unwrap();
    assert_eq!(
        out[1].as_json().unwrap(),
        &json!({"city": "Oslo", "days": 3, "unit": null})
    );
    // A required parameter's null is still an error.
    let msg = invalid(forecast(json!({"city": null})).await);
    assert!(msg.contains("city") || msg.contains("string"), "{msg}");
}

// ---------------------------------------------------------------------------------
// Output conversion.

macro_rules! returning {
    ($name:ident, $ty:ty, $value:expr) => {
        struct $name;
        #[async_trait]
        impl TypedTool for $name {
            type Args = ();
            type Output = $ty;
            fn name(&self) -> &'static str {
                stringify!($name)
            }
            fn description(&self) -> &'static str {
                "Returns a fixed value."
            }
            async fn call_typed(&self, _: (), _: &ToolContext) -> AgentResult<$ty> {
                Ok($value)
            }
        }
    };
}

returning!(ReturnsString, String, "plain".to_owned());
returning!(ReturnsStr, &'static str, "static");
returning!(ReturnsContent, Content, Content::image("aGk=", "image/png"));
returning!(
    ReturnsContents,
    Vec<Content>,
    vec![Content::text("a"), Content::text("b")]
);
returning!(ReturnsUnit, (), ());
returning!(
    ReturnsStruct,
    Forecast,
    Forecast {
        city: "Rome".into(),
        days: 2,
        unit: Some(Unit::Celsius)
    }
);
returning!(ReturnsNumber, u32, 42);
returning!(ReturnsValue, Value, json!({"ok": true}));

async fn output_of<T: Tool + 'static>(tool: T) -> Vec<Content> {
    tool.call(&json!({}), &ctx()).await.unwrap()
}

#[tokio::test]
async fn outputs_become_content_by_kind() {
    assert_eq!(output_of(ReturnsString).await, [Content::text("plain")]);
    assert_eq!(output_of(ReturnsStr).await, [Content::text("static")]);
    assert_eq!(
        output_of(ReturnsContent).await,
        [Content::image("aGk=", "image/png")]
    );
    assert_eq!(
        output_of(ReturnsContents).await,
        [Content::text("a"), Content::text("b")]
    );
    assert_eq!(output_of(ReturnsUnit).await, []);
    let value = json!({"city": "Rome", "days": 2, "unit": "celsius"});
    assert_eq!(
        output_of(ReturnsStruct).await,
        [Content::text(value.to_string()), Content::json(value)]
    );
    assert_eq!(output_of(ReturnsNumber).await, [Content::text("42")]);
    assert_eq!(
        output_of(ReturnsValue).await,
        [
            Content::text(r#"{"ok":true}"#),
            Content::json(json!({"ok": true}))
        ]
    );
}

#[test]
fn content_serializes_with_a_type_tag() {
    assert_eq!(
        serde_json::to_value(Content::text("hi")).unwrap(),
        json!({"type": "text", "text": "hi"})
    );
    assert_eq!(
        serde_json::to_value(Content::image("aGk=", "image/png")).unwrap(),
        json!({"type": "image", "data": "aGk=", "mime_type": "image/png"})
    );
    let back: Content = serde_json::from_value(json!({"type": "text", "text": "hi"})).unwrap();
    assert_eq!(back.as_text(), Some("hi"));
}

// ---------------------------------------------------------------------------------
// Registration.

#[test]
fn a_second_tool_with_a_taken_name_is_refused() {
    let mut set = ToolSet::new();
    set.register_tool(seed_tool::WeatherTool).unwrap();
    let error = set.register_tool(seed_typed::WeatherTool).unwrap_err();
    assert_eq!(error, AgentError::DuplicateTool("get_weather".into()));
    assert_eq!(
        error.to_string(),
        "a tool named `get_weather` is already registered"
    );
    assert_eq!(set.len(), 1);
}

#[test]
fn names_providers_reject_are_refused_at_registration() {
    for name in ["", "1abc", "has space", "dot.ted", &"x".repeat(65)] {
        let tool = ExternalTool::new(name, "d", json!({"type": "object"}));
        let error = ToolSet::new().register_tool(tool).unwrap_err();
        assert!(
            matches!(error, AgentError::InvalidTool { .. }),
            "{name:?}: {error}"
        );
    }
    for name in ["a", "_x", "fetch-ticket", "A_1-b", &"x".repeat(64)] {
        let tool = ExternalTool::new(name, "d", json!({"type": "object"}));
        ToolSet::new().register_tool(tool).unwrap();
    }
}

#[test]
fn a_schema_whose_root_is_not_an_object_is_refused() {
    let tool = ExternalTool::new("bad", "d", json!({"type": "string"}));
    let error = ToolSet::new().register_tool(tool).unwrap_err();
    assert!(
        error.to_string().contains("must be {\"type\": \"object\"}"),
        "{error}"
    );
}

#[test]
fn definitions_are_normalised_once_at_registration() {
    let set = ToolSet::new().with_tool(seed_tool::WeatherTool).unwrap();
    let def = set.definition("get_weather").unwrap();
    assert_eq!(def.parameters["additionalProperties"], false);
    assert_eq!(def.description, "Get current weather for a city");
    assert!(Arc::ptr_eq(def, set.definition("get_weather").unwrap()));
}

#[test]
fn ten_thousand_tools_register_and_resolve_by_name() {
    let mut set = ToolSet::new();
    for i in 0..10_000 {
        let name = format!("tool_{i}");
        set.register_tool(ExternalTool::new(
            name,
            "one of many",
            json!({"type": "object"}),
        ))
        .unwrap();
    }
    assert_eq!(set.len(), 10_000);
    for i in (0..10_000).step_by(997) {
        let name = format!("tool_{i}");
        assert_eq!(set.get(&name).unwrap().name(), name);
    }
    assert!(set.get("tool_10000").is_none());
    assert_eq!(set.iter().next().unwrap().name(), "tool_0");
}

// ---------------------------------------------------------------------------------
// Exposure is enforced at dispatch.

struct Exposed {
    name: &'static str,
    exposure: ToolExposure,
    runs: Arc<AtomicUsize>,
}

#[async_trait]
impl Tool for Exposed {
    fn name(&self) -> &'static str {
        self.name
    }
    fn description(&self) -> &'static str {
        "Counts its runs."
    }
    fn schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _: &Value, _: &ToolContext) -> AgentResult<Vec<Content>> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(vec![Content::text("ran")])
    }
    fn exposure(&self) -> ToolExposure {
        self.exposure
    }
    async fn should_activate(&self, ctx: &ActivationContext) -> bool {
        // The seed's rule: active when a file_read tool is offered.
        ctx.current_tools.iter().any(|t| t == "file_read")
    }
}

fn exposed(name: &'static str, exposure: ToolExposure) -> (Exposed, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    (
        Exposed {
            name,
            exposure,
            runs: runs.clone(),
        },
        runs,
    )
}

#[tokio::test]
async fn a_hidden_tool_answers_as_an_unknown_tool() {
    let (hidden, runs) = exposed("secret", ToolExposure::Hidden);
    let (direct, _) = exposed("visible", ToolExposure::Direct);
    let set = ToolSet::new()
        .with_tool(hidden)
        .unwrap()
        .with_tool(direct)
        .unwrap();
    let error = set.call("secret", &json!({}), &ctx()).await.unwrap_err();
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::UnknownTool));
    assert_eq!(
        error.to_string(),
        "Unknown tool: secret. Available tools: visible"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // The application still reaches it.
    assert!(set.get("secret").is_some());
    assert!(
        set.active_definitions(&ActivationContext::default())
            .await
            .iter()
            .all(|d| d.name != "secret")
    );
}

#[tokio::test]
async fn a_deferred_tool_runs_only_while_active() {
    let (deferred, runs) = exposed("deferred_tool", ToolExposure::Deferred);
    let inactive = ToolSet::new().with_tool(deferred).unwrap();
    let error = inactive
        .call("deferred_tool", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::UnknownTool));
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let (deferred, runs) = exposed("deferred_tool", ToolExposure::Deferred);
    let (file_read, _) = exposed("file_read", ToolExposure::Direct);
    let active = ToolSet::new()
        .with_tool(deferred)
        .unwrap()
        .with_tool(file_read)
        .unwrap();
    let out = active
        .call("deferred_tool", &json!({}), &ctx())
        .await
        .unwrap();
    assert_eq!(texts(&out), ["ran"]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn names_are_matched_exactly() {
    let (direct, runs) = exposed("visible", ToolExposure::Direct);
    let set = ToolSet::new().with_tool(direct).unwrap();
    for guess in ["Visible", "VISIBLE", "visible ", " visible"] {
        let error = set.call(guess, &json!({}), &ctx()).await.unwrap_err();
        assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::UnknownTool));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_external_tool_never_runs_in_process() {
    let set = ToolSet::new()
        .with_tool(ExternalTool::new(
            "ticket_lookup",
            "Load a ticket",
            json!({"type": "object"}),
        ))
        .unwrap();
    assert!(set.get("ticket_lookup").unwrap().is_external());
    let error = set
        .call("ticket_lookup", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("external"), "{error}");
}

// ---------------------------------------------------------------------------------
// State.

#[derive(Clone)]
struct Greeting(&'static str);

struct Greeter;

#[async_trait]
impl TypedTool for Greeter {
    type Args = ();
    type Output = String;
    fn name(&self) -> &'static str {
        "greet"
    }
    fn description(&self) -> &'static str {
        "Greets with the configured greeting."
    }
    async fn call_typed(&self, _: (), ctx: &ToolContext) -> AgentResult<String> {
        Ok(ctx.state::<Greeting>().map_or("none", |g| g.0).to_owned())
    }
}

#[tokio::test]
async fn state_registered_on_the_set_reaches_tools_and_the_context_wins() {
    let set = ToolSet::new().with_tool(Greeter).unwrap();
    assert_eq!(
        texts(&set.call("greet", &json!({}), &ctx()).await.unwrap()),
        ["none"]
    );
    let set = set.with_state(Greeting("hello"));
    assert_eq!(
        texts(&set.call("greet", &json!({}), &ctx()).await.unwrap()),
        ["hello"]
    );
    let own = ctx().with_state(Greeting("own"));
    assert_eq!(
        texts(&set.call("greet", &json!({}), &own).await.unwrap()),
        ["own"]
    );
}

#[tokio::test]
async fn extensions_given_whole_replace_the_contexts_own_state_and_still_win() {
    let set = ToolSet::new()
        .with_tool(Greeter)
        .unwrap()
        .with_state(Greeting("set"));
    let mut shared = Extensions::new();
    shared.insert(Greeting("shared"));
    // Whatever `with_state` put there before is replaced, not merged.
    let own = ctx()
        .with_state(Greeting("own"))
        .with_extensions(shared.clone());
    assert_eq!(
        texts(&set.call("greet", &json!({}), &own).await.unwrap()),
        ["shared"]
    );
    // Empty extensions leave the set's state to answer.
    let bare = ctx().with_extensions(Extensions::new());
    assert_eq!(
        texts(&set.call("greet", &json!({}), &bare).await.unwrap()),
        ["set"]
    );
}

#[test]
fn the_default_context_is_usable() {
    let ctx = ToolContext::default();
    assert_eq!(ctx.session_id(), "");
    assert!(!ctx.is_cancelled());
    ctx.cancellation().cancel();
    assert!(ctx.is_cancelled());
    assert!(ctx.emit_progress(json!({"step": 1})).is_ok());
}

// ---------------------------------------------------------------------------------
// Error paths reach into nested values.

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // read through Debug
enum Shape {
    Dot,
    Circle { radius: u32 },
    Polygon { points: Vec<Point> },
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)] // read through Debug
struct Point {
    x: i32,
    y: i32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read through Debug
struct DrawArgs {
    shapes: Vec<Shape>,
    origin: Option<Point>,
    labels: std::collections::BTreeMap<String, u8>,
    /// Keyed by integers: schemars describes the keys with `patternProperties`.
    #[serde(default)]
    layers: std::collections::BTreeMap<u32, Point>,
}

struct Draw;

#[async_trait]
impl TypedTool for Draw {
    type Args = DrawArgs;
    type Output = String;
    fn name(&self) -> &'static str {
        "draw"
    }
    fn description(&self) -> &'static str {
        "Draws shapes."
    }
    async fn call_typed(&self, args: DrawArgs, _: &ToolContext) -> AgentResult<String> {
        Ok(format!("{args:?}"))
    }
}

#[tokio::test]
async fn error_paths_reach_into_arrays_options_variants_and_maps() {
    let set = ToolSet::new().with_tool(Draw).unwrap();
    let cases = [
        (
            json!({"shapes": ["dot", {"polygon": {"points": [{"x": 1, "y": 2}, {"x": "3", "y": 4}]}}], "labels": {}}),
            "Invalid arguments: shapes[1].polygon.points[1].x: invalid type: string \"3\", expected i32",
        ),
        (
            json!({"shapes": [{"circle": {"radius": -5}}], "labels": {}}),
            "Invalid arguments: shapes[0].circle.radius: invalid value: integer `-5`, expected u32",
        ),
        (
            json!({"shapes": [], "origin": {"x": 1}, "labels": {}}),
            "Invalid arguments: origin: missing field `y`",
        ),
        (
            json!({"shapes": [], "labels": {"a": 1, "b": 300}}),
            "Invalid arguments: labels.b: invalid value: integer `300`, expected u8",
        ),
        (
            json!({"shapes": ["square"], "labels": {}}),
            "Invalid arguments: shapes[0]: unknown variant `square`, expected one of `dot`, `circle`, `polygon`",
        ),
        (
            json!({"shapes": [], "labels": {}, "layers": {"7": {"x": 1, "y": "2"}}}),
            "Invalid arguments: layers.7.y: invalid type: string \"2\", expected i32",
        ),
        // A well-formed integer-keyed map is no culprit for a mistake elsewhere.
        (
            json!({"layers": {"7": {"x": 1, "y": 2}}, "labels": {"a": 300}, "shapes": []}),
            "Invalid arguments: labels.a: invalid value: integer `300`, expected u8",
        ),
    ];
    for (args, expected) in cases {
        let error = set.call("draw", &args, &ctx()).await.unwrap_err();
        assert_eq!(error.to_string(), expected, "for {args}");
    }
}

//! Expansion tests of `#[tool]`, `#[toolbox]` and `tools![]`: for tools written every
//! supported way, what reaches the `Tool` trait and what a call through a `ToolSet` does.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolwright_core::{
    AgentError, AgentResult, Content, Progress, State, Tool, ToolContext, ToolError, ToolErrorKind,
    ToolSet, tool,
    tool::{ActivationContext, ApprovalPolicy, CallReporter, ErrorPolicy, ToolExposure},
    toolbox, tools,
};

/// Temperature unit.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Celsius.
    Celsius,
    /// Fahrenheit.
    Fahrenheit,
}

/// A forecast.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
pub struct Forecast {
    /// The city.
    pub city: String,
    /// The unit.
    pub unit: Option<Unit>,
    /// Days.
    pub days: u8,
}

/// Get current weather for a city.
///
/// Uses the national weather service; results are cached for ten minutes.
///
/// # Errors
///
/// When the service is down.
#[tool(timeout = "5s", read_only)]
async fn get_weather(
    /// City name, e.g. "Beijing"
    city: String,
    /// Temperature unit
    unit: Option<Unit>,
    #[arg(default = 1)] days: u8,
    ctx: &ToolContext,
) -> Result<Forecast, std::io::Error> {
    let _ = ctx;
    Ok(Forecast { city, unit, days })
}

fn tool_of<T: Tool + 'static>(tool: T) -> Arc<dyn Tool> {
    Arc::new(tool)
}

fn ctx() -> ToolContext {
    ToolContext::default()
}

#[test]
fn weather_golden() {
    let tool = tool_of(get_weather {});
    assert_eq!(tool.name(), "get_weather");
    assert_eq!(
        tool.description(),
        "Get current weather for a city.\n\nUses the national weather service; results are cached for ten minutes."
    );
    assert_eq!(
        tool.schema(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. \"Beijing\""},
                "unit": {
                    "anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}],
                    "description": "Temperature unit"
                },
                "days": {
                    "type": "integer", "format": "uint8", "minimum": 0, "maximum": 255,
                    "default": 1
                }
            },
            "required": ["city"],
            "$defs": {
                "Unit": {
                    "oneOf": [
                        {"type": "string", "const": "celsius", "description": "Celsius."},
                        {"type": "string", "const": "fahrenheit", "description": "Fahrenheit."}
                    ],
                    "description": "Temperature unit."
                }
            }
        })
    );
    assert_eq!(tool.timeout_ms(), Some(5000));
    assert_eq!(tool.exposure(), ToolExposure::Direct);
    assert!(tool.annotations().is_read_only());
    assert_eq!(tool.annotations().destructive, None);
    assert_eq!(tool.approval(&json!({})), ApprovalPolicy::Unspecified);
    assert_eq!(tool.on_error(), ErrorPolicy::ReturnToModel);
    let meta = tool.metadata();
    assert_eq!(meta.name, "get_weather");
    assert_eq!(meta.origin, "agent-tests");
    assert_eq!(meta.version, env!("CARGO_PKG_VERSION"));
    assert!(meta.requirements.is_empty());
    let output = tool.output_schema().expect("Forecast is an object");
    assert_eq!(output["type"], "object");
    assert_eq!(output["properties"]["days"]["type"], "integer");
    assert!(output.get("$schema").is_none());
}

#[tokio::test]
async fn weather_calls() {
    let set = tools![get_weather];
    let out = set
        .call(
            "get_weather",
            &json!({"city": "Paris", "unit": "celsius"}),
            &ctx(),
        )
        .await
        .unwrap();
    assert_eq!(
        out[1].as_json(),
        Some(&json!({"city": "Paris", "unit": "celsius", "days": 1}))
    );
    // null for an optional means absent
    let out = set
        .call(
            "get_weather",
            &json!({"city": "Oslo", "unit": null, "days": 3}),
            &ctx(),
        )
        .await
        .unwrap();
    assert_eq!(
        out[1].as_json(),
        Some(&json!({"city": "Oslo", "unit": null, "days": 3}))
    );
    // unknown property rejected, naming it
    let err = set
        .call(
            "get_weather",
            &json!({"city": "Oslo", "country": "NO"}),
            &ctx(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::InvalidArguments));
    assert!(err.to_string().contains("country"), "{err}");
    // missing required field named
    let err = set
        .call("get_weather", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("city"), "{err}");
    // wrong type named
    let err = set
        .call(
            "get_weather",
            &json!({"city": "Oslo", "unit": "kelvin"}),
            &ctx(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unit"), "{err}");
}

#[tokio::test]
async fn fn_stays_callable() {
    let forecast = get_weather("Rome".into(), None, 2, &ctx()).await.unwrap();
    assert_eq!(
        forecast,
        Forecast {
            city: "Rome".into(),
            unit: None,
            days: 2
        }
    );
}

fn needs_approval(args: &Value) -> bool {
    args["amount"].as_u64().unwrap_or(0) > 100
}

fn non_empty(output: &[Content]) -> Result<(), String> {
    if output.iter().any(|c| c.as_text() == Some("")) {
        Err("empty text".into())
    } else {
        Ok(())
    }
}

fn small(progress: &Value) -> Result<(), String> {
    if progress.as_u64().is_some_and(|n| n <= 100) {
        Ok(())
    } else {
        Err(format!("progress out of range: {progress}"))
    }
}

async fn has_workspace(ctx: &ActivationContext) -> bool {
    !ctx.workspace.as_os_str().is_empty()
}

/// Pay someone.
#[tool(
    name = "pay",
    title = "Payment",
    timeout_ms = 1500,
    exposure = "deferred",
    activate_when = has_workspace,
    origin = "payments",
    version = "2.1.0",
    requirements = ["network", "money"],
    require_approval = needs_approval,
    on_error = "fail_run",
    destructive,
    idempotent,
    open_world,
    max_in_flight = 3,
    exclusive = "ledger",
    sequential,
    validate_output = non_empty,
    validate_progress = small,
)]
async fn send_payment(amount: u64) -> String {
    format!("paid {amount}")
}

#[tokio::test]
async fn every_key_reaches_the_trait() {
    let tool = tool_of(send_payment {});
    assert_eq!(tool.name(), "pay");
    assert_eq!(tool.description(), "Pay someone.");
    assert_eq!(tool.timeout_ms(), Some(1500));
    assert_eq!(tool.exposure(), ToolExposure::Deferred);
    let meta = tool.metadata();
    assert_eq!(meta.origin, "payments");
    assert_eq!(meta.version, "2.1.0");
    assert_eq!(meta.requirements, vec!["network", "money"]);
    assert_eq!(
        tool.approval(&json!({"amount": 500})),
        ApprovalPolicy::Required
    );
    assert_eq!(
        tool.approval(&json!({"amount": 5})),
        ApprovalPolicy::NotRequired
    );
    assert_eq!(tool.on_error(), ErrorPolicy::FailRun);
    let a = tool.annotations();
    assert_eq!(a.title.as_deref(), Some("Payment"));
    assert_eq!(a.read_only, None);
    assert_eq!(a.destructive, Some(true));
    assert_eq!(a.idempotent, Some(true));
    assert_eq!(a.open_world, Some(true));
    let c = tool.concurrency();
    assert_eq!(c.max_in_flight, Some(3));
    assert_eq!(c.exclusive_group.as_deref(), Some("ledger"));
    assert_eq!(c.sequential, Some(true));
    assert_eq!(tool.validate_output(&[Content::text("ok")]), Ok(()));
    assert_eq!(
        tool.validate_output(&[Content::text("")]),
        Err("empty text".to_owned())
    );
    assert_eq!(tool.validate_progress(&json!(50)), Ok(()));
    assert!(tool.validate_progress(&json!(500)).is_err());
    assert_eq!(tool.output_schema(), None);
    let inactive = ActivationContext::default();
    assert!(!tool.should_activate(&inactive).await);
    let active = ActivationContext {
        workspace: "/tmp".into(),
        ..ActivationContext::default()
    };
    assert!(tool.should_activate(&active).await);

    // Deferred and inactive: unknown to the model; active: callable.
    let set = tools![send_payment];
    let err = set
        .call("pay", &json!({"amount": 1}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::UnknownTool));
    let out = set
        .call("pay", &json!({"amount": 1}), &ctx().with_workspace("/tmp"))
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("paid 1"));
}

/// Always needs a person.
#[tool(
    require_approval,
    description = "Delete everything.",
    exposure = "hidden"
)]
async fn wipe() -> &'static str {
    "wiped"
}

#[tokio::test]
async fn approval_flag_description_key_and_hidden() {
    let tool = tool_of(wipe {});
    assert_eq!(tool.approval(&json!({})), ApprovalPolicy::Required);
    // `description = ` wins over the doc comment
    assert_eq!(tool.description(), "Delete everything.");
    assert_eq!(tool.exposure(), ToolExposure::Hidden);
    assert_eq!(tool.timeout_ms(), None);
    let set = tools![wipe];
    let err = set.call("wipe", &json!({}), &ctx()).await.unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::UnknownTool));
    // the application may still call it directly
    let out = set
        .get("wipe")
        .unwrap()
        .call(&json!({}), &ctx())
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("wiped"));
}

/// A path segment.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Segment {
    /// Where it starts.
    pub from: String,
    /// Where it ends.
    pub to: String,
}

/// Plan a route.
///
///   Indented by the author; the indentation is removed.
///
/// # Arguments
///
/// * `segments` - The legs of the trip,
///   in order.
/// * `mode` - Ignored: the `///` on the parameter wins.
///
/// # Examples
///
/// ```ignore
/// plan(...)
/// ```
#[tool]
async fn plan(
    segments: Vec<Segment>,
    /// How to travel
    #[arg(rename = "travelMode")]
    mode: String,
    #[arg(default)] avoid_tolls: bool,
    #[arg(description = "Maximum stops")] max_stops: Option<u32>,
) -> AgentResult<String> {
    Ok(format!(
        "{} legs by {mode}, tolls {avoid_tolls}, stops {max_stops:?}",
        segments.len()
    ))
}

#[tokio::test]
async fn docs_arguments_rename_default() {
    let tool = tool_of(plan {});
    assert_eq!(
        tool.description(),
        "Plan a route.\n\n  Indented by the author; the indentation is removed."
    );
    assert_eq!(
        tool.schema(),
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "segments": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/Segment"},
                    "description": "The legs of the trip, in order."
                },
                "travelMode": {"type": "string", "description": "How to travel"},
                "avoid_tolls": {"type": "boolean", "default": false},
                "max_stops": {
                    "type": ["integer", "null"], "format": "uint32", "minimum": 0,
                    "description": "Maximum stops"
                }
            },
            "required": ["segments", "travelMode"],
            "$defs": {
                "Segment": {
                    "type": "object",
                    "description": "A path segment.",
                    "properties": {
                        "from": {"type": "string", "description": "Where it starts."},
                        "to": {"type": "string", "description": "Where it ends."}
                    },
                    "required": ["from", "to"]
                }
            }
        })
    );
    let set = tools![plan];
    let out = set
        .call(
            "plan",
            &json!({"segments": [{"from": "a", "to": "b"}], "travelMode": "train", "max_stops": null}),
            &ctx(),
        )
        .await
        .unwrap();
    assert_eq!(
        out[0].as_text(),
        Some("1 legs by train, tolls false, stops None")
    );
    // the Rust name is not the property's name
    let err = set
        .call("plan", &json!({"segments": [], "mode": "car"}), &ctx())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("mode"), "{err}");
}

/// No arguments at all.
#[tool]
async fn ping() -> &'static str {
    "pong"
}

#[tokio::test]
async fn no_arguments_golden() {
    let tool = tool_of(ping {});
    assert_eq!(
        tool.schema(),
        json!({"type": "object", "additionalProperties": false, "properties": {}})
    );
    let err = tools![ping]
        .call("ping", &json!({"x": 1}), &ctx())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`x`"), "{err}");
}

#[derive(Debug)]
struct Broken;

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the pipe is broken")
    }
}

/// Fails with a Display error.
#[tool]
async fn fails_display() -> Result<String, Broken> {
    Err(Broken)
}

/// Fails with a tool error of its own kind.
#[tool]
async fn fails_denied() -> Result<String, ToolError> {
    Err(ToolError::denied("not on Sundays"))
}

/// Fails with an agent error.
#[tool]
async fn fails_agent() -> AgentResult<()> {
    Err(AgentError::Tool(ToolError::invalid_arguments("bad date")))
}

/// Fails with a string.
#[tool]
async fn fails_string() -> Result<u8, String> {
    Err("nope".into())
}

/// An error that chooses its kind (and has no `Display`).
#[derive(Debug)]
struct NotFound(String);

impl From<NotFound> for ToolError {
    fn from(error: NotFound) -> Self {
        ToolError::invalid_arguments(format!("no item `{}`; list the items first", error.0))
    }
}

/// Look an item up.
#[tool]
async fn lookup(id: String) -> Result<String, NotFound> {
    Err(NotFound(id))
}

#[tokio::test]
async fn errors_keep_their_kind() {
    let set = tools![
        fails_display,
        fails_denied,
        fails_agent,
        fails_string,
        lookup
    ];
    let err = set
        .call("lookup", &json!({"id": "x1"}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::InvalidArguments));
    assert_eq!(err.to_string(), "no item `x1`; list the items first");
    let err = set
        .call("fails_display", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::Execution));
    assert_eq!(err.to_string(), "the pipe is broken");
    let err = set
        .call("fails_denied", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::Denied));
    assert_eq!(err.to_string(), "not on Sundays");
    let err = set
        .call("fails_agent", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::InvalidArguments));
    let err = set
        .call("fails_string", &json!({}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "nope");
}

/// Returns content.
#[tool]
async fn picture() -> Vec<Content> {
    vec![Content::text("a cat"), Content::image("aGk=", "image/png")]
}

/// Returns nothing.
#[tool]
async fn nothing() {}

/// Returns a number.
#[tool]
async fn answer() -> u32 {
    42
}

#[tokio::test]
async fn outputs() {
    let set = tools![picture, nothing, answer, ping];
    let out = set.call("picture", &json!({}), &ctx()).await.unwrap();
    assert_eq!(out.len(), 2);
    assert!(
        set.call("nothing", &json!({}), &ctx())
            .await
            .unwrap()
            .is_empty()
    );
    let out = set.call("answer", &json!({}), &ctx()).await.unwrap();
    assert_eq!(out, vec![Content::text("42")]);
    for name in ["picture", "nothing", "answer", "ping"] {
        assert_eq!(set.get(name).unwrap().output_schema(), None, "{name}");
    }
}

#[derive(Clone)]
struct Greeting(String);

/// Greets with the application's greeting.
#[tool]
async fn greet(greeting: State<Greeting>, name: String) -> String {
    format!("{}, {name}", greeting.0.0)
}

#[tokio::test]
async fn state_found_and_missing() {
    let set = tools![greet].with_state(Greeting("Hello".into()));
    let out = set
        .call("greet", &json!({"name": "Ada"}), &ctx())
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("Hello, Ada"));
    // state on the context works too
    let out = tools![greet]
        .call(
            "greet",
            &json!({"name": "Bo"}),
            &ctx().with_state(Greeting("Hi".into())),
        )
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("Hi, Bo"));
    let err = tools![greet]
        .call("greet", &json!({"name": "Ada"}), &ctx())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("Greeting"), "{err}");
    // the schema has only the model's parameter
    assert_eq!(
        tools![greet].get("greet").unwrap().schema()["required"],
        json!(["name"])
    );
}

#[derive(Default)]
struct Recorder(Mutex<Vec<(String, Value)>>);

impl CallReporter for Recorder {
    fn progress(&self, call_id: &str, value: Value) -> Result<(), ToolError> {
        self.0.lock().unwrap().push((call_id.to_owned(), value));
        Ok(())
    }

    fn set_context(&self, _call_id: &str, _value: Value) {}
}

/// Counts, reporting progress.
#[tool]
async fn count_up(to: u32, progress: Progress) -> Result<u32, ToolError> {
    for i in 1..=to {
        progress.emit(json!({"done": i}))?;
    }
    Ok(to)
}

#[tokio::test]
async fn progress_reaches_the_reporter() {
    let recorder = Arc::new(Recorder::default());
    let context = ctx().with_call_id("call-1").with_reporter(recorder.clone());
    let out = tools![count_up]
        .call("count_up", &json!({"to": 2}), &context)
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("2"));
    assert_eq!(
        *recorder.0.lock().unwrap(),
        vec![
            ("call-1".to_owned(), json!({"done": 1})),
            ("call-1".to_owned(), json!({"done": 2}))
        ]
    );
}

mod nested {
    pub mod math {
        use toolwright_core::tool;

        /// Add two numbers.
        #[tool(idempotent)]
        pub async fn add(a: f64, b: f64) -> f64 {
            a + b
        }
    }
}

#[tokio::test]
async fn tools_macro_forms() {
    let empty: ToolSet = tools![];
    assert!(empty.is_empty());
    let set = tools![nested::math::add, ping,];
    assert_eq!(set.len(), 2);
    let names: Vec<&str> = set.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["add", "ping"]);
    let out = set
        .call("add", &json!({"a": 1, "b": 2.5}), &ctx())
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("3.5"));
    assert!(set.get("add").unwrap().annotations().is_idempotent());

    // register one tool by value
    let mut set = ToolSet::new();
    set.register_tool(ping {}).unwrap();
    assert!(set.register_tool(ping {}).is_err());
}

/// A library of books.
pub struct Library {
    books: Vec<String>,
}

#[toolbox]
impl Library {
    /// Find books whose title contains the words.
    #[tool(read_only)]
    pub async fn search(
        &self,
        /// Words to find
        query: String,
    ) -> Vec<String> {
        self.books
            .iter()
            .filter(|b| b.contains(&query))
            .cloned()
            .collect()
    }

    /// Add a book.
    #[tool(name = "add_book", destructive)]
    pub async fn add(&self, title: String, ctx: &ToolContext) -> Result<usize, ToolError> {
        let _ = ctx;
        if title.is_empty() {
            return Err(ToolError::invalid_arguments("empty title"));
        }
        Ok(self.books.len() + 1)
    }

    /// How many books a shelf shows.
    #[tool]
    pub async fn shelf(&self, #[arg(default = 1)] rows: usize, per_row: Option<usize>) -> usize {
        (rows * per_row.unwrap_or(2)).min(self.books.len())
    }

    /// A plain method.
    pub fn size(&self) -> usize {
        self.books.len()
    }
}

#[tokio::test]
async fn toolbox_methods() {
    let library = Arc::new(Library {
        books: vec!["Dune".into(), "Emma".into()],
    });
    assert_eq!(library.size(), 2);
    // the method stays callable
    assert_eq!(library.search("mm".into()).await, vec!["Emma"]);
    let set = library.clone().into_toolset();
    assert_eq!(set.len(), 3);
    // a method's default fills an absent argument; a given one is read
    let out = set.call("shelf", &json!({}), &ctx()).await.unwrap();
    assert_eq!(out[0].as_text(), Some("2"));
    let args = json!({"rows": 1, "per_row": 1});
    let out = set.call("shelf", &args, &ctx()).await.unwrap();
    assert_eq!(out[0].as_text(), Some("1"));
    let args = json!({"rows": "two"});
    let err = set.call("shelf", &args, &ctx()).await.unwrap_err();
    assert!(err.to_string().contains("rows"), "{err}");
    let out = set
        .call("search", &json!({"query": "Du"}), &ctx())
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some(r#"["Dune"]"#));
    let search = set.get("search").unwrap();
    assert!(search.annotations().is_read_only());
    assert_eq!(
        search.schema()["properties"]["query"]["description"],
        "Words to find"
    );
    let add = set.get("add_book").unwrap();
    assert!(add.annotations().is_destructive());
    assert_eq!(add.metadata().origin, "agent-tests");
    let err = set
        .call("add_book", &json!({"title": ""}), &ctx())
        .await
        .unwrap_err();
    assert_eq!(err.tool_error_kind(), Some(ToolErrorKind::InvalidArguments));
    // the tool types are nameable
    let one = LibrarySearchTool(library);
    assert_eq!(one.name(), "search");
}

#[tokio::test]
async fn macro_tools_render_in_every_dialect() {
    let set = tools![
        get_weather,
        send_payment,
        wipe,
        plan,
        ping,
        greet,
        count_up,
        answer,
        nested::math::add
    ];
    toolwright_core::dialect::assert_dialects(&set);
    let library = Arc::new(Library { books: Vec::new() });
    toolwright_core::dialect::assert_dialects(&library.into_toolset());
}

// ---------------------------------------------------------------------------------
// Sets joined together, output schemas and descriptions, word for word.

#[derive(Clone)]
struct DbUrl(&'static str);
#[derive(Clone)]
struct ApiKey(&'static str);

/// Reads the database URL.
#[tool]
async fn read_db(db: State<DbUrl>) -> String {
    db.0.0.to_owned()
}

/// Reads the API key.
#[tool]
async fn read_key(key: State<ApiKey>) -> String {
    key.0.0.to_owned()
}

#[tokio::test]
async fn a_set_extended_with_another_keeps_the_state_of_both() {
    let mut set = tools![read_db].with_state(DbUrl("postgres://"));
    set.extend(tools![read_key].with_state(ApiKey("k-123")))
        .unwrap();
    let db = set.call("read_db", &json!({}), &ctx()).await.unwrap();
    assert_eq!(db[0].as_text(), Some("postgres://"));
    let key = set.call("read_key", &json!({}), &ctx()).await.unwrap();
    assert_eq!(key[0].as_text(), Some("k-123"));
    // Where both sets hold a value of one type, this set's stays.
    let mut set = tools![read_db].with_state(DbUrl("mine"));
    set.extend(ToolSet::new().with_state(DbUrl("theirs")))
        .unwrap();
    let db = set.call("read_db", &json!({}), &ctx()).await.unwrap();
    assert_eq!(db[0].as_text(), Some("mine"));
}

/// A report.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Report {
    /// How many.
    pub count: u32,
    /// Warnings, left out when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Makes a report.
#[tool]
async fn report() -> Report {
    Report {
        count: 3,
        warnings: Vec::new(),
    }
}

#[tokio::test]
async fn a_structured_result_conforms_to_its_own_output_schema() {
    let set = tools![report];
    let schema = set.get("report").unwrap().output_schema().unwrap();
    let out = set.call("report", &json!({}), &ctx()).await.unwrap();
    let structured: Value = serde_json::from_str(out[0].as_text().unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&structured)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "output {structured} violates its output schema {schema}: {errors:?}"
    );
    assert_eq!(schema["required"], json!(["count"]));
}

/// Retries a request.
#[tool]
async fn retry(#[arg(description = "# of attempts before giving up")] attempts: u8) -> u8 {
    attempts
}

#[test]
fn an_arg_description_is_the_property_description_word_for_word() {
    let set = tools![retry];
    let property = &set.get("retry").unwrap().schema()["properties"]["attempts"];
    assert_eq!(
        property["description"], "# of attempts before giving up",
        "{property}"
    );
    assert!(property.get("title").is_none(), "{property}");
}

/// Swaps two values.
///
/// # Arguments
///
/// * `a` - the first
/// * `b` - the second
#[tool]
async fn swap(#[arg(rename = "b")] a: u8, #[arg(rename = "a")] b: u8) -> String {
    format!("{b} {a}")
}

#[test]
fn arguments_items_describe_the_parameter_they_name_even_when_renames_cross() {
    let set = tools![swap];
    let properties = &set.get("swap").unwrap().schema()["properties"];
    // `a` is sent as "b" and `b` as "a": each keeps its own item's text.
    assert_eq!(properties["b"]["description"], "the first", "{properties}");
    assert_eq!(properties["a"]["description"], "the second", "{properties}");
}

#[tokio::test]
async fn a_tool_says_whether_it_reads_its_context() {
    // Through `tools![]` (the shared `FnTool`) and through the tool type's own impl.
    let set = tools![ping, plan, get_weather, greet];
    assert!(!set.get("ping").unwrap().uses_context());
    assert!(!set.get("plan").unwrap().uses_context());
    assert!(
        set.get("get_weather").unwrap().uses_context(),
        "&ToolContext"
    );
    assert!(set.get("greet").unwrap().uses_context(), "State<T>");
    assert!(!tool_of(ping {}).uses_context());
    assert!(tool_of(get_weather {}).uses_context());
    // Composition keeps the answer.
    let prefixed = tools![ping, greet].prefixed("x").unwrap();
    assert!(!prefixed.get("x_ping").unwrap().uses_context());
    assert!(prefixed.get("x_greet").unwrap().uses_context());
    // Toolbox methods: `self` is not the context.
    let library = Arc::new(Library { books: Vec::new() }).into_toolset();
    assert!(!library.get("search").unwrap().uses_context());
    assert!(library.get("add_book").unwrap().uses_context());
}

/// Adds twelve numbers: the most parameters read as one tuple.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn sum12(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    e: u8,
    f: u8,
    g: u8,
    h: u8,
    i: u8,
    j: u8,
    k: u8,
    greeting: State<Greeting>,
    #[arg(default = 100)] l: u32,
) -> String {
    let total: u32 = [a, b, c, d, e, f, g, h, i, j, k]
        .map(u32::from)
        .iter()
        .sum();
    format!("{} {}", greeting.0.0, total + l)
}

/// Adds thirteen numbers: one parameter more than a tuple read.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn sum13(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    e: u8,
    f: u8,
    g: u8,
    h: u8,
    i: u8,
    j: u8,
    k: u8,
    greeting: State<Greeting>,
    l: u8,
    #[arg(default = 100)] m: u32,
) -> String {
    let total: u32 = [a, b, c, d, e, f, g, h, i, j, k, l]
        .map(u32::from)
        .iter()
        .sum();
    format!("{} {}", greeting.0.0, total + m)
}

/// Adds sixteen numbers: the most parameters a tool takes from the model.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn sum16(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    e: u8,
    f: u8,
    g: u8,
    h: u8,
    i: u8,
    j: u8,
    k: u8,
    greeting: State<Greeting>,
    l: u8,
    n: u8,
    o: u8,
    p: u8,
    #[arg(default = 100)] m: u32,
) -> String {
    let total: u32 = [a, b, c, d, e, f, g, h, i, j, k, l, n, o, p]
        .map(u32::from)
        .iter()
        .sum();
    format!("{} {}", greeting.0.0, total + m)
}

#[tokio::test]
async fn many_parameters_are_read_by_name_with_defaults_and_errors() {
    let ones = |names: &str| -> Value {
        Value::Object(names.chars().map(|n| (n.to_string(), json!(1))).collect())
    };
    let greeted = ctx().with_state(Greeting("Sum".into()));
    let set = tools![sum12, sum13, sum16];
    // Every way to reach a tool: the set `tools![]` makes, and the tool type's own impl.
    for (name, names, defaulted, total, direct) in [
        ("sum12", "abcdefghijk", "l", 111, tool_of(sum12 {})),
        ("sum13", "abcdefghijkl", "m", 112, tool_of(sum13 {})),
        ("sum16", "abcdefghijklnop", "m", 115, tool_of(sum16 {})),
    ] {
        let listed = set.get(name).unwrap();
        for tool in [listed, &direct] {
            // The default fills the absent last parameter; a given one wins.
            let out = tool.call(&ones(names), &greeted).await.unwrap();
            assert_eq!(out[0].as_text(), Some(format!("Sum {total}").as_str()));
            let mut args = ones(names);
            args[defaulted] = json!(7);
            let out = tool.call(&args, &greeted).await.unwrap();
            assert_eq!(
                out[0].as_text(),
                Some(format!("Sum {}", total - 100 + 7).as_str())
            );
            // A missing parameter is named, a mistyped one too, and neither runs the fn.
            let mut args = ones(names);
            args.as_object_mut().unwrap().remove("c");
            let err = tool.call(&args, &greeted).await.unwrap_err();
            assert!(
                err.to_string().contains("missing field `c`"),
                "{name}: {err}"
            );
            let mut args = ones(names);
            args["e"] = json!("five");
            let err = tool.call(&args, &greeted).await.unwrap_err();
            assert!(
                err.to_string()
                    .contains("e: invalid type: string \"five\", expected u8"),
                "{name}: {err}"
            );
            // The runtime-supplied parameter, missing, is reported as such.
            let err = tool.call(&ones(names), &ctx()).await.unwrap_err();
            assert!(err.to_string().contains("Greeting"), "{name}: {err}");
        }
    }
}

//! Prints the example tools' definitions as each provider wants them.
//!
//! ```text
//! cargo run --example schemas -- --dialect openai-strict
//! cargo run --example schemas -- --dialect gemini
//! cargo run --example schemas              # every dialect
//! ```
//!
//! Dialects: openai-strict, openai, anthropic, anthropic-strict, gemini, mcp.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use toolwright_core::{
    AgentResult, ToolContext, ToolSet, async_trait,
    dialect::Dialect,
    tool::{ToolAnnotations, TypedTool},
};

/// Temperature unit
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

fn one() -> u8 {
    1
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WeatherArgs {
    /// City name, e.g. "Beijing"
    #[schemars(length(min = 1, max = 100))]
    city: String,
    /// Temperature unit
    unit: Option<Unit>,
    /// How many days to forecast
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 7))]
    days: u8,
}

/// Get current weather and a forecast for a city.
struct GetWeather;

#[async_trait]
impl TypedTool for GetWeather {
    type Args = WeatherArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "get_weather"
    }

    fn description(&self) -> &'static str {
        "Get current weather and a forecast for a city."
    }

    async fn call_typed(&self, args: WeatherArgs, _ctx: &ToolContext) -> AgentResult<String> {
        let unit = match args.unit {
            Some(Unit::Fahrenheit) => "°F",
            Some(Unit::Celsius) | None => "°C",
        };
        Ok(format!(
            "Sunny and 21{unit} in {} for {} day(s)",
            args.city, args.days
        ))
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Weather".into()),
            read_only: Some(true),
            open_world: Some(true),
            ..ToolAnnotations::default()
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Attendee {
    #[schemars(email)]
    email: String,
    /// Whether they may decline without notice
    #[serde(default)]
    optional: bool,
}

/// When the event happens.
#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Schedule {
    /// A single occurrence
    Once {
        /// RFC 3339 start time
        start: String,
    },
    /// Every week on the same day
    Weekly {
        /// Day of the week, 0 = Monday
        #[schemars(range(max = 6))]
        weekday: u8,
        /// How many weeks; forever when absent
        count: Option<u32>,
    },
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateEventArgs {
    /// Event title
    #[schemars(length(min = 3, max = 80))]
    title: String,
    schedule: Schedule,
    attendees: Vec<Attendee>,
    /// Free-form labels
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

/// Create a calendar event.
struct CreateEvent;

#[async_trait]
impl TypedTool for CreateEvent {
    type Args = CreateEventArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "create_event"
    }

    fn description(&self) -> &'static str {
        "Create a calendar event and invite its attendees."
    }

    async fn call_typed(&self, args: CreateEventArgs, _ctx: &ToolContext) -> AgentResult<String> {
        let when = match args.schedule {
            Schedule::Once { start } => format!("at {start}"),
            Schedule::Weekly { weekday, count } => match count {
                Some(count) => format!("weekly on day {weekday}, {count} times"),
                None => format!("weekly on day {weekday}"),
            },
        };
        let required: Vec<&str> = args
            .attendees
            .iter()
            .filter(|a| !a.optional)
            .map(|a| a.email.as_str())
            .collect();
        Ok(format!(
            "Created `{}` {when}, inviting {} ({} label(s))",
            args.title,
            required.join(", "),
            args.labels.len()
        ))
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            destructive: Some(false),
            idempotent: Some(false),
            ..ToolAnnotations::default()
        }
    }
}

fn tools() -> ToolSet {
    let mut set = ToolSet::new();
    set.register_tool(GetWeather)
        .and_then(|set| set.register_tool(CreateEvent))
        .expect("the example tools have valid, distinct names");
    set
}

/// Every tool of `set` in `dialect`, or the first reason one cannot be rendered.
fn render(set: &ToolSet, dialect: Dialect) -> Result<Value, String> {
    let definitions = set.iter().filter_map(|tool| set.definition(tool.name()));
    let tools = dialect
        .render_all(definitions.map(|d| &**d))
        .map_err(|e| e.to_string())?;
    Ok(Value::Array(tools))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dialects: Vec<Dialect> = match args.as_slice() {
        [] => Dialect::ALL.to_vec(),
        [flag, name] if flag == "--dialect" => match name.parse() {
            Ok(dialect) => vec![dialect],
            Err(error) => {
                eprintln!("{error}");
                return ExitCode::from(2);
            }
        },
        _ => {
            let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
            eprintln!(
                "usage: cargo run --example schemas -- [--dialect <{}>]",
                names.join("|")
            );
            return ExitCode::from(2);
        }
    };
    let set = tools();
    let mut rendered = Map::new();
    for dialect in &dialects {
        match render(&set, *dialect) {
            Ok(tools) => {
                rendered.insert(dialect.as_str().into(), tools);
            }
            Err(error) => {
                eprintln!("{error}");
                return ExitCode::FAILURE;
            }
        }
    }
    // One dialect: just its tool list, ready to paste into a request.
    let output = if dialects.len() == 1 {
        rendered
            .into_iter()
            .next()
            .map_or(Value::Null, |(_, tools)| tools)
    } else {
        Value::Object(rendered)
    };
    match serde_json::to_string_pretty(&output) {
        // `println!` panics when the reader goes away (`| head`); a closed pipe is
        // not an error for a printer.
        Ok(text) => match writeln!(std::io::stdout().lock(), "{text}") {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("could not print the definitions: {error}");
                ExitCode::FAILURE
            }
        },
        Err(error) => {
            eprintln!("could not print the definitions: {error}");
            ExitCode::FAILURE
        }
    }
}

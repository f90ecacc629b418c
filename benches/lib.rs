//! Tools shared by the benchmarks.

use async_trait::async_trait;
use toolwright_core::{AgentResult, ToolContext, ToolSet, tool::TypedTool};

/// A no-op tool with a name chosen at run time, for sets of many tools.
pub struct Noop(String);

#[async_trait]
impl TypedTool for Noop {
    type Args = ();
    type Output = &'static str;

    fn name(&self) -> &str {
        &self.0
    }

    fn description(&self) -> &'static str {
        "Does nothing, quickly."
    }

    async fn call_typed(&self, _args: (), _ctx: &ToolContext) -> AgentResult<&'static str> {
        Ok("ok")
    }
}

/// The name of the `i`th tool of [`noop_set`].
pub fn noop_name(i: usize) -> String {
    format!("noop_{i}")
}

/// A set of `n` no-op tools named `noop_0` .. `noop_{n-1}`.
pub fn noop_set(n: usize) -> ToolSet {
    let mut set = ToolSet::new();
    for i in 0..n {
        set.register_tool(Noop(noop_name(i)))
            .expect("names are distinct and valid");
    }
    set
}

/// A tool with three parameters (a string, an integer, an optional enum) returning text,
/// and the same work written by hand, for the dispatch benchmark and the
/// `dispatch_calls` example that counts its instructions.
pub mod dispatch {
    use async_trait::async_trait;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::{Value, json};
    use toolwright_core::{
        AgentResult, Content, ToolContext, ToolSet, tool, tool::TypedTool, tools,
    };

    /// What every path is called with: the tool in a set as `#[tool]` and as a
    /// [`TypedTool`], a context and the model's arguments.
    pub struct Fixture {
        /// [`forecast_tool`] in a set of its own.
        pub tool_macro: ToolSet,
        /// [`Forecast`] in a set of its own.
        pub typed: ToolSet,
        /// The context of every call.
        pub ctx: ToolContext,
        /// Arguments valid for every path.
        pub args: Value,
    }

    impl Default for Fixture {
        fn default() -> Self {
            Self {
                tool_macro: tools![forecast_tool],
                typed: ToolSet::new().with_tool(Forecast).expect("valid tool"),
                ctx: ToolContext::default(),
                args: json!({"city": "Beijing", "days": 3, "unit": "celsius"}),
            }
        }
    }

    #[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    /// The unit of a forecast.
    pub enum Unit {
        /// Degrees Celsius.
        Celsius,
        /// Degrees Fahrenheit.
        Fahrenheit,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    /// The arguments of the forecast tool, for the hand-written paths.
    pub struct ForecastArgs {
        /// The city.
        pub city: String,
        /// Days ahead.
        pub days: u8,
        /// The unit, Celsius when absent.
        #[serde(default)]
        pub unit: Option<Unit>,
    }

    /// The work every path does once its arguments are decoded.
    pub async fn forecast(city: String, days: u8, unit: Option<Unit>) -> String {
        let unit = match unit {
            Some(Unit::Fahrenheit) => "F",
            _ => "C",
        };
        format!("{city}: {days} days, 22°{unit}")
    }

    /// Forecast for a city.
    #[tool(name = "forecast")]
    pub async fn forecast_tool(city: String, days: u8, unit: Option<Unit>) -> String {
        forecast(city, days, unit).await
    }

    /// The forecast tool written as a [`TypedTool`].
    pub struct Forecast;

    #[async_trait]
    impl TypedTool for Forecast {
        type Args = ForecastArgs;
        type Output = String;

        fn name(&self) -> &'static str {
            "forecast"
        }

        fn description(&self) -> &'static str {
            "Forecast for a city."
        }

        async fn call_typed(&self, args: ForecastArgs, _ctx: &ToolContext) -> AgentResult<String> {
            Ok(forecast(args.city, args.days, args.unit).await)
        }
    }

    /// The hand-written tool as most are written: `serde_json::from_value` into the
    /// struct. `Tool::call` receives `&Value`, so the value is cloned first.
    pub async fn by_hand_from_value(args: &Value) -> AgentResult<Vec<Content>> {
        let args: ForecastArgs = serde_json::from_value(args.clone())
            .map_err(|e| toolwright_core::ToolError::invalid_arguments(e.to_string()))?;
        Ok(vec![Content::text(
            forecast(args.city, args.days, args.unit).await,
        )])
    }

    /// The physical limit: decoded straight from the borrowed value, no lookup, no checks,
    /// no dynamic dispatch.
    pub async fn by_hand(args: &Value) -> AgentResult<Vec<Content>> {
        let args = ForecastArgs::deserialize(args)
            .map_err(|e| toolwright_core::ToolError::invalid_arguments(e.to_string()))?;
        Ok(vec![Content::text(
            forecast(args.city, args.days, args.unit).await,
        )])
    }
}

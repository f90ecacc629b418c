//! The tool both benchmarks serve: a forecast, once as an toolwright-core `#[tool]` for our
//! server and once with rmcp's own `#[tool_router]`/`#[tool]` macros.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::tool_router;
use serde_json::{Value, json};
use toolwright_core::tool;

/// What both servers answer for Beijing, 3 days, Celsius.
pub const BEIJING_3_DAYS: &str = "Beijing: 3 days, 22°C";

/// A temperature unit.
#[derive(Debug, Clone, Copy, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

fn forecast(city: &str, days: u8, unit: Option<Unit>) -> String {
    let unit = if matches!(unit, Some(Unit::Fahrenheit)) {
        "F"
    } else {
        "C"
    };
    format!("{city}: {days} days, 22°{unit}")
}

/// Forecast for a city.
#[tool(name = "forecast")]
pub async fn forecast_tool(city: String, days: u8, unit: Option<Unit>) -> String {
    forecast(&city, days, unit)
}

/// The forecast tool's arguments, for rmcp's macros.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct ForecastArgs {
    /// The city.
    pub city: String,
    /// How many days ahead.
    pub days: u8,
    /// The temperature unit (Celsius by default).
    pub unit: Option<Unit>,
}

/// The forecast served by a server written with rmcp's own macros.
#[derive(Clone)]
pub struct RmcpServer;

#[tool_router(server_handler)]
impl RmcpServer {
    /// Forecast for a city.
    #[rmcp::tool(name = "forecast")]
    async fn forecast(&self, Parameters(args): Parameters<ForecastArgs>) -> String {
        forecast(&args.city, args.days, args.unit)
    }
}

/// The forecast for Beijing, 3 days, in Celsius.
#[allow(dead_code, reason = "http_load writes its calls' JSON itself")]
pub fn call_params() -> CallToolRequestParams {
    let Value::Object(arguments) = json!({"city": "Beijing", "days": 3, "unit": "celsius"}) else {
        unreachable!("a literal object")
    };
    CallToolRequestParams::new("forecast").with_arguments(arguments)
}

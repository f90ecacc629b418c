//! Expansion tests of `#[tool]`, `#[toolbox]` and `tools![]`.

use agent_core::{ToolContext, tool, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Temperature unit.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Celsius.
    Celsius,
    /// Fahrenheit.
    Fahrenheit,
}

/// A forecast.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forecast {
    /// The city.
    pub city: String,
    /// Days.
    pub days: u8,
}

/// Get current weather for a city.
///
/// Uses the national weather service.
#[tool(timeout = "5s", read_only)]
async fn get_weather(
    /// City name, e.g. "Beijing"
    city: String,
    /// Temperature unit
    unit: Option<Unit>,
    #[arg(default = 1)] days: u8,
    ctx: &ToolContext,
) -> Result<Forecast, std::io::Error> {
    let _ = (unit, ctx);
    Ok(Forecast { city, days })
}

#[tokio::test]
async fn smoke() {
    let set = tools![get_weather];
    let tool = set.get("get_weather").unwrap();
    println!("{}", serde_json::to_string_pretty(&tool.schema()).unwrap());
    println!("{:?}", tool.description());
    let out = set
        .call("get_weather", &serde_json::json!({"city": "Paris"}), &ToolContext::default())
        .await
        .unwrap();
    println!("{out:?}");
}

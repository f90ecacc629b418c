use toolwright_core::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Forecast for a city.
#[tool(example(city = "Paris", unit = Unit::Celsius))]
async fn forecast(city: String, unit: Unit) -> String {
    let _ = unit;
    city
}

fn main() {}

use toolwright_core::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Forecast.
#[tool]
async fn forecast(#[arg(default)] unit: Unit) -> String {
    let _ = unit;
    String::new()
}

fn main() {}

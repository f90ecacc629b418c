use toolwright_core::tool;

/// Forecast for a city.
#[tool(example(citty = "Paris", days = 3))]
async fn forecast(city: String, days: u8) -> String {
    format!("{city}: {days}")
}

fn main() {}

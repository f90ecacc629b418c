use toolwright_core::tool;

/// Forecast for a city.
#[tool(example(city = "Paris", days = 3u8))]
async fn forecast(city: String, days: u8) -> String {
    format!("{city}: {days}")
}

fn main() {}

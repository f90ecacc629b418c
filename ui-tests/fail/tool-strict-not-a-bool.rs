use toolwright_core::tool;

/// Forecast for a city.
#[tool(strict = "yes")]
async fn forecast(city: String) -> String {
    city
}

fn main() {}

use toolwright_core::tool;

/// Forecast for a city.
#[tool(example = "Paris")]
async fn forecast(city: String) -> String {
    city
}

fn main() {}

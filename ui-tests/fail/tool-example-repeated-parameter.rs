use toolwright_core::tool;

/// Forecast for a city.
#[tool(example(city = "Paris", city = "Oslo"))]
async fn forecast(city: String) -> String {
    city
}

fn main() {}

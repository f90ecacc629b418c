use toolwright_core::{ToolContext, tool};

/// Forecast for a city.
#[tool(example(city = "Paris", ctx = null))]
async fn forecast(city: String, ctx: &ToolContext) -> String {
    let _ = ctx;
    city
}

fn main() {}

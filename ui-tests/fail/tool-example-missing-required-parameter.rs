use toolwright_core::tool;

/// Forecast for a city.
#[tool(example(city = "Paris"), example(days = 3))]
async fn forecast(city: String, days: u8, unit: Option<String>, #[arg(default)] hours: u8) -> String {
    format!("{city}: {days} {unit:?} {hours}")
}

fn main() {}

use toolwright_core::tool;

/// Forecast.
#[tool]
async fn forecast(#[arg(default = "three")] days: u8) -> String {
    days.to_string()
}

fn main() {}

use toolwright_core::tool;

/// Get the weather.
///
/// # Arguments
///
/// * `city` - City name
/// * `citi` - A typo
#[tool]
async fn weather(city: String) -> String {
    city
}

fn main() {}

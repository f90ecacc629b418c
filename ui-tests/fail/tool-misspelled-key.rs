use toolwright_core::tool;

/// Add two numbers.
#[tool(timout = "5s", readonly)]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

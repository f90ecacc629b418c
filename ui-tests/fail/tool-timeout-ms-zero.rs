use toolwright_core::tool;

/// Add two numbers.
#[tool(timeout_ms = 0)]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

use toolwright_core::tool;

/// Add two numbers.
#[tool(timeout = "5s", timeout_ms = 5000)]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

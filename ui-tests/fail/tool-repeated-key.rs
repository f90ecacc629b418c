use toolwright_core::tool;

/// Add two numbers.
#[tool(timeout = "5s", timeout = "10s")]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

use toolwright_core::tool;

/// Add two numbers.
#[tool(name = "add numbers")]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

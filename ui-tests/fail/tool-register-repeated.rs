use toolwright_core::tool;

/// Add two numbers.
#[tool(register, register)]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

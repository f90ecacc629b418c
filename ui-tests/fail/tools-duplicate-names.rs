use toolwright_core::{tool, tools};

mod math {
    use toolwright_core::tool;

    /// Add two numbers.
    #[tool]
    pub async fn add(a: f64, b: f64) -> f64 {
        a + b
    }
}

/// Add two integers.
#[tool(name = "add")]
async fn add_ints(a: i64, b: i64) -> i64 {
    a + b
}

/// Subtract.
#[tool]
async fn sub(a: f64, b: f64) -> f64 {
    a - b
}

fn main() {
    let _ = tools![math::add, sub, add_ints];
}

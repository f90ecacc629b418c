use toolwright_core::{tool, toolbox};

#[derive(Default)]
struct Calculator;

#[toolbox]
impl Calculator {
    /// Add two numbers.
    #[tool(register)]
    async fn add(&self, a: f64, b: f64) -> f64 {
        a + b
    }
}

fn main() {}

use toolwright_core::{tool, toolbox};

struct Calculator {
    precision: u32,
}

impl Calculator {
    fn with_precision(precision: u32) -> Self {
        Self { precision }
    }
}

#[toolbox(register = Calculator::with_precision)]
impl Calculator {
    /// Round a number.
    #[tool]
    async fn round(&self, x: f64) -> f64 {
        let scale = 10f64.powi(self.precision as i32);
        (x * scale).round() / scale
    }
}

fn main() {}

use toolwright_core::tool;

#[tool]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

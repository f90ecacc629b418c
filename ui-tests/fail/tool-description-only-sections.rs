use toolwright_core::tool;

/// # Examples
///
/// ```
/// add(1.0, 2.0);
/// ```
#[tool]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {}

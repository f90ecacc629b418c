use toolwright_core::tool;

/// Sum a pair.
#[tool]
async fn sum((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}

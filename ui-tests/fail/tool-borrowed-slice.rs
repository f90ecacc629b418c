use toolwright_core::tool;

/// Sum numbers.
#[tool]
async fn total(values: &[i64]) -> i64 {
    values.iter().sum()
}

fn main() {}

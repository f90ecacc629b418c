use toolwright_core::tool;

/// Describe.
#[tool]
async fn describe() -> impl std::fmt::Display {
    "x"
}

fn main() {}

//! A public tool in a crate that denies missing docs: the generated items are documented.
#![deny(missing_docs)]

/// Public tools.
pub mod tools {
    use toolwright_core::tool;

    /// Add.
    #[tool]
    pub async fn add(a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    let _ = toolwright_core::tools![tools::add];
}

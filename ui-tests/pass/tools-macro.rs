//! `tools![]` forms.
use toolwright_core::{ToolSet, tool, tools};

mod math {
    use toolwright_core::tool;

    /// Add.
    #[tool]
    pub async fn add(a: f64, b: f64) -> f64 {
        a + b
    }

    pub mod deep {
        use toolwright_core::tool;

        /// Multiply.
        #[tool]
        pub async fn mul(a: f64, b: f64) -> f64 {
            a * b
        }
    }
}

/// Subtract.
#[tool]
async fn sub(a: f64, b: f64) -> f64 {
    a - b
}

fn main() {
    let empty: ToolSet = tools![];
    assert!(empty.is_empty());
    let one = tools![sub];
    assert_eq!(one.len(), 1);
    let trailing = tools![sub, math::add,];
    assert_eq!(trailing.len(), 2);
    let all = tools![crate::sub, math::add, math::deep::mul];
    assert_eq!(all.len(), 3);
    let qualified = toolwright_core::tools![sub];
    assert_eq!(qualified.len(), 1);
}

//! Registering one tool by value, and calling the fn directly.
use toolwright_core::{ToolSet, tool};

/// Add.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut set = ToolSet::new();
    set.register_tool(add {}).unwrap();
    assert_eq!(set.len(), 1);
    assert_eq!(add(1, 2).await, 3);
}

//! `crate = path` for crates that re-export toolwright_core.
mod reexport {
    pub use toolwright_core as inner;
}

use reexport::inner::tool;

/// Add.
#[tool(crate = reexport::inner)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Add, path as a string.
#[tool(crate = "reexport::inner")]
async fn add2(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    let set = reexport::inner::tools![add, add2];
    assert_eq!(set.len(), 2);
}

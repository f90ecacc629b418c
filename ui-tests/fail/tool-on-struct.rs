use toolwright_core::tool;

/// Not a fn.
#[tool]
struct Calculator;

fn main() {}

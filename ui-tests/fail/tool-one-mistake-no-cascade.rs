use toolwright_core::{ToolSet, tool, tools};

/// Add two numbers.
#[tool(timeout = "soon")]
async fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {
    // The tool is still usable as written, so the only error is the timeout.
    let _set: ToolSet = tools![add];
    let _direct = add(1.0, 2.0);
}

use toolwright_core::tool;

// Every mistake is reported in one build.
#[tool(timeout = "0s", exposure = "deferred", nmae = "x")]
fn add(a: &str, (b, c): (f64, f64)) -> f64 {
    let _ = a;
    b + c
}

fn main() {}

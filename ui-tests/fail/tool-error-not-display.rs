use toolwright_core::tool;

struct Oops;

/// May fail.
#[tool]
async fn risky() -> Result<String, Oops> {
    Err(Oops)
}

fn main() {}

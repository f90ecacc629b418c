use toolwright_core::tool;

fn check(progress: u64) -> bool {
    progress < 100
}

/// Work.
#[tool(validate_progress = check)]
async fn work() {}

fn main() {}

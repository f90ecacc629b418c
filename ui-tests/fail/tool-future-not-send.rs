use toolwright_core::tool;
use std::rc::Rc;

async fn tick() {}

/// Count.
#[tool]
async fn count() -> usize {
    let shared = Rc::new(1);
    tick().await;
    *shared
}

fn main() {}

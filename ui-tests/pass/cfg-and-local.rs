//! `#[cfg]` on a tool reaches the generated items; tools can be local items.
use toolwright_core::{tool, toolbox, tools};
use std::sync::Arc;

/// Only in a configuration that is never set.
#[tool]
#[cfg(any())]
async fn never() {}

/// Compiled only when the `never` tool is not.
#[cfg(not(any()))]
#[tool]
async fn always() {}

struct Service;

#[toolbox]
impl Service {
    /// Present.
    #[tool]
    async fn present(&self) {}

    /// Absent.
    #[tool]
    #[cfg(any())]
    async fn absent(&self) {}
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    /// A tool declared inside a fn.
    #[tool]
    async fn local(#[arg(default)] n: u8) -> u8 {
        n + 1
    }

    let set = tools![always, local];
    assert_eq!(set.len(), 2);
    assert_eq!(Arc::new(Service).into_toolset().len(), 1);
    assert_eq!(local(1).await, 2);
}

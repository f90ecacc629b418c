//! Support for the code `#[tool]` and `tools![]` generate.

pub use agent_macros::tools_impl;
pub use async_trait::async_trait;
pub use schemars;
pub use serde;
pub use serde_json;

use crate::{Tool, ToolSet};
use std::sync::Arc;

/// Builds the set `tools![]` names. The macro has already proven the names valid and
/// distinct, so registration cannot fail for them.
pub fn toolset<const N: usize>(tools: [Arc<dyn Tool>; N]) -> ToolSet {
    let mut set = ToolSet::new();
    for tool in tools {
        if let Err(error) = set.register_arc(tool) {
            unreachable!("tools![] registered a tool it had checked: {error}");
        }
    }
    set
}

/// Compares tool names in constant evaluation, for `tools![]`'s duplicate check.
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Implemented by every type `#[tool]` generates; `tools![]` reads the name at compile
/// time through it.
pub trait StaticTool: Tool + Sized + 'static {
    /// The tool's name.
    const NAME: &'static str;
    /// The tool's value.
    fn instance() -> Self;
}

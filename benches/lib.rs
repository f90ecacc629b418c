//! Tools shared by the benchmarks.

use agent_core::{AgentResult, ToolContext, ToolSet, TypedTool};
use async_trait::async_trait;

/// A no-op tool with a name chosen at run time, for sets of many tools.
pub struct Noop(String);

#[async_trait]
impl TypedTool for Noop {
    type Args = ();
    type Output = &'static str;

    fn name(&self) -> &str {
        &self.0
    }

    fn description(&self) -> &'static str {
        "Does nothing, quickly."
    }

    async fn call_typed(&self, _args: (), _ctx: &ToolContext) -> AgentResult<&'static str> {
        Ok("ok")
    }
}

/// The name of the `i`th tool of [`noop_set`].
pub fn noop_name(i: usize) -> String {
    format!("noop_{i}")
}

/// A set of `n` no-op tools named `noop_0` .. `noop_{n-1}`.
pub fn noop_set(n: usize) -> ToolSet {
    let mut set = ToolSet::new();
    for i in 0..n {
        set.register_tool(Noop(noop_name(i)))
            .expect("names are distinct and valid");
    }
    set
}

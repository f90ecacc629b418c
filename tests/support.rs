//! Integration tests of the public API; each test file is its own target.

/// The guides in docs/: each Rust fragment in them compiles, and runs unless marked
/// `no_run`, as a doctest of this crate. (The README is toolwright-core's crate
/// documentation, checked there.)
#[cfg(doctest)]
pub mod guides {
    #[doc = include_str!("../docs/getting-started.md")]
    pub struct GettingStarted;
    #[doc = include_str!("../docs/tools.md")]
    pub struct Tools;
    #[doc = include_str!("../docs/agents.md")]
    pub struct Agents;
    #[doc = include_str!("../docs/observability.md")]
    pub struct Observability;
    #[doc = include_str!("../docs/mcp-deployment.md")]
    pub struct McpDeployment;
}

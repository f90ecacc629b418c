//! [`ToolConfig`]: the runtime's settings for running tools.

use serde::{Deserialize, Serialize};

/// How the runtime runs tools. Start from `ToolConfig::default()` and change fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolConfig {
    /// Timeout for tools that do not set their own, in milliseconds.
    pub default_tool_timeout_ms: u64,
    /// At most this many tool calls run at once.
    pub max_concurrency: usize,
    /// Results longer than this many characters keep their head and tail around a
    /// notice of what was cut. `None`: no limit.
    pub max_output_chars: Option<usize>,
    /// Destructive tools that do not state an approval policy need approval.
    pub destructive_requires_approval: bool,
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self {
            default_tool_timeout_ms: 30_000,
            max_concurrency: 8,
            max_output_chars: None,
            destructive_requires_approval: true,
        }
    }
}

//! [`ToolLimits`]: the semaphores a tool's own concurrency rules ask for, built once for
//! a whole set so that the tools of one exclusive group share one.

use crate::model::set::ToolSet;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The semaphores a tool's calls take because of its own [`ToolConcurrency`] rules.
/// Take them in field order (group, then the tool's own), then any global limit: one
/// fixed order for every call is what keeps the limits free of deadlock.
///
/// [`ToolConcurrency`]: crate::model::tool::ToolConcurrency
#[derive(Debug, Clone, Default)]
pub struct ToolLimits {
    /// One permit, shared by every tool of the tool's exclusive group, if it names one.
    pub group: Option<Arc<Semaphore>>,
    /// The tool's own `max_in_flight` (at least 1), if it sets one.
    pub per_tool: Option<Arc<Semaphore>>,
}

impl ToolLimits {
    /// Every tool's limits, in the set's order.
    pub fn of_each(tools: &ToolSet) -> Vec<ToolLimits> {
        let mut groups: HashMap<String, Arc<Semaphore>> = HashMap::new();
        tools
            .iter()
            .map(|tool| {
                let rules = tool.concurrency();
                ToolLimits {
                    group: rules.exclusive_group.map(|group| {
                        groups
                            .entry(group)
                            .or_insert_with(|| Arc::new(Semaphore::new(1)))
                            .clone()
                    }),
                    per_tool: rules.max_in_flight.map(|limit| {
                        Arc::new(Semaphore::new(limit.clamp(1, Semaphore::MAX_PERMITS)))
                    }),
                }
            })
            .collect()
    }
}

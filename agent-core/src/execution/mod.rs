//! Layer 2, execution: running tool calls with every policy, one call or one turn's.

pub(crate) mod control;
pub(crate) mod events;
pub(crate) mod executor;
pub(crate) mod inflight;
pub(crate) mod pipeline;

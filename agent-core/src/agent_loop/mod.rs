//! Layer 3, the agent loop: model → tools → model, its runs, their storage and review.

pub(crate) mod agent;
pub(crate) mod checkpoint;
pub(crate) mod journal;
pub(crate) mod llm;
pub(crate) mod review;
pub(crate) mod run;
pub(crate) mod seal;
pub(crate) mod store;
pub(crate) mod stream;
pub mod testing;

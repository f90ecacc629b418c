//! Layer 1, the model: what a tool is, what a call carries, what a model says. Nothing
//! here runs a call; the layers above import from here, never the reverse.

pub(crate) mod args;
pub(crate) mod compose;
pub(crate) mod config;
pub(crate) mod content;
pub(crate) mod context;
pub(crate) mod dialect;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod llm_error;
pub(crate) mod locate;
pub(crate) mod message;
pub(crate) mod outcome;
pub(crate) mod pending;
pub(crate) mod principal;
pub(crate) mod registry;
pub(crate) mod retry;
pub(crate) mod schema;
pub(crate) mod search;
pub(crate) mod set;
pub(crate) mod tool;
pub(crate) mod truncate;
pub(crate) mod typed;
pub(crate) mod usage;

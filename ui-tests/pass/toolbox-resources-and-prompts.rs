//! `#[resource]` and `#[prompt]` methods of a `#[toolbox]` impl, and registered free
//! ones, in a crate that forbids and denies the lints generated code could raise.
#![forbid(
    dead_code,
    unused_imports,
    unused_mut,
    unused_variables,
    non_camel_case_types,
    non_snake_case,
    missing_docs,
    unused_results,
    unreachable_pub
)]
#![deny(
    unused_qualifications,
    unused,
    missing_debug_implementations,
    nonstandard_style,
    rust_2018_idioms,
    unused_lifetimes,
    single_use_lifetimes,
    let_underscore_drop,
    elided_lifetimes_in_paths
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use toolwright_core::{ToolContext, toolbox};
use toolwright_mcp::prompts::{PromptMessage, PromptSet};
use toolwright_mcp::resources::{FeatureError, ResourceSet};
use toolwright_mcp::{prompt, resource};

/// Counts what it serves.
#[derive(Debug, Default)]
struct Counter {
    served: AtomicU64,
}

#[toolbox(register)]
impl Counter {
    /// How many were served before.
    #[resource(uri = "counter://served", title = "Served")]
    async fn served(&self, ctx: &ToolContext) -> String {
        let _ = ctx.session_id();
        self.served.fetch_add(1, Ordering::SeqCst).to_string()
    }

    /// A number, counted.
    #[resource(template = "counter://numbers/{n}")]
    async fn number(&self, n: u64) -> Result<String, FeatureError> {
        let _ = self.served.fetch_add(1, Ordering::SeqCst);
        Ok(n.to_string())
    }

    /// Compiled out: no item, no registration.
    #[cfg(any())]
    #[resource(uri = "counter://never")]
    async fn never(&self) -> String {
        String::new()
    }

    /// Asks to count.
    #[toolwright_mcp::prompt(name = "count")]
    async fn count(
        &self,
        /// Up to what.
        to: Option<u32>,
    ) -> Vec<PromptMessage> {
        vec![PromptMessage::user(format!("Count to {}.", to.unwrap_or(3)))]
    }
}

/// A free, registered resource.
#[resource(register, uri = "config://app")]
async fn settings() -> String {
    "debug = false".into()
}

/// A free, registered prompt.
#[prompt(register)]
async fn review(
    /// The code.
    code: String,
) -> String {
    format!("Review:\n{code}")
}

fn main() {
    let counter = Arc::new(Counter::default());
    let resources = Arc::clone(&counter).into_resources();
    assert_eq!(resources.resources().len(), 1);
    assert_eq!(resources.templates().len(), 1);
    assert_eq!(counter.into_prompts().len(), 1);

    let registered = ResourceSet::registered().unwrap();
    assert!(registered.resource("config://app").is_some());
    assert!(registered.resource("counter://served").is_some());
    assert!(registered.template("counter://numbers/{n}").is_some());
    assert!(registered.resource("counter://never").is_none());
    let registered = PromptSet::registered().unwrap();
    assert!(registered.get("review").is_some());
    assert!(registered.get("count").is_some());
}

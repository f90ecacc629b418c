//! The macros of `agent-core`: `#[tool]`, `#[toolbox]` and `tools![]`. Depend on
//! `agent-core`, which re-exports them and documents them.
//!
//! The pipeline follows thiserror and serde_derive: `attr` parses the vocabulary,
//! `ast` models the fn, `valid` checks every rule (all errors collected), `expand`
//! generates the impls, `fallback` keeps an invalid fn compiling, `tools` and `toolbox`
//! build sets, `docs` reads doc comments, `spans` keeps generated code cheap to rebuild.

mod ast;
mod attr;
mod docs;
mod errors;
mod expand;
mod fallback;
mod spans;
mod toolbox;
mod tools;
mod valid;

use proc_macro::TokenStream;

/// Turns an `async fn` into a tool. See `agent_core::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools. See `agent_core::toolbox`.
#[proc_macro_attribute]
pub fn toolbox(args: TokenStream, item: TokenStream) -> TokenStream {
    toolbox::expand(args.into(), item.into()).into()
}

/// The implementation of `tools![]`.
#[doc(hidden)]
#[proc_macro]
pub fn tools_impl(input: TokenStream) -> TokenStream {
    tools::expand(input.into()).into()
}

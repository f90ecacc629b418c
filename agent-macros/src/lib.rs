//! The macros of `agent-core`. Depend on `agent-core`, which re-exports them.

use proc_macro::TokenStream;

/// Turns an `async fn` into a tool. See `agent_core`'s documentation.
#[proc_macro_attribute]
pub fn tool(_args: TokenStream, item: TokenStream) -> TokenStream {
    item
}

/// The implementation of `tools![]`.
#[doc(hidden)]
#[proc_macro]
pub fn tools_impl(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}

//! The macros of `toolwright-core`: `#[tool]`, `#[toolbox]` and `tools![]`. Depend on
//! `toolwright-core`, which re-exports them and documents them.
//!
//! The pipeline follows thiserror and serde_derive: `attr` parses the vocabulary,
//! `ast` models the fn, `valid` checks every rule (all errors collected in `errors`),
//! `expand` generates the impls, `fallback` keeps an invalid fn compiling, `tools` and
//! `toolbox` build sets, `docs` reads doc comments, `spans` keeps generated code cheap
//! to rebuild. Imports only point to an earlier stage (a test below keeps it so).

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

/// Turns an `async fn` into a tool. See `toolwright_core::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an impl block into tools. See `toolwright_core::toolbox`.
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

/// The modules in reading order: each imports only modules of an earlier layer, so the
/// crate reads top-down (parse, validate, expand, entry points).
#[cfg(test)]
mod layers {
    /// Each module with its layer and its source.
    const MODULES: &[(&str, u8, &str)] = &[
        ("errors", 0, include_str!("errors.rs")),
        ("attr", 1, include_str!("attr.rs")),
        ("ast", 1, include_str!("ast.rs")),
        ("docs", 1, include_str!("docs.rs")),
        ("spans", 1, include_str!("spans.rs")),
        ("valid", 2, include_str!("valid.rs")),
        // What an invalid tool expands to: below `expand`, which falls back to it.
        ("fallback", 2, include_str!("fallback.rs")),
        ("expand", 3, include_str!("expand.rs")),
        ("tools", 4, include_str!("tools.rs")),
        ("toolbox", 4, include_str!("toolbox.rs")),
    ];

    fn layer(module: &str) -> u8 {
        MODULES
            .iter()
            .find(|(name, ..)| *name == module)
            .map(|(_, layer, _)| *layer)
            .unwrap_or_else(|| panic!("module `{module}` is missing from the layer table"))
    }

    #[test]
    fn every_import_points_to_an_earlier_layer() {
        for (name, own, source) in MODULES {
            for (_, rest) in source
                .match_indices("crate::")
                .map(|(i, _)| source.split_at(i + 7))
            {
                let imported: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if imported.is_empty() {
                    continue;
                }
                assert!(
                    layer(&imported) < *own,
                    "`{name}` (layer {own}) imports `{imported}` (layer {}): imports must point \
                     to an earlier layer",
                    layer(&imported)
                );
            }
        }
    }
}

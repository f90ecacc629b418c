//! The macros of `toolwright-core` (`#[tool]`, `#[toolbox]`, `tools![]`) and of
//! `toolwright-mcp` (`#[resource]`, `#[prompt]`, `resources![]`, `prompts![]`). Depend on
//! those crates, which re-export them and document them.
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
mod prompt;
mod resource;
mod resource_fn;
mod resource_sets;
mod spans;
mod toolbox;
mod tools;
// The URI template parser of toolwright-mcp (this file links to it), so that a
// `#[resource(template = ...)]` is checked at compile time by the rules the server
// parses it with. The macros use only its parser.
#[allow(dead_code)]
mod uri_template;
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

/// Turns an `async fn` into an MCP resource (`uri = "..."`) or resource template
/// (`template = "..."`). See `toolwright_mcp::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(args.into(), item.into()).into()
}

/// Turns an `async fn` into an MCP prompt. See `toolwright_mcp::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(args.into(), item.into()).into()
}

/// The implementation of `resources![]`.
#[doc(hidden)]
#[proc_macro]
pub fn resources_impl(input: TokenStream) -> TokenStream {
    resource_sets::resources(input.into()).into()
}

/// The implementation of `prompts![]`.
#[doc(hidden)]
#[proc_macro]
pub fn prompts_impl(input: TokenStream) -> TokenStream {
    resource_sets::prompts(input.into()).into()
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
        // A toolbox's methods may be resources and prompts: above them.
        ("toolbox", 6, include_str!("toolbox.rs")),
        ("uri_template", 0, include_str!("uri_template.rs")),
        // Shares the tag checks of `valid` and the runner choice of `expand`.
        ("resource_fn", 4, include_str!("resource_fn.rs")),
        ("resource", 5, include_str!("resource.rs")),
        ("prompt", 5, include_str!("prompt.rs")),
        ("resource_sets", 6, include_str!("resource_sets.rs")),
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

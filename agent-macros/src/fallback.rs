//! What an invalid tool expands to: the user's fn as written (parameter attributes
//! removed, so rustc does not trip on them) and, for free fns, the tool type with impls
//! whose bodies are unreachable. Uses of the tool elsewhere (`tools![add]`,
//! `register_tool(add {})`) still compile, so the user sees their one mistake and not a
//! cascade of follow-on errors.

use crate::spans::macro_ident;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Visibility};

/// The stand-in impls of an invalid free tool.
pub fn free_tool(krate: &TokenStream, ident: &Ident, vis: &Visibility) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    // Named like the fn and perhaps never used: the macro's own name (see `macro_made`).
    let ident = macro_ident(ident);
    let doc = format!("The tool `{name}`, which did not compile.");
    quote! {
        #[doc = #doc]
        #[derive(Debug)]
        #vis struct #ident {}

        #[doc(hidden)]
        const _: () = {
            #[#p::async_trait]
            impl #krate::Tool for #ident {
                fn name(&self) -> &'static str { #name }
                fn description(&self) -> &'static str { "" }
                fn schema(&self) -> #p::serde_json::Value { #p::serde_json::Value::Null }
                async fn call(
                    &self,
                    _: &#p::serde_json::Value,
                    _: &#krate::ToolContext,
                ) -> #krate::AgentResult<::std::vec::Vec<#krate::Content>> {
                    ::core::unreachable!("this #[tool] did not compile")
                }
            }

            impl #p::StaticTool for #ident {
                const NAME: &'static str = #name;
                const SPEC: &'static #p::ToolSpec = {
                    static SPEC: #p::ToolSpec = #p::ToolSpec::new(
                        #name, "", "", "", &[], &[], &[], #p::no_output_schema,
                    );
                    &SPEC
                };
                const CALL: #p::CallFn = #p::broken_call;
            }
        };
    }
}

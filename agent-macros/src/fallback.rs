//! What an invalid tool expands to: the user's fn as written (parameter attributes
//! removed, so rustc does not trip on them) and, for free fns, the tool type, a tool
//! that answers every call with an error. Uses of the tool elsewhere (`tools![add]`,
//! `register_tool(add {})`) still compile, so the user sees their one mistake and not a
//! cascade of follow-on errors.

use crate::spans::macro_ident;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, Visibility};

/// The stand-in tool type of an invalid free tool, run by toolwright-core's `Broken`.
pub fn free_tool(krate: &TokenStream, ident: &Ident, vis: &Visibility) -> TokenStream {
    let p = quote!(#krate::__private);
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    // The declaration's name, empty origin and version, and an empty description.
    let decl = format!("{name}\0\0\0");
    // Named like the fn and perhaps never used: the macro's own name (see `macro_made`).
    let ident = macro_ident(ident);
    let doc = format!("The tool `{name}`, which did not compile.");
    quote! {
        #[doc = #doc]
        #[derive(Debug)]
        #vis struct #ident {}

        #[doc(hidden)]
        const _: () = {
            impl #p::ToolRoute for #ident {
                type Route = #p::ViaFn<#p::Broken>;
            }
            impl #p::RunTool<#ident> for #p::Broken {
                type Args = ();
                const DECL: &'static #p::Decl<()> = &#p::Decl(#decl, ());
                fn run((): (), _: &#krate::ToolContext) -> #p::CallFuture<'_> {
                    #p::broken_call()
                }
            }
        };
    }
}

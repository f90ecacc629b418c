//! `#[prompt]`: an async fn as a `Prompt` of toolwright-mcp. Its documented parameters
//! are the prompt's arguments (an `Option` is optional, anything else required); each
//! arrives as a string and is read into the parameter's type.

use crate::errors::Errors;
use crate::resource_fn::{
    self, FeatureAttr, FeatureFn, Member, MemberKind, Method, Register, last_ident, type_args,
};
use crate::spans::spanned_at;
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItemFn, LitStr, Path};

/// The keys of `#[prompt(...)]`.
#[derive(Debug, Default, FromMeta)]
struct PromptAttr {
    /// `name = "..."`: the prompt's name (default: the fn's).
    name: Option<LitStr>,
    /// `title = "..."`: a human-readable title.
    title: Option<LitStr>,
    /// `scopes = ["admin"]`: what a caller's principal needs to see and get it.
    scopes: Option<Vec<LitStr>>,
    /// `icons = ["https://..."]`: icons a client may show beside it.
    icons: Option<Vec<LitStr>>,
    /// `tags = ["docs"]`: labels of a registered item, for filtering the registry.
    tags: Option<Vec<LitStr>>,
    /// `register`: add it to the binary's registry (`PromptSet::registered`).
    register: Option<SpannedValue<Register>>,
    /// `crate = path`: where toolwright_mcp is, for crates that re-export it.
    #[darling(rename = "crate")]
    krate: Option<Path>,
}

impl FeatureAttr for PromptAttr {
    fn register(&self) -> Option<&SpannedValue<Register>> {
        self.register.as_ref()
    }

    fn tags(&self) -> Option<&Vec<LitStr>> {
        self.tags.as_ref()
    }

    fn krate(&self) -> Option<&Path> {
        self.krate.as_ref()
    }
}

/// Expands `#[prompt(...)]` on a free fn.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let (attr, _) = resource_fn::attr::<PromptAttr>(args, &mut errors);
    let tags = resource_fn::check_tags(&attr, "prompt", &mut errors);
    let p = resource_fn::private(attr.krate.as_ref());
    let feature = match resource_fn::parse(item.clone(), "prompt", &mut errors) {
        Ok(feature) => feature,
        Err(e) => return resource_fn::unparsed(item, e, errors),
    };
    let made = build(&attr, &feature, &p, &mut errors);
    match (errors.finish(), made) {
        (Ok(()), Some((imp, name))) => {
            let ty = resource_fn::item_type(&feature, "prompt", &format!(" (`{name}`)"));
            let ident = feature.item_ident();
            let registration = attr.register.as_ref().map(|register| {
                MemberKind::Prompt.registration(
                    &p,
                    register.span(),
                    &name,
                    &tags,
                    quote!(#ident {}),
                )
            });
            let add = resource_fn::add_stateless(MemberKind::Prompt, &feature, &p);
            let impls = quote! {
                #imp
                impl #p::PromptItem for #ident {
                    const KEY: &'static str = #name;
                    fn add_to(self, set: &mut #p::PromptSet) {
                        #add
                    }
                }
            };
            resource_fn::emit_free(&feature, ty, impls, registration)
        }
        (result, _) => resource_fn::fallback(
            &feature,
            "prompt",
            "PromptItem",
            "PromptSet",
            result.err().unwrap_or_default(),
            &p,
        ),
    }
}

/// `#[prompt(...)]` on a method of a `#[toolbox]` impl, whose attribute `args` the
/// toolbox took off: the item type and its impl, or `None` with the errors reported.
pub fn method(
    args: TokenStream,
    method: &mut ImplItemFn,
    info: Method,
    errors: &mut Errors,
) -> Option<Member> {
    let (attr, _, p, feature) =
        resource_fn::method_parts::<PromptAttr>(args, method, "prompt", info, errors);
    let (imp, name) = build(&attr, &feature, &p, errors)?;
    let ty = resource_fn::item_type(&feature, "prompt", &format!(" `{name}`"));
    let key_span = match &attr.name {
        Some(name) => name.span(),
        None => feature.func.sig.ident.span(),
    };
    Some(Member {
        item_ty: feature.item_ident(),
        kind: MemberKind::Prompt,
        key: name,
        key_span,
        ty,
        imp,
        p,
        cfgs: feature.cfgs(),
    })
}

/// The `Prompt` impl for the item type, and the prompt's name.
fn build(
    attr: &PromptAttr,
    feature: &FeatureFn,
    p: &TokenStream,
    errors: &mut Errors,
) -> Option<(TokenStream, String)> {
    let output = resource_fn::output(&feature.func, "prompt", p, errors);
    let scopes = resource_fn::scopes(attr.scopes.as_ref(), errors);
    let icons = resource_fn::icons(attr.icons.as_ref(), errors);
    let mut args = Vec::new();
    let mut reads = Vec::new();
    let mut arguments = Vec::new();
    for param in &feature.params {
        let ident = &param.ident;
        if param.ctx {
            args.push(quote!(__ctx));
            continue;
        }
        let name = ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
        let ty = &param.ty;
        let optional = last_ident(ty).is_some_and(|i| i == "Option") && type_args(ty).len() == 1;
        let read = if optional {
            let inner = type_args(ty)[0];
            quote_spanned!(inner.span()=> #p::prompt_arg::<#inner>(__args, #name))
        } else {
            let read = quote_spanned!(ty.span()=> #p::prompt_arg::<#ty>(__args, #name));
            quote!(#p::required(#read, #name))
        };
        // Not the parameter's own name, which may be the fn's.
        let local = quote::format_ident!("__arg{}", args.len());
        reads.push(resource_fn::read_arg(&local, ty, read, p));
        args.push(quote!(#local));
        let description = match &param.doc {
            Some(doc) => quote!(::core::option::Option::Some(#doc)),
            None => quote!(::core::option::Option::None),
        };
        arguments.push(quote!((#name, #description, !#optional)));
    }

    let output = output?;
    let fn_name = feature.func.sig.ident.to_string();
    let name = attr
        .name
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| fn_name.strip_prefix("r#").unwrap_or(&fn_name).to_owned());
    if name.is_empty() {
        errors.error(&attr.name, "a prompt's name cannot be empty");
    }
    let title = match attr.title.as_ref() {
        Some(title) => quote!(::core::option::Option::Some(#title)),
        None => quote!(::core::option::Option::None),
    };
    let description = resource_fn::description_str(&feature.func);
    let span = output.value.span();
    // The whole call at the return type, so that an unmet bound is reported there.
    let p_at = spanned_at(p.clone(), span);
    let messages = quote_spanned!(span=>
        ::core::result::Result::Ok(#p_at::IntoMessages::into_messages(__value)));
    let call = resource_fn::call(feature, &args, &output, messages, p);
    let ident = feature.item_ident();
    let complete = resource_fn::complete_method(&feature.params, quote!(#p::PromptArguments), p);
    let (get, run) = resource_fn::run_method(
        feature,
        "RunGet",
        "get",
        &[
            ("__args", quote!(#p::PromptArguments)),
            ("__ctx", quote!(#p::ToolContext)),
        ],
        quote!(#p::GetResult),
        quote!(#(#reads)* #call),
        p,
    );
    let imp = quote! {
        impl #p::PromptFn for #ident {
            fn decl(&self) -> &'static #p::PromptDecl {
                static DECL: #p::PromptDecl = #p::PromptDecl::new(
                    #name,
                    #title,
                    #description,
                    &[#(#arguments),*],
                    #scopes,
                    #icons,
                );
                &DECL
            }
            #get
            #complete
        }
        #run
    };
    Some((imp, name))
}

//! `#[resource(uri = "...")]` and `#[resource(template = "...")]`: an async fn as a
//! `Resource` or a `ResourceTemplate` of toolwright-mcp. A template's variables are the
//! fn's parameters, matched by name at compile time and parsed from the URI at a read;
//! the template is checked by the very parser the server uses.

use crate::errors::Errors;
use crate::resource_fn::{
    self, FeatureAttr, FeatureFn, Member, MemberKind, Method, Output, Register, last_ident,
    type_args,
};
use crate::spans::spanned_at;
use crate::uri_template::UriTemplate;
use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ImplItemFn, LitFloat, LitInt, LitStr, Path, Type};

/// The keys of `#[resource(...)]`.
#[derive(Debug, Default, FromMeta)]
struct ResourceAttr {
    /// `uri = "config://app"`: a resource at one URI.
    uri: Option<LitStr>,
    /// `template = "file:///{+path}"`: every URI the template matches.
    template: Option<LitStr>,
    /// `name = "..."`: the listed name (default: the fn's).
    name: Option<LitStr>,
    /// `title = "..."`: a human-readable title.
    title: Option<LitStr>,
    /// `mime_type = "..."`: the contents' MIME type.
    mime_type: Option<LitStr>,
    /// `size = 1024`: the size in bytes of a resource at one URI.
    size: Option<LitInt>,
    /// `audience = ["user", "assistant"]`: whom it is meant for.
    audience: Option<Vec<LitStr>>,
    /// `priority = 0.8`: how much it matters, from 0 to 1.
    priority: Option<LitFloat>,
    /// `icons = ["https://..."]`: icons a client may show beside it.
    icons: Option<Vec<LitStr>>,
    /// `scopes = ["files:read"]`: what a caller's principal needs to see and read it.
    scopes: Option<Vec<LitStr>>,
    /// `tags = ["docs"]`: labels of a registered item, for filtering the registry.
    tags: Option<Vec<LitStr>>,
    /// `register`: add it to the binary's registry (`ResourceSet::registered`).
    register: Option<SpannedValue<Register>>,
    /// `crate = path`: where toolwright_mcp is, for crates that re-export it.
    #[darling(rename = "crate")]
    krate: Option<Path>,
}

impl FeatureAttr for ResourceAttr {
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

/// What the fn's value is served as.
enum Kind {
    /// Text or `ResourceContent`s, as they are.
    AsIs,
    /// Bytes, base64-encoded.
    Bytes,
    /// Anything else, as JSON.
    Json,
}

fn kind(ty: &Type) -> Kind {
    if let Type::Reference(r) = ty {
        return match &*r.elem {
            Type::Slice(s) if is_u8(&s.elem) => Kind::Bytes,
            elem if last_ident(elem).is_some_and(|i| i == "str") => Kind::AsIs,
            _ => Kind::Json,
        };
    }
    if let Type::Array(a) = ty
        && is_u8(&a.elem)
    {
        return Kind::Bytes;
    }
    let Some(ident) = last_ident(ty) else {
        return Kind::Json;
    };
    let args = type_args(ty);
    if ident == "String" || ident == "ResourceContent" {
        Kind::AsIs
    } else if ident == "Vec" && args.first().is_some_and(|t| is_u8(t)) {
        Kind::Bytes
    } else if ident == "Vec"
        && args
            .first()
            .and_then(|t| last_ident(t))
            .is_some_and(|i| i == "ResourceContent")
    {
        Kind::AsIs
    } else if ident == "Bytes" {
        Kind::Bytes
    } else {
        Kind::Json
    }
}

fn is_u8(ty: &Type) -> bool {
    last_ident(ty).is_some_and(|i| i == "u8")
}

/// What `#[resource]` makes of a fn or a method: the impl of `Resource` or
/// `ResourceTemplate` for the item type, and where it is read.
struct Made {
    /// The trait impl.
    imp: TokenStream,
    /// Its URI or template.
    key: LitStr,
    /// Whether it is a template.
    template: bool,
}

impl Made {
    /// What it is and where, for the item type's doc.
    fn what(&self) -> (&'static str, String) {
        if self.template {
            ("resource template", format!(" `{}`", self.key.value()))
        } else {
            ("resource", format!(" at `{}`", self.key.value()))
        }
    }

    fn kind(&self) -> MemberKind {
        if self.template {
            MemberKind::Template
        } else {
            MemberKind::Resource
        }
    }
}

/// Expands `#[resource(...)]` on a free fn.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    // When the keys do not parse, what they lack is not reported too.
    let (attr, attr_ok) = resource_fn::attr::<ResourceAttr>(args, &mut errors);
    let tags = resource_fn::check_tags(&attr, "resource", &mut errors);
    let p = resource_fn::private(attr.krate.as_ref());
    let feature = match resource_fn::parse(item.clone(), "resource", &mut errors) {
        Ok(feature) => feature,
        Err(e) => return resource_fn::unparsed(item, e, errors),
    };
    let made = build(&attr, attr_ok, &feature, &p, &mut errors);
    match (errors.finish(), made) {
        (Ok(()), Some(made)) => {
            let (what, detail) = made.what();
            let ty = resource_fn::item_type(&feature, what, &detail);
            let ident = feature.item_ident();
            let add = resource_fn::add_stateless(made.kind(), &feature, &p);
            let item = item_impl(&ident, &made.key, add, &p);
            let imp = &made.imp;
            let registration = attr.register.as_ref().map(|register| {
                made.kind().registration(
                    &p,
                    register.span(),
                    &made.key.value(),
                    &tags,
                    quote!(#ident {}),
                )
            });
            resource_fn::emit_free(&feature, ty, quote!(#imp #item), registration)
        }
        (result, _) => resource_fn::fallback(
            &feature,
            "resource",
            "ResourceItem",
            "ResourceSet",
            result.err().unwrap_or_default(),
            &p,
        ),
    }
}

/// `#[resource(...)]` on a method of a `#[toolbox]` impl, whose attribute `args` the
/// toolbox took off: the item type and its impl, or `None` with the errors reported.
pub fn method(
    args: TokenStream,
    method: &mut ImplItemFn,
    info: Method,
    errors: &mut Errors,
) -> Option<Member> {
    let (attr, attr_ok, p, feature) =
        resource_fn::method_parts::<ResourceAttr>(args, method, "resource", info, errors);
    let made = build(&attr, attr_ok, &feature, &p, errors)?;
    let (what, detail) = made.what();
    let ty = resource_fn::item_type(&feature, what, &detail);
    let kind = made.kind();
    Some(Member {
        item_ty: feature.item_ident(),
        kind,
        key: made.key.value(),
        key_span: made.key.span(),
        ty,
        imp: made.imp,
        p,
        cfgs: feature.cfgs(),
    })
}

/// The trait impl for a fixed URI or a template, as the keys say.
fn build(
    attr: &ResourceAttr,
    attr_ok: bool,
    feature: &FeatureFn,
    p: &TokenStream,
    errors: &mut Errors,
) -> Option<Made> {
    let output = resource_fn::output(&feature.func, "resource", p, errors);
    match (&attr.uri, &attr.template) {
        (Some(uri), None) => fixed(attr, uri, feature, output.as_ref(), p, errors),
        (None, Some(template)) => templated(attr, template, feature, output.as_ref(), p, errors),
        (Some(_), Some(template)) => {
            errors.error(
                template,
                "give a `#[resource]` either `uri = \"...\"` (one URI) or `template = \"...\"` (a URI template), not both",
            );
            None
        }
        (None, None) if !attr_ok => None,
        (None, None) => {
            let at = match &feature.method {
                Some(_) => feature.func.sig.ident.span(),
                None => Span::call_site(),
            };
            errors.error_at(
                at,
                "a `#[resource]` needs where it is read: `#[resource(uri = \"config://app\")]` or `#[resource(template = \"file:///{+path}\")]`",
            );
            None
        }
    }
}

/// The listing's keys beyond name, title, description and MIME type, as `InfoDecl`
/// calls; each bad value is reported at its literal. `fixed`: a resource at one URI (a
/// template names many, so it has no one size).
fn listing(attr: &ResourceAttr, fixed: bool, p: &TokenStream, errors: &mut Errors) -> TokenStream {
    let mut set = Vec::new();
    if let Some(size) = &attr.size {
        if !fixed {
            errors.error(
                size,
                "a template has no one size: its URIs name many resources; give `size` to a `#[resource(uri = \"...\")]`",
            );
        } else {
            match size.base10_parse::<u64>() {
                Ok(bytes) => set.push(quote!(.size(#bytes))),
                Err(_) => errors.error(size, "`size` is a number of bytes, e.g. `size = 1024`"),
            }
        }
    }
    if let Some(audience) = &attr.audience {
        let mut each = Vec::new();
        for who in audience {
            match who.value().as_str() {
                "user" => each.push(quote!(#p::Audience::User)),
                "assistant" => each.push(quote!(#p::Audience::Assistant)),
                other => errors.error(
                    who,
                    format!("`{other}` is not an audience: write `\"user\"` (the person) or `\"assistant\"` (the model)"),
                ),
            }
        }
        set.push(quote!(.audience(&[#(#each),*])));
    }
    if let Some(priority) = &attr.priority {
        match priority.base10_parse::<f32>() {
            Ok(value) if (0.0..=1.0).contains(&value) => set.push(quote!(.priority(#value))),
            _ => errors.error(
                priority,
                "`priority` is from 0.0 (optional) to 1.0 (required), e.g. `priority = 0.8`",
            ),
        }
    }
    if attr.icons.is_some() {
        let icons = resource_fn::icons(attr.icons.as_ref(), errors);
        set.push(quote!(.icons(#icons)));
    }
    quote!(#(#set)*)
}

/// The listed info, with the MIME type defaulted from what the fn returns, as an
/// `InfoDecl` expression: plain data, built at the first listing.
fn info(
    attr: &ResourceAttr,
    feature: &FeatureFn,
    kind: &Kind,
    listing: &TokenStream,
    p: &TokenStream,
) -> TokenStream {
    let fn_name = feature.func.sig.ident.to_string();
    let name = attr
        .name
        .as_ref()
        .map(LitStr::value)
        .unwrap_or_else(|| fn_name.strip_prefix("r#").unwrap_or(&fn_name).to_owned());
    let title = attr.title.as_ref().map(|title| quote!(.title(#title)));
    let description = resource_fn::description_lit(&feature.func).map(|d| quote!(.description(#d)));
    let mime = attr
        .mime_type
        .as_ref()
        .map(LitStr::value)
        .or_else(|| match kind {
            Kind::Json => Some("application/json".to_owned()),
            Kind::Bytes => Some("application/octet-stream".to_owned()),
            Kind::AsIs => None,
        })
        .map(|mime| quote!(.mime_type(#mime)));
    quote!(#p::InfoDecl::named(#name) #title #description #mime #listing)
}

/// `fn decl()`: the item's declaration in a `static`.
fn decl(key: &LitStr, info: &TokenStream, scopes: &TokenStream, p: &TokenStream) -> TokenStream {
    quote! {
        fn decl(&self) -> &'static #p::ResourceDecl {
            static DECL: #p::ResourceDecl = #p::ResourceDecl::new(#key, #info, #scopes);
            &DECL
        }
    }
}

/// The fn's value as contents, the trait error (if any) at the return type.
fn contents(output: &Output, kind: &Kind, attr: &ResourceAttr, p: &TokenStream) -> TokenStream {
    let span = output.value.span();
    // The whole call at the return type, so that an unmet bound is reported there.
    let p = &spanned_at(p.clone(), span);
    let value = match kind {
        Kind::AsIs => quote!(__value),
        Kind::Json => quote_spanned!(span=> #p::Json(__value)),
        Kind::Bytes => {
            let mime = attr
                .mime_type
                .as_ref()
                .map(LitStr::value)
                .unwrap_or_else(|| "application/octet-stream".to_owned());
            quote_spanned!(span=> #p::Bytes(__value, #mime))
        }
    };
    quote_spanned!(span=> #p::IntoContents::into_contents(#value))
}

fn fixed(
    attr: &ResourceAttr,
    uri: &LitStr,
    feature: &FeatureFn,
    output: Option<&Output>,
    p: &TokenStream,
    errors: &mut Errors,
) -> Option<Made> {
    let mut args = Vec::new();
    for param in &feature.params {
        if param.ctx {
            args.push(quote!(__ctx));
        } else {
            errors.error(
                &param.ident,
                format!(
                    "the resource at `{}` has one URI, so it takes no parameter `{}`; for parameters read from the URI, use `template = \"...\"` with `{{{}}}` in it",
                    uri.value(),
                    param.ident,
                    param.ident
                ),
            );
        }
    }
    if uri.value().is_empty() {
        errors.error(
            uri,
            "a resource's URI cannot be empty: write one such as `config://app`",
        );
    }
    let listing = listing(attr, true, p, errors);
    let scopes = resource_fn::scopes(attr.scopes.as_ref(), errors);
    let output = output?;
    let kind = kind(&output.value);
    let info = info(attr, feature, &kind, &listing, p);
    let decl = decl(uri, &info, &scopes, p);
    let contents = contents(output, &kind, attr, p);
    let call = resource_fn::call(feature, &args, output, contents, p);
    let ident = feature.item_ident();
    let (read, run) = resource_fn::run_method(
        feature,
        "RunRead",
        "read",
        &[("__ctx", quote!(#p::ToolContext))],
        quote!(#p::ReadResult),
        call,
        p,
    );
    Some(Made {
        imp: quote! {
            impl #p::ResourceFn for #ident {
                #decl
                #read
            }
            #run
        },
        key: uri.clone(),
        template: false,
    })
}

fn templated(
    attr: &ResourceAttr,
    template: &LitStr,
    feature: &FeatureFn,
    output: Option<&Output>,
    p: &TokenStream,
    errors: &mut Errors,
) -> Option<Made> {
    let parsed = match UriTemplate::parse(&template.value()) {
        Ok(parsed) => parsed,
        Err(e) => {
            errors.error(template, format!("{e}"));
            return None;
        }
    };
    let variables: Vec<&str> = parsed.variables().collect();
    let mut args = Vec::new();
    let mut reads = Vec::new();
    for param in &feature.params {
        if param.ctx {
            args.push(quote!(__ctx));
            continue;
        }
        let name = param.ident.to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
        if !variables.contains(&name.as_str()) {
            errors.error(
                &param.ident,
                format!(
                    "the parameter `{name}` is not in the template `{}`, so no URI gives it a value; add `{{{name}}}` to the template or remove the parameter (its variables: {})",
                    template.value(),
                    list(&variables)
                ),
            );
            continue;
        }
        let ty = &param.ty;
        let read = quote_spanned!(ty.span()=> #p::uri_param::<#ty>(__params, #name));
        // Not the parameter's own name, which may be the fn's.
        let local = quote::format_ident!("__arg{}", args.len());
        reads.push(resource_fn::read_arg(&local, ty, read, p));
        args.push(quote!(#local));
    }
    for variable in &variables {
        if !feature.params.iter().any(|p| !p.ctx && p.ident == variable) {
            errors.error(
                template,
                format!(
                    "the template variable `{variable}` has no parameter of `{}` to receive it; add `{variable}: String` (or another type read with `FromStr`)",
                    feature.func.sig.ident
                ),
            );
        }
    }
    let listing = listing(attr, false, p, errors);
    let scopes = resource_fn::scopes(attr.scopes.as_ref(), errors);
    let output = output?;
    let kind = kind(&output.value);
    let info = info(attr, feature, &kind, &listing, p);
    let decl = decl(template, &info, &scopes, p);
    let contents = contents(output, &kind, attr, p);
    let call = resource_fn::call(feature, &args, output, contents, p);
    let ident = feature.item_ident();
    let complete = resource_fn::complete_method(&feature.params, quote!(#p::UriParams), p);
    let (read, run) = resource_fn::run_method(
        feature,
        "RunTemplate",
        "read",
        &[
            ("__params", quote!(#p::UriParams)),
            ("__ctx", quote!(#p::ToolContext)),
        ],
        quote!(#p::ReadResult),
        quote!(#(#reads)* #call),
        p,
    );
    Some(Made {
        imp: quote! {
            impl #p::TemplateFn for #ident {
                #decl
                #read
                #complete
            }
            #run
        },
        key: template.clone(),
        template: true,
    })
}

/// How `resources![]` takes the type: its key, and how it is added.
fn item_impl(ident: &Ident, key: &LitStr, add: TokenStream, p: &TokenStream) -> TokenStream {
    quote! {
        impl #p::ResourceItem for #ident {
            const KEY: &'static str = #key;
            fn add_to(self, set: &mut #p::ResourceSet) {
                #add
            }
        }
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

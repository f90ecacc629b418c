//! What `#[resource]`, `#[prompt]`, `resources![]` and `prompts![]` expand to. Not a
//! public API: it changes without notice.

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::OnceLock;
use toolwright_core::Content;

pub use crate::server::prompts::{
    Prompt, PromptArgument, PromptArguments, PromptMessage, PromptSet,
};
pub use crate::server::registry::{RegisteredPrompt, RegisteredResource};
pub use crate::server::resources::{
    Audience, FeatureError, Icon, Resource, ResourceContent, ResourceInfo, ResourceSet,
    ResourceTemplate,
};
pub use crate::server::uri_template::{UriParams, UriTemplate};
pub use toolwright_core::__private::{ConstMessage, inventory, same_name};
pub use toolwright_core::ToolContext;
pub use toolwright_macros::{prompts_impl, resources_impl};

/// A `#[resource]` type: where it is offered (its URI or template), and how it joins a
/// set.
pub trait ResourceItem: Sized {
    /// Its URI or URI template, compared by `resources![]` at compile time. Empty for a
    /// resource that did not compile.
    const KEY: &'static str;
    /// Adds it to `set`.
    fn add_to(self, set: &mut ResourceSet);
}

/// A `#[prompt]` type's name and how it joins a set.
pub trait PromptItem: Sized {
    /// Its name, compared by `prompts![]` at compile time. Empty for a prompt that did
    /// not compile.
    const KEY: &'static str;
    /// Adds it to `set`.
    fn add_to(self, set: &mut PromptSet);
}

/// Panics, in constant evaluation, when `keys[i]` equals an earlier key: two items of
/// one `resources![]` / `prompts![]` at one URI or name. `#[track_caller]` puts the
/// error at the repeated path.
#[track_caller]
pub const fn distinct_key(keys: &[&str], i: usize, what: &str) {
    let key = keys[i];
    if key.is_empty() {
        return;
    }
    let mut j = 0;
    while j < i {
        if same_name(keys[j], key) {
            panic!(
                "{}",
                ConstMessage::new(what, key, "`: each is offered once; remove one").as_str()
            );
        }
        j += 1;
    }
}

/// Adds a resource whose URI `resources![]` checked is not taken.
pub fn add_resource(set: &mut ResourceSet, resource: impl Resource + 'static) {
    // The only error is a taken URI, which `resources![]` refused at compile time.
    let _ = set.add_resource(resource);
}

/// Adds a template whose text `resources![]` checked is not taken.
pub fn add_template(set: &mut ResourceSet, template: impl ResourceTemplate + 'static) {
    let _ = set.add_template(template);
}

/// Adds a prompt whose name `prompts![]` checked is not taken.
pub fn add_prompt(set: &mut PromptSet, prompt: impl Prompt + 'static) {
    let _ = set.add(prompt);
}

/// The boxed future of an `#[async_trait]` method, as `#[resource]`/`#[prompt]` write
/// their `read`/`get` out.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A `#[resource]`'s `read` or a `#[prompt]`'s `get`: the fn's future, its value
/// converted by `convert`. Generic in the future and the conversion only, so an item
/// writes no async block (and compiles no state machine) of its own. `inline(always)`:
/// each item's copy is made in its runner's codegen unit (see [`runners`]).
#[inline(always)]
pub fn then<'a, T, Fut, F>(future: Fut, convert: F) -> BoxFuture<'a, Result<T, FeatureError>>
where
    Fut: Future + Send + 'a,
    F: FnOnce(Fut::Output) -> Result<T, FeatureError> + Send + 'a,
{
    Box::pin(async move { convert(future.await) })
}

/// A `read` or `get` refused before the fn ran: an argument did not parse.
pub fn refused<'a, T: Send + 'a>(error: FeatureError) -> BoxFuture<'a, Result<T, FeatureError>> {
    Box::pin(std::future::ready(Err(error)))
}

/// The `complete` of an item without completers: no suggestions.
pub fn no_suggestions<'a>() -> BoxFuture<'a, Result<Vec<String>, FeatureError>> {
    Box::pin(std::future::ready(Ok(Vec::new())))
}

/// What an item declares, built into what its trait returns at the first call. A
/// `static` of it is plain data in the user's crate; the building is compiled here,
/// once, rather than as an initializer per item.
struct Lazy<D, T> {
    decl: D,
    built: OnceLock<T>,
}

impl<D, T> Lazy<D, T> {
    /// The declaration, not built yet.
    const fn new(decl: D) -> Self {
        Self {
            decl,
            built: OnceLock::new(),
        }
    }
}

/// A resource's or template's listing.
type InfoCell = Lazy<InfoDecl, ResourceInfo>;
/// A template's URI template.
type TemplateCell = Lazy<&'static str, UriTemplate>;
/// An item's scopes.
type ScopesCell = Lazy<&'static [&'static str], Vec<String>>;
/// A prompt's icons.
type IconsCell = Lazy<&'static [&'static str], Vec<Icon>>;
/// A prompt's arguments: name, description, required.
type ArgumentsCell =
    Lazy<&'static [(&'static str, Option<&'static str>, bool)], Vec<PromptArgument>>;

impl InfoCell {
    /// The listing.
    fn get(&self) -> &ResourceInfo {
        self.built.get_or_init(|| self.decl.build())
    }
}

impl TemplateCell {
    /// The template.
    fn get(&self) -> &UriTemplate {
        self.built.get_or_init(|| template(self.decl))
    }
}

impl ScopesCell {
    /// The scopes.
    fn get(&self) -> &[String] {
        self.built
            .get_or_init(|| self.decl.iter().map(|s| (*s).to_owned()).collect())
    }
}

impl IconsCell {
    /// The icons.
    fn get(&self) -> &[Icon] {
        self.built
            .get_or_init(|| self.decl.iter().map(|src| Icon::new(*src)).collect())
    }
}

impl ArgumentsCell {
    /// The arguments.
    fn get(&self) -> &[PromptArgument] {
        self.built.get_or_init(|| {
            self.decl
                .iter()
                .map(|(name, description, required)| PromptArgument {
                    name: (*name).to_owned(),
                    description: description.map(str::to_owned),
                    required: *required,
                })
                .collect()
        })
    }
}

/// What a read returns.
pub type ReadResult = Result<Vec<ResourceContent>, FeatureError>;
/// What a `get` returns.
pub type GetResult = Result<Vec<PromptMessage>, FeatureError>;
/// What a `complete` returns.
pub type CompleteResult = Result<Vec<String>, FeatureError>;

/// What `#[resource(uri = ...)]` implements for its item type: its declaration and its
/// read. [`Resource`] follows from it, so no item writes (and compiles) that trait's
/// methods of its own.
pub trait ResourceFn: Send + Sync {
    /// The URI, listing and scopes.
    fn decl(&self) -> &'static ResourceDecl;
    /// The fn's future, boxed.
    fn read<'a>(&'a self, ctx: &'a ToolContext) -> BoxFuture<'a, ReadResult>;
}

/// What `#[resource(template = ...)]` implements for its item type, as [`ResourceFn`].
pub trait TemplateFn: Send + Sync {
    /// The template, listing and scopes.
    fn decl(&self) -> &'static ResourceDecl;
    /// The fn's future on the URI's variables, boxed.
    fn read<'a>(&'a self, params: &'a UriParams, ctx: &'a ToolContext)
    -> BoxFuture<'a, ReadResult>;
    /// The suggestions of the parameters' completers.
    fn complete<'a>(
        &'a self,
        name: &'a str,
        value: &'a str,
        resolved: &'a UriParams,
    ) -> BoxFuture<'a, CompleteResult> {
        let _ = (name, value, resolved);
        no_suggestions()
    }
}

/// What `#[prompt]` implements for its item type, as [`ResourceFn`].
pub trait PromptFn: Send + Sync {
    /// The name, title, description, arguments and scopes.
    fn decl(&self) -> &'static PromptDecl;
    /// The fn's future on the arguments, boxed.
    fn get<'a>(
        &'a self,
        args: &'a PromptArguments,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, GetResult>;
    /// The suggestions of the parameters' completers.
    fn complete<'a>(
        &'a self,
        name: &'a str,
        value: &'a str,
        resolved: &'a PromptArguments,
    ) -> BoxFuture<'a, CompleteResult> {
        let _ = (name, value, resolved);
        no_suggestions()
    }
}

/// A resource's or template's declaration: its URI or template, listing and scopes.
pub struct ResourceDecl {
    key: &'static str,
    template: TemplateCell,
    info: InfoCell,
    scopes: ScopesCell,
}

impl ResourceDecl {
    /// The declaration of the resource at `key` (or of the template `key`).
    pub const fn new(key: &'static str, info: InfoDecl, scopes: &'static [&'static str]) -> Self {
        Self {
            key,
            template: TemplateCell::new(key),
            info: InfoCell::new(info),
            scopes: ScopesCell::new(scopes),
        }
    }
}

/// A prompt's declaration.
pub struct PromptDecl {
    name: &'static str,
    title: Option<&'static str>,
    description: Option<&'static str>,
    arguments: ArgumentsCell,
    scopes: ScopesCell,
    icons: IconsCell,
}

impl PromptDecl {
    /// The declaration of the prompt `name`; its arguments by name, description and
    /// whether they are required; its icons by source.
    pub const fn new(
        name: &'static str,
        title: Option<&'static str>,
        description: Option<&'static str>,
        arguments: &'static [(&'static str, Option<&'static str>, bool)],
        scopes: &'static [&'static str],
        icons: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            title,
            description,
            arguments: ArgumentsCell::new(arguments),
            scopes: ScopesCell::new(scopes),
            icons: IconsCell::new(icons),
        }
    }
}

impl<T: ResourceFn> Resource for T {
    fn uri(&self) -> &str {
        self.decl().key
    }

    fn info(&self) -> &ResourceInfo {
        self.decl().info.get()
    }

    fn scopes(&self) -> &[String] {
        self.decl().scopes.get()
    }

    fn read<'s, 'c, 'f>(&'s self, ctx: &'c ToolContext) -> BoxFuture<'f, ReadResult>
    where
        's: 'f,
        'c: 'f,
        Self: 'f,
    {
        ResourceFn::read(self, ctx)
    }
}

impl<T: TemplateFn> ResourceTemplate for T {
    fn template(&self) -> &UriTemplate {
        self.decl().template.get()
    }

    fn info(&self) -> &ResourceInfo {
        self.decl().info.get()
    }

    fn scopes(&self) -> &[String] {
        self.decl().scopes.get()
    }

    fn read<'s, 'u, 'p, 'c, 'f>(
        &'s self,
        _uri: &'u str,
        params: &'p UriParams,
        ctx: &'c ToolContext,
    ) -> BoxFuture<'f, ReadResult>
    where
        's: 'f,
        'u: 'f,
        'p: 'f,
        'c: 'f,
        Self: 'f,
    {
        TemplateFn::read(self, params, ctx)
    }

    fn complete<'s, 'n, 'v, 'r, 'f>(
        &'s self,
        variable: &'n str,
        value: &'v str,
        resolved: &'r UriParams,
    ) -> BoxFuture<'f, CompleteResult>
    where
        's: 'f,
        'n: 'f,
        'v: 'f,
        'r: 'f,
        Self: 'f,
    {
        TemplateFn::complete(self, variable, value, resolved)
    }
}

impl<T: PromptFn> Prompt for T {
    fn name(&self) -> &str {
        self.decl().name
    }

    fn title(&self) -> Option<&str> {
        self.decl().title
    }

    fn description(&self) -> Option<&str> {
        self.decl().description
    }

    fn arguments(&self) -> &[PromptArgument] {
        self.decl().arguments.get()
    }

    fn icons(&self) -> &[Icon] {
        self.decl().icons.get()
    }

    fn scopes(&self) -> &[String] {
        self.decl().scopes.get()
    }

    fn get<'s, 'a, 'c, 'f>(
        &'s self,
        arguments: &'a PromptArguments,
        ctx: &'c ToolContext,
    ) -> BoxFuture<'f, GetResult>
    where
        's: 'f,
        'a: 'f,
        'c: 'f,
        Self: 'f,
    {
        PromptFn::get(self, arguments, ctx)
    }

    fn complete<'s, 'n, 'v, 'r, 'f>(
        &'s self,
        argument: &'n str,
        value: &'v str,
        resolved: &'r PromptArguments,
    ) -> BoxFuture<'f, CompleteResult>
    where
        's: 'f,
        'n: 'f,
        'v: 'f,
        'r: 'f,
        Self: 'f,
    {
        PromptFn::complete(self, argument, value, resolved)
    }
}

/// A stateless item's read, get or completion, as a fn pointer: what a set holds for a
/// `#[resource]` or `#[prompt]` fn, so that one type (not one per item) implements the
/// item's trait and its vtable.
pub type ReadFixed = for<'a> fn(&'a ToolContext) -> BoxFuture<'a, ReadResult>;
/// See [`ReadFixed`].
pub type ReadTemplated = for<'a> fn(&'a UriParams, &'a ToolContext) -> BoxFuture<'a, ReadResult>;
/// See [`ReadFixed`].
pub type Get = for<'a> fn(&'a PromptArguments, &'a ToolContext) -> BoxFuture<'a, GetResult>;
/// See [`ReadFixed`]; `R` holds the values already chosen.
pub type Complete<R> = for<'a> fn(&'a str, &'a str, &'a R) -> BoxFuture<'a, CompleteResult>;

/// Adds the resource `decl` declares, read by `read`; `resources![]` checked its URI
/// is not taken.
pub fn add_resource_fn(set: &mut ResourceSet, decl: &'static ResourceDecl, read: ReadFixed) {
    let _ = set.add_resource(FnItem {
        decl,
        run: read,
        complete: None,
    });
}

/// Adds the template `decl` declares, as [`add_resource_fn`].
pub fn add_template_fn(
    set: &mut ResourceSet,
    decl: &'static ResourceDecl,
    read: ReadTemplated,
    complete: Option<Complete<UriParams>>,
) {
    let _ = set.add_template(FnItem {
        decl,
        run: read,
        complete,
    });
}

/// Adds the prompt `decl` declares, as [`add_resource_fn`].
pub fn add_prompt_fn(
    set: &mut PromptSet,
    decl: &'static PromptDecl,
    get: Get,
    complete: Option<Complete<PromptArguments>>,
) {
    let _ = set.add(FnItem {
        decl,
        run: get,
        complete,
    });
}

/// A stateless item: its declaration and fns.
struct FnItem<D: 'static, F, C> {
    decl: &'static D,
    run: F,
    complete: Option<C>,
}

impl ResourceFn for FnItem<ResourceDecl, ReadFixed, ()> {
    fn decl(&self) -> &'static ResourceDecl {
        self.decl
    }

    fn read<'a>(&'a self, ctx: &'a ToolContext) -> BoxFuture<'a, ReadResult> {
        (self.run)(ctx)
    }
}

impl TemplateFn for FnItem<ResourceDecl, ReadTemplated, Complete<UriParams>> {
    fn decl(&self) -> &'static ResourceDecl {
        self.decl
    }

    fn read<'a>(
        &'a self,
        params: &'a UriParams,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ReadResult> {
        (self.run)(params, ctx)
    }

    fn complete<'a>(
        &'a self,
        name: &'a str,
        value: &'a str,
        resolved: &'a UriParams,
    ) -> BoxFuture<'a, CompleteResult> {
        match self.complete {
            Some(complete) => complete(name, value, resolved),
            None => no_suggestions(),
        }
    }
}

impl PromptFn for FnItem<PromptDecl, Get, Complete<PromptArguments>> {
    fn decl(&self) -> &'static PromptDecl {
        self.decl
    }

    fn get<'a>(
        &'a self,
        args: &'a PromptArguments,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, GetResult> {
        (self.run)(args, ctx)
    }

    fn complete<'a>(
        &'a self,
        name: &'a str,
        value: &'a str,
        resolved: &'a PromptArguments,
    ) -> BoxFuture<'a, CompleteResult> {
        match self.complete {
            Some(complete) => complete(name, value, resolved),
            None => no_suggestions(),
        }
    }
}

/// The suggestions of a completer, as `complete` returns them.
pub fn suggested<'a>(suggestions: Vec<String>) -> BoxFuture<'a, CompleteResult> {
    Box::pin(std::future::ready(Ok(suggestions)))
}

/// toolwright-core's runner types: a `#[resource]`'s read or a `#[prompt]`'s get is a
/// method of one of them ([`RunRead`], [`RunTemplate`], [`RunGet`]), picked by the
/// item's name, so that it is compiled in that runner's codegen unit (which an edit of
/// another item's fn leaves alone) rather than in the module of the fn.
pub mod runners {
    pub use toolwright_core::__private::{r0, r1, r2, r3, r4, r5, r6, r7};
}

/// A resource's read, on a runner type (see [`runners`]).
pub trait RunRead<T> {
    /// Reads `item`.
    fn read<'a>(item: &'a T, ctx: &'a ToolContext) -> BoxFuture<'a, ReadResult>;
}

/// A template's read, on a runner type (see [`runners`]).
pub trait RunTemplate<T> {
    /// Reads `item` with the URI's variables.
    fn read<'a>(
        item: &'a T,
        params: &'a UriParams,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, ReadResult>;
}

/// A prompt's get, on a runner type (see [`runners`]).
pub trait RunGet<T> {
    /// Gets `item`'s messages for `args`.
    fn get<'a>(
        item: &'a T,
        args: &'a PromptArguments,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, GetResult>;
}

/// A `#[resource]`'s listing as the macro writes it: the name, then only the keys
/// given.
pub struct InfoDecl {
    name: &'static str,
    title: Option<&'static str>,
    description: Option<&'static str>,
    mime_type: Option<&'static str>,
    size: Option<u64>,
    audience: &'static [Audience],
    priority: Option<f32>,
    icons: &'static [&'static str],
}

impl InfoDecl {
    /// A listing naming the item.
    pub const fn named(name: &'static str) -> Self {
        Self {
            name,
            title: None,
            description: None,
            mime_type: None,
            size: None,
            audience: &[],
            priority: None,
            icons: &[],
        }
    }

    /// `title = "..."`.
    pub const fn title(mut self, title: &'static str) -> Self {
        self.title = Some(title);
        self
    }

    /// The doc comment.
    pub const fn description(mut self, description: &'static str) -> Self {
        self.description = Some(description);
        self
    }

    /// `mime_type = "..."`, or the one the return type implies.
    pub const fn mime_type(mut self, mime_type: &'static str) -> Self {
        self.mime_type = Some(mime_type);
        self
    }

    /// `size = ...`.
    pub const fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// `audience = [...]`.
    pub const fn audience(mut self, audience: &'static [Audience]) -> Self {
        self.audience = audience;
        self
    }

    /// `priority = ...`.
    pub const fn priority(mut self, priority: f32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// `icons = [...]`.
    pub const fn icons(mut self, icons: &'static [&'static str]) -> Self {
        self.icons = icons;
        self
    }

    fn build(&self) -> ResourceInfo {
        let mut info = ResourceInfo::named(self.name);
        info.title = self.title.map(str::to_owned);
        info.description = self.description.map(str::to_owned);
        info.mime_type = self.mime_type.map(str::to_owned);
        info.size = self.size;
        info.annotations.audience = self.audience.to_vec();
        info.annotations.priority = self.priority;
        info.icons = self.icons.iter().map(|src| Icon::new(*src)).collect();
        info
    }
}

/// Parses a template `#[resource]`'s URI template; `#[resource]` checked it by the same
/// rules at compile time, so the error branch is never taken.
pub fn template(source: &'static str) -> UriTemplate {
    UriTemplate::parse(source).unwrap_or_else(|_| {
        UriTemplate::parse("invalid:").unwrap_or_else(|_| unreachable!("a literal template"))
    })
}

/// Reads the template variable `name` as a `T`.
pub fn uri_param<T>(params: &UriParams, name: &str) -> Result<T, FeatureError>
where
    T: FromUriSegment,
{
    let raw = params
        .get(name)
        .ok_or_else(|| FeatureError::invalid_arguments(format!("the URI has no `{name}`")))?;
    T::from_segment(raw).map_err(|e| {
        FeatureError::invalid_arguments(format!(
            "`{name}` in the URI is `{raw}`, which is not a {}: {e}",
            std::any::type_name::<T>()
        ))
    })
}

/// A type a `#[resource(template = ...)]` parameter can have: read from its URI segment
/// with `FromStr`.
#[diagnostic::on_unimplemented(
    message = "a `#[resource]` template parameter is read from its URI segment, and `{Self}` cannot be: it does not implement `FromStr` with an error that implements `Display`",
    label = "not readable from a URI segment",
    note = "use `String`, an integer, or a type implementing `FromStr`"
)]
pub trait FromUriSegment: Sized {
    /// Parses `segment`.
    fn from_segment(segment: &str) -> Result<Self, String>;
}

impl<T: FromStr> FromUriSegment for T
where
    T::Err: Display,
{
    fn from_segment(segment: &str) -> Result<Self, String> {
        segment.parse().map_err(|e: T::Err| e.to_string())
    }
}

/// What a `#[resource]` fn can return (past its `Result`).
#[diagnostic::on_unimplemented(
    message = "a `#[resource]` cannot serve `{Self}`",
    label = "not text, bytes, `ResourceContent` or `Serialize`",
    note = "return `String`, `Vec<u8>` (with `mime_type = \"...\"`), `ResourceContent`, `Vec<ResourceContent>`, or a type implementing `serde::Serialize` (served as JSON)"
)]
pub trait IntoContents {
    /// The contents.
    fn into_contents(self) -> Result<Vec<ResourceContent>, FeatureError>;
}

impl IntoContents for String {
    fn into_contents(self) -> Result<Vec<ResourceContent>, FeatureError> {
        Ok(vec![ResourceContent::text(self)])
    }
}

impl IntoContents for &str {
    fn into_contents(self) -> Result<Vec<ResourceContent>, FeatureError> {
        Ok(vec![ResourceContent::text(self)])
    }
}

impl IntoContents for ResourceContent {
    fn into_contents(self) -> Result<Vec<ResourceContent>, FeatureError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<ResourceContent> {
    fn into_contents(self) -> Result<Vec<ResourceContent>, FeatureError> {
        Ok(self)
    }
}

/// A returned value served as JSON.
pub struct Json<T>(pub T);

impl<T: serde::Serialize> IntoContents for Json<T> {
    fn into_contents(self) -> Result<Vec<ResourceContent>, FeatureError> {
        Ok(vec![ResourceContent::json(&self.0)?])
    }
}

/// Returned bytes, served base64-encoded with the resource's MIME type.
pub struct Bytes<T>(pub T, pub &'static str);

impl<T: AsRef<[u8]>> IntoContents for Bytes<T> {
    fn into_contents(self) -> Result<Vec<ResourceContent>, FeatureError> {
        Ok(vec![ResourceContent::blob(base64(self.0.as_ref()), self.1)])
    }
}

/// Standard base64 with padding, as MCP blobs carry it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The suggestions of a completer of `#[arg(complete = ...)]` for `value`.
pub fn suggestions<F, I>(complete: F, value: &str) -> Vec<String>
where
    F: Fn(&str) -> I,
    I: IntoIterator,
    I::Item: Into<String>,
{
    complete(value).into_iter().map(Into::into).collect()
}

/// An error a `#[resource]` or `#[prompt]` fn returned: a [`FeatureError`] as it is,
/// anything else as a failure with its message.
pub fn failed(error: impl Display) -> FeatureError {
    FeatureError::failed(error.to_string())
}

/// A type a `#[prompt]` argument can have: read from the string the client sent,
/// as a JSON string first (`String`, enums of unit variants) and then as JSON text
/// (numbers, booleans, objects).
#[diagnostic::on_unimplemented(
    message = "a `#[prompt]` argument arrives as a string, and `{Self}` cannot be read from one",
    label = "not `String` or `Deserialize`",
    note = "use `String`, `Option<String>`, or a type implementing `serde::Deserialize` (numbers, booleans, enums of unit variants, JSON objects)"
)]
pub trait FromPromptArg: Sized {
    /// Reads `value`.
    fn from_arg(value: &str) -> Result<Self, String>;
}

impl<T: serde::de::DeserializeOwned> FromPromptArg for T {
    fn from_arg(value: &str) -> Result<Self, String> {
        serde_json::from_value(serde_json::Value::String(value.to_owned()))
            .or_else(|_| serde_json::from_str(value))
            .map_err(|e| e.to_string())
    }
}

/// The prompt argument `name` as a `T`; `None` when it was not given.
pub fn prompt_arg<T: FromPromptArg>(
    args: &PromptArguments,
    name: &str,
) -> Result<Option<T>, FeatureError> {
    let Some(raw) = args.get(name) else {
        return Ok(None);
    };
    T::from_arg(raw).map(Some).map_err(|e| {
        FeatureError::invalid_arguments(format!(
            "the argument `{name}` is `{raw}`, which is not a {}: {e}",
            std::any::type_name::<T>()
        ))
    })
}

/// A required prompt argument as [`prompt_arg`] read it, which the server checked is
/// present.
pub fn required<T>(value: Result<Option<T>, FeatureError>, name: &str) -> Result<T, FeatureError> {
    value?.ok_or_else(|| {
        FeatureError::invalid_arguments(format!("the argument `{name}` is required"))
    })
}

/// What a `#[prompt]` fn can return (past its `Result`).
#[diagnostic::on_unimplemented(
    message = "a `#[prompt]` cannot return `{Self}`",
    label = "not text or prompt messages",
    note = "return `String` (one user message), `PromptMessage`, or `Vec<PromptMessage>`"
)]
pub trait IntoMessages {
    /// The messages.
    fn into_messages(self) -> Vec<PromptMessage>;
}

impl IntoMessages for String {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::user(Content::text(self))]
    }
}

impl IntoMessages for &str {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::user(Content::text(self))]
    }
}

impl IntoMessages for PromptMessage {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![self]
    }
}

impl IntoMessages for Vec<PromptMessage> {
    fn into_messages(self) -> Vec<PromptMessage> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn prompt_args_read_strings_numbers_and_refuse_garbage() {
        let mut args = PromptArguments::new();
        args.insert("s".into(), "42".into());
        args.insert("bad".into(), "forty".into());
        assert_eq!(
            prompt_arg::<String>(&args, "s").unwrap().as_deref(),
            Some("42")
        );
        assert_eq!(prompt_arg::<u32>(&args, "s").unwrap(), Some(42));
        assert_eq!(prompt_arg::<u32>(&args, "missing").unwrap(), None);
        let err = prompt_arg::<u32>(&args, "bad").unwrap_err();
        assert!(err.message().contains("`bad` is `forty`"), "{err}");
    }
}

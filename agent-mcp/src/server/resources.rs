//! Resources: what an MCP server offers clients to read by URI, beside its tools. A
//! [`Resource`] has one fixed URI; a [`ResourceTemplate`] answers every URI its
//! [`UriTemplate`] matches, with the template's variables parsed from the URI. Both are
//! object-safe traits, like `Tool`, so a set holds them as `Arc<dyn _>` and a macro can
//! generate their impls from an async fn. [`ResourceSet`] collects them; the server
//! serves `resources/list`, `resources/templates/list`, `resources/read`,
//! subscriptions and completion of template variables from it.

use super::uri_template::{UriParams, UriTemplate, UriTemplateError};
use async_trait::async_trait;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use toolwright_core::ToolContext;

/// Why reading a resource, getting a prompt or completing an argument failed. The
/// client receives the message, so say what was wrong and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureError {
    kind: FeatureErrorKind,
    message: String,
}

/// What kind of failure a [`FeatureError`] is; each maps to its JSON-RPC error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FeatureErrorKind {
    /// No such resource or prompt (the spec's resource-not-found: -32002 on 2025
    /// sessions, -32602 from protocol 2026-07-28).
    NotFound,
    /// The arguments or URI parameters were not what the item takes (-32602).
    InvalidArguments,
    /// The item could not produce its content (-32603).
    Failed,
}

impl FeatureError {
    /// Nothing answers to what was asked for.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(FeatureErrorKind::NotFound, message)
    }

    /// The arguments or URI parameters were wrong.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::new(FeatureErrorKind::InvalidArguments, message)
    }

    /// The item failed to produce its content.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::new(FeatureErrorKind::Failed, message)
    }

    fn new(kind: FeatureErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> FeatureErrorKind {
        self.kind
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON-RPC error sent for it. rmcp turns resource-not-found into -32602 for
    /// peers on protocol 2026-07-28 (SEP-2164).
    pub(crate) fn into_mcp(self) -> rmcp::ErrorData {
        match self.kind {
            FeatureErrorKind::NotFound => rmcp::ErrorData::resource_not_found(self.message, None),
            FeatureErrorKind::InvalidArguments => {
                rmcp::ErrorData::invalid_params(self.message, None)
            }
            FeatureErrorKind::Failed => rmcp::ErrorData::internal_error(self.message, None),
        }
    }
}

impl fmt::Display for FeatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FeatureError {}

/// A tool error met while reading or getting (such as `McpPeer::ask`'s, while the
/// caller's answers are awaited) fails the request with its message.
impl From<toolwright_core::ToolError> for FeatureError {
    fn from(error: toolwright_core::ToolError) -> Self {
        Self::failed(error.message())
    }
}

/// What a resource holds: text, or binary data (base64, as `Content` carries it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Base64-encoded bytes.
    Blob(String),
}

/// One item of a resource's contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContent {
    /// The URI the item is at; `None` for the URI that was read.
    pub uri: Option<String>,
    /// Its MIME type; `None` for the resource's declared type.
    pub mime_type: Option<String>,
    /// The data.
    pub body: ResourceBody,
}

impl ResourceContent {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            uri: None,
            mime_type: None,
            body: ResourceBody::Text(text.into()),
        }
    }

    /// Binary contents, base64-encoded, with their MIME type.
    pub fn blob(base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            uri: None,
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Blob(base64.into()),
        }
    }

    /// A value served as JSON text (`application/json`).
    pub fn json(value: &impl serde::Serialize) -> Result<Self, FeatureError> {
        let text = serde_json::to_string(value)
            .map_err(|e| FeatureError::failed(format!("the resource is not JSON: {e}")))?;
        Ok(Self::text(text).with_mime_type("application/json"))
    }

    /// The same contents with this MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The same contents, at this URI.
    pub fn with_uri(mut self, uri: impl Into<String>) -> Self {
        self.uri = Some(uri.into());
        self
    }

    /// The MCP form, for a read of `uri` whose resource declares `mime_type`.
    pub(crate) fn into_mcp(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> rmcp::model::ResourceContents {
        let uri = self.uri.unwrap_or_else(|| uri.to_owned());
        let mime_type = self.mime_type.or_else(|| mime_type.map(str::to_owned));
        match self.body {
            ResourceBody::Text(text) => rmcp::model::ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                meta: None,
            },
            ResourceBody::Blob(blob) => rmcp::model::ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                meta: None,
            },
        }
    }
}

impl From<String> for ResourceContent {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for ResourceContent {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

/// What describes a resource or template in a listing: its name, and optionally a
/// title, description, MIME type, size, annotations for the client and icons.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ResourceInfo {
    /// A short name.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it holds, for the client's model and its user.
    pub description: Option<String>,
    /// The MIME type of its contents, when they have one type.
    pub mime_type: Option<String>,
    /// Its size in bytes before any encoding, when known (a resource at one URI;
    /// clients use it to estimate context use).
    pub size: Option<u64>,
    /// Who it is for, how much it matters and when it last changed.
    pub annotations: ResourceAnnotations,
    /// Icons a client may show beside it.
    pub icons: Vec<Icon>,
}

impl ResourceInfo {
    /// Info naming the item.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// With a MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// With a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// With its size in bytes.
    pub fn with_size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }

    /// With the audience it is meant for (the user, the model, or both).
    pub fn with_audience(mut self, audience: impl IntoIterator<Item = Audience>) -> Self {
        self.annotations.audience = audience.into_iter().collect();
        self
    }

    /// With how much it matters, from 0 (least: optional) to 1 (most: required); a
    /// value outside that range is brought to its nearest end.
    pub fn with_priority(mut self, priority: f32) -> Self {
        self.annotations.priority = Some(if priority.is_nan() {
            0.0
        } else {
            priority.clamp(0.0, 1.0)
        });
        self
    }

    /// With when it last changed, as an ISO 8601 timestamp (e.g.
    /// `2026-01-12T15:00:58Z`).
    pub fn with_last_modified(mut self, timestamp: impl Into<String>) -> Self {
        self.annotations.last_modified = Some(timestamp.into());
        self
    }

    /// With one more icon.
    pub fn with_icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// The MCP form of the annotations, `None` when there are none.
    pub(crate) fn mcp_annotations(&self) -> Option<rmcp::model::Annotations> {
        let ResourceAnnotations {
            audience,
            priority,
            last_modified,
        } = &self.annotations;
        if audience.is_empty() && priority.is_none() && last_modified.is_none() {
            return None;
        }
        let mut annotations = rmcp::model::Annotations::default();
        annotations.audience = (!audience.is_empty()).then(|| {
            audience
                .iter()
                .map(|a| match a {
                    Audience::User => rmcp::model::Role::User,
                    Audience::Assistant => rmcp::model::Role::Assistant,
                })
                .collect()
        });
        annotations.priority = *priority;
        annotations.last_modified.clone_from(last_modified);
        Some(annotations)
    }

    /// The MCP form of the icons, `None` when there are none.
    pub(crate) fn mcp_icons(&self) -> Option<Vec<rmcp::model::Icon>> {
        icons_to_mcp(&self.icons)
    }

    /// The info a listing from another server carries.
    pub(crate) fn from_mcp(
        name: String,
        title: Option<String>,
        description: Option<String>,
        mime_type: Option<String>,
        annotations: Option<&rmcp::model::Annotations>,
        icons: Option<&[rmcp::model::Icon]>,
    ) -> Self {
        let annotations =
            annotations.map_or_else(ResourceAnnotations::default, |a| ResourceAnnotations {
                audience: a
                    .audience
                    .iter()
                    .flatten()
                    .map(|role| match role {
                        rmcp::model::Role::User => Audience::User,
                        rmcp::model::Role::Assistant => Audience::Assistant,
                    })
                    .collect(),
                priority: a.priority,
                last_modified: a.last_modified.clone(),
            });
        let icons = icons_from_mcp(icons);
        Self {
            name,
            title,
            description,
            mime_type,
            size: None,
            annotations,
            icons,
        }
    }
}

/// The MCP form of `icons`, `None` when there are none.
pub(crate) fn icons_to_mcp(icons: &[Icon]) -> Option<Vec<rmcp::model::Icon>> {
    (!icons.is_empty()).then(|| {
        icons
            .iter()
            .map(|icon| {
                let mut mcp = rmcp::model::Icon::new(&icon.src);
                mcp.mime_type.clone_from(&icon.mime_type);
                mcp.sizes = (!icon.sizes.is_empty()).then(|| icon.sizes.clone());
                mcp
            })
            .collect()
    })
}

/// The icons a listing from another server carries.
pub(crate) fn icons_from_mcp(icons: Option<&[rmcp::model::Icon]>) -> Vec<Icon> {
    icons
        .unwrap_or_default()
        .iter()
        .map(|icon| Icon {
            src: icon.src.clone(),
            mime_type: icon.mime_type.clone(),
            sizes: icon.sizes.clone().unwrap_or_default(),
        })
        .collect()
}

/// Hints for the client about a resource: who it is for, how much it matters and
/// when it last changed. All empty by default, and then not sent.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ResourceAnnotations {
    /// Whom it is meant for; empty: not said.
    pub audience: Vec<Audience>,
    /// How much it matters, from 0 (optional) to 1 (required).
    pub priority: Option<f32>,
    /// When it last changed, as an ISO 8601 timestamp.
    pub last_modified: Option<String>,
}

/// Who a resource is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Audience {
    /// The person using the client.
    User,
    /// The model.
    Assistant,
}

/// An icon a client may show beside an item.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Icon {
    /// Where the icon is: an `https:` URL or a `data:` URI.
    pub src: String,
    /// Its MIME type, where the URL does not make it plain.
    pub mime_type: Option<String>,
    /// The sizes it comes in, as `WxH` (`48x48`) or `any` for scalable formats.
    pub sizes: Vec<String>,
}

impl Icon {
    /// The icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
        }
    }

    /// With its MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// With the sizes it comes in.
    pub fn with_sizes(mut self, sizes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.sizes = sizes.into_iter().map(Into::into).collect();
        self
    }
}

/// A resource at one fixed URI.
#[async_trait]
pub trait Resource: Send + Sync {
    /// Its URI.
    fn uri(&self) -> &str;

    /// Its name, title, description and MIME type, as listed.
    fn info(&self) -> &ResourceInfo;

    /// The scopes a caller's principal needs to see and read it (only enforced when
    /// the transport authenticates, as for tools). Default: none.
    fn scopes(&self) -> &[String] {
        &[]
    }

    /// Its contents now. `ctx` names the session and, on an authenticating transport,
    /// holds the caller's `Principal` as state.
    async fn read(&self, ctx: &ToolContext) -> Result<Vec<ResourceContent>, FeatureError>;
}

/// Resources whose URIs follow a template, e.g. `file:///{+path}`: each URI the
/// template matches is read with the template's variables as parameters.
#[async_trait]
pub trait ResourceTemplate: Send + Sync {
    /// Its URI template.
    fn template(&self) -> &UriTemplate;

    /// Its name, title, description and MIME type, as listed.
    fn info(&self) -> &ResourceInfo;

    /// The scopes a caller's principal needs (see [`Resource::scopes`]).
    fn scopes(&self) -> &[String] {
        &[]
    }

    /// The contents at `uri`, whose template variables took the values in `params`.
    /// A URI the template matches but that names nothing is
    /// [`FeatureError::not_found`].
    async fn read(
        &self,
        uri: &str,
        params: &UriParams,
        ctx: &ToolContext,
    ) -> Result<Vec<ResourceContent>, FeatureError>;

    /// Values the template variable `variable` could take that begin like `value`
    /// (`completion/complete`); `resolved` holds variables already chosen. Default: no
    /// suggestions.
    async fn complete(
        &self,
        variable: &str,
        value: &str,
        resolved: &UriParams,
    ) -> Result<Vec<String>, FeatureError> {
        let _ = (variable, value, resolved);
        Ok(Vec::new())
    }
}

/// The resources and resource templates a server offers. Each fixed URI and each
/// template is offered once: adding a second with a taken one is an error.
#[derive(Clone, Default)]
pub struct ResourceSet {
    resources: Vec<Arc<dyn Resource>>,
    templates: Vec<Arc<dyn ResourceTemplate>>,
}

impl ResourceSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a resource; an error if its URI is already offered.
    pub fn add_resource(&mut self, resource: impl Resource + 'static) -> Result<(), FeatureError> {
        self.add_resource_arc(Arc::new(resource))
    }

    /// Adds a shared resource; an error if its URI is already offered.
    pub fn add_resource_arc(&mut self, resource: Arc<dyn Resource>) -> Result<(), FeatureError> {
        if self.resource(resource.uri()).is_some() {
            return Err(FeatureError::invalid_arguments(format!(
                "a resource at `{}` is already in the set; each URI is offered once",
                resource.uri()
            )));
        }
        self.resources.push(resource);
        Ok(())
    }

    /// Adds a template; an error if the same template is already offered.
    pub fn add_template(
        &mut self,
        template: impl ResourceTemplate + 'static,
    ) -> Result<(), FeatureError> {
        self.add_template_arc(Arc::new(template))
    }

    /// Adds a shared template; an error if the same template is already offered.
    pub fn add_template_arc(
        &mut self,
        template: Arc<dyn ResourceTemplate>,
    ) -> Result<(), FeatureError> {
        if self.template(template.template().as_str()).is_some() {
            return Err(FeatureError::invalid_arguments(format!(
                "the resource template `{}` is already in the set",
                template.template()
            )));
        }
        self.templates.push(template);
        Ok(())
    }

    /// The resources, in the order added.
    pub fn resources(&self) -> &[Arc<dyn Resource>] {
        &self.resources
    }

    /// The templates, in the order added.
    pub fn templates(&self) -> &[Arc<dyn ResourceTemplate>] {
        &self.templates
    }

    /// The resource at exactly `uri`.
    pub fn resource(&self, uri: &str) -> Option<&Arc<dyn Resource>> {
        self.resources.iter().find(|r| r.uri() == uri)
    }

    /// The template written exactly as `template`.
    pub fn template(&self, template: &str) -> Option<&Arc<dyn ResourceTemplate>> {
        self.templates
            .iter()
            .find(|t| t.template().as_str() == template)
    }

    /// Whether the set offers nothing.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }

    /// What answers a read of `uri`: the resource at it, else the first template that
    /// matches it (in the order added), with its parameters.
    pub(crate) fn resolve(&self, uri: &str) -> Option<Resolved<'_>> {
        if let Some(resource) = self.resource(uri) {
            return Some(Resolved::Fixed(resource));
        }
        self.templates.iter().find_map(|template| {
            let params = template.template().matches(uri)?;
            Some(Resolved::Templated(template, params))
        })
    }
}

/// What a URI resolves to in a [`ResourceSet`].
pub(crate) enum Resolved<'a> {
    Fixed(&'a Arc<dyn Resource>),
    Templated(&'a Arc<dyn ResourceTemplate>, UriParams),
}

impl Resolved<'_> {
    pub(crate) fn scopes(&self) -> &[String] {
        match self {
            Self::Fixed(r) => r.scopes(),
            Self::Templated(t, _) => t.scopes(),
        }
    }

    pub(crate) fn info(&self) -> &ResourceInfo {
        match self {
            Self::Fixed(r) => r.info(),
            Self::Templated(t, _) => t.info(),
        }
    }
}

impl fmt::Debug for ResourceSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceSet")
            .field(
                "resources",
                &self.resources.iter().map(|r| r.uri()).collect::<Vec<_>>(),
            )
            .field(
                "templates",
                &self
                    .templates
                    .iter()
                    .map(|t| t.template().as_str())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A resource from a closure: a fixed URI whose contents `read` produces.
///
/// ```
/// use toolwright_mcp::resources::{FnResource, ResourceContent, ResourceInfo, ResourceSet};
/// let mut set = ResourceSet::new();
/// set.add_resource(FnResource::new(
///     "config://app",
///     ResourceInfo::named("app-config").with_mime_type("application/json"),
///     |_ctx| async { Ok(vec![ResourceContent::text("{\"debug\":false}")]) },
/// ))
/// .unwrap();
/// ```
pub struct FnResource<F> {
    uri: String,
    info: ResourceInfo,
    read: F,
    scopes: Vec<String>,
}

impl<F, Fut> FnResource<F>
where
    F: Fn(ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<ResourceContent>, FeatureError>> + Send,
{
    /// A resource at `uri` read by `read`.
    pub fn new(uri: impl Into<String>, info: ResourceInfo, read: F) -> Self {
        Self {
            uri: uri.into(),
            info,
            read,
            scopes: Vec::new(),
        }
    }

    /// Readable only by principals granted every one of `scopes`.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

#[async_trait]
impl<F, Fut> Resource for FnResource<F>
where
    F: Fn(ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<ResourceContent>, FeatureError>> + Send,
{
    fn uri(&self) -> &str {
        &self.uri
    }

    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn scopes(&self) -> &[String] {
        &self.scopes
    }

    async fn read(&self, ctx: &ToolContext) -> Result<Vec<ResourceContent>, FeatureError> {
        (self.read)(ctx.clone()).await
    }
}

/// The completion function of an [`FnTemplate`]: variable, value typed so far, the
/// variables already chosen.
type CompleteFn = dyn Fn(&str, &str, &UriParams) -> Vec<String> + Send + Sync;

/// A resource template from a closure, with optional completion of its variables.
///
/// ```
/// use toolwright_mcp::resources::{FnTemplate, ResourceContent, ResourceInfo, ResourceSet};
/// let mut set = ResourceSet::new();
/// set.add_template(
///     FnTemplate::new("users://{id}/profile", ResourceInfo::named("profile"), |_uri, params, _ctx| {
///         let id = params.get("id").cloned().unwrap_or_default();
///         async move { Ok(vec![ResourceContent::text(format!("user {id}"))]) }
///     })
///     .unwrap(),
/// )
/// .unwrap();
/// ```
pub struct FnTemplate<F> {
    template: UriTemplate,
    info: ResourceInfo,
    read: F,
    complete: Option<Box<CompleteFn>>,
    scopes: Vec<String>,
}

impl<F, Fut> FnTemplate<F>
where
    F: Fn(String, UriParams, ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<ResourceContent>, FeatureError>> + Send,
{
    /// A template read by `read`; an error if `template` is not a URI template (see
    /// [`UriTemplate::parse`]).
    pub fn new(template: &str, info: ResourceInfo, read: F) -> Result<Self, UriTemplateError> {
        Ok(Self {
            template: UriTemplate::parse(template)?,
            info,
            read,
            complete: None,
            scopes: Vec::new(),
        })
    }

    /// Completes its variables with `complete(variable, value, resolved)`.
    pub fn with_completion(
        mut self,
        complete: impl Fn(&str, &str, &UriParams) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.complete = Some(Box::new(complete));
        self
    }

    /// Readable only by principals granted every one of `scopes`.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

#[async_trait]
impl<F, Fut> ResourceTemplate for FnTemplate<F>
where
    F: Fn(String, UriParams, ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<ResourceContent>, FeatureError>> + Send,
{
    fn template(&self) -> &UriTemplate {
        &self.template
    }

    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn scopes(&self) -> &[String] {
        &self.scopes
    }

    async fn read(
        &self,
        uri: &str,
        params: &UriParams,
        ctx: &ToolContext,
    ) -> Result<Vec<ResourceContent>, FeatureError> {
        (self.read)(uri.to_owned(), params.clone(), ctx.clone()).await
    }

    async fn complete(
        &self,
        variable: &str,
        value: &str,
        resolved: &UriParams,
    ) -> Result<Vec<String>, FeatureError> {
        if !self.template.variables().any(|v| v == variable) {
            return Err(FeatureError::invalid_arguments(format!(
                "the template `{}` has no variable `{variable}`; its variables are: {}",
                self.template,
                self.template.variables().collect::<Vec<_>>().join(", ")
            )));
        }
        Ok(self
            .complete
            .as_ref()
            .map(|complete| complete(variable, value, resolved))
            .unwrap_or_default())
    }
}

/// The URIs a session subscribed to (`resources/subscribe`, 2025 protocol versions).
pub(crate) type SubscribedUris = std::sync::Mutex<HashSet<String>>;

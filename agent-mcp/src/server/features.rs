//! Resources, prompts and completions as an [`McpServer`] serves them: the sets it
//! offers (swapped whole when they change, as the tools are), each request of theirs
//! answered from the current sets, who may see what, resource subscriptions on 2025
//! sessions, and the notices sent when something changes (to sessions, and to
//! `subscriptions/listen` streams on protocol 2026-07-28).

use super::McpServer;
use super::access;
use super::input::{self, Answered, CallInput, Round};
use super::peer::RequestClient;
use super::prompts::{self, PromptArguments, PromptSet};
use super::resources::{FeatureError, Resolved, ResourceSet, SubscribedUris};
use super::session::session_key;
use super::uri_template::UriParams;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, PromptsCapability, ReadResourceRequestParams,
    ReadResourceResult, Reference, ResourcesCapability, ServerCapabilities, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use std::sync::{Arc, PoisonError};
use toolwright_core::{Principal, ToolContext};

/// What a server offers beside its tools, at one moment. `None`: not offered at all
/// (the capability is not advertised).
#[derive(Default)]
pub(crate) struct Features {
    pub(crate) resources: Option<ResourceSet>,
    pub(crate) prompts: Option<PromptSet>,
}

/// A 2025 session that subscribed to resources, and the URIs it subscribed to.
pub(crate) struct Subscriber {
    peer: Peer<RoleServer>,
    uris: Arc<SubscribedUris>,
}

/// Whether the caller of `context` may see and use an item needing `scopes`: always,
/// unless the transport authenticated the caller and its principal lacks one.
fn permitted(context: &RequestContext<RoleServer>, scopes: &[String]) -> bool {
    scopes.is_empty() || principal_permitted(access::principal(context).as_ref(), scopes)
}

/// Whether `principal` (`None`: the transport does not authenticate) holds `scopes`.
fn principal_permitted(principal: Option<&Principal>, scopes: &[String]) -> bool {
    principal.is_none_or(|principal| scopes.iter().all(|scope| principal.has_scope(scope)))
}

/// Caching hints for protocol 2026-07-28 requests (rmcp leaves 2025 results as they
/// were): private, since what a caller sees depends on its scopes.
fn cache_hint(context: &RequestContext<RoleServer>, ttl: std::time::Duration) -> Option<u64> {
    RequestClient::of(context)
        .is_some()
        .then(|| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
}

/// A list result with the caching hints of a 2026-07-28 request: `ttlMs` from
/// `ServerOptions::list_ttl`, as `tools/list` has (each list type has its own setters).
macro_rules! with_list_hints {
    ($result:expr, $server:expr, $context:expr) => {
        match cache_hint($context, $server.shared.options.list_ttl) {
            Some(ttl) => $result
                .with_ttl_ms(ttl)
                .with_cache_scope(CacheScope::Private),
            None => $result,
        }
    };
}

/// The cursor prefixes of the lists: a cursor names the index of the next item in its
/// set (as `tools/list`'s do), and a cursor of one list is refused by another.
const RESOURCES_PAGE: &str = "resources";
const TEMPLATES_PAGE: &str = "templates";
const PROMPTS_PAGE: &str = "prompts";

/// Where a page of the `kind` list starts: 0 without a cursor; an error for a cursor
/// this server did not give for that list.
fn page_start(kind: &str, request: Option<PaginatedRequestParams>) -> Result<usize, McpError> {
    let Some(cursor) = request.and_then(|r| r.cursor) else {
        return Ok(0);
    };
    cursor
        .strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|index| usize::from_str_radix(index, 16).ok())
        .ok_or_else(|| {
            McpError::invalid_params(
                format!("invalid cursor `{cursor}`: give back the `nextCursor` of a {kind} list"),
                None,
            )
        })
}

/// The most completion values one answer carries (the spec's limit).
const MAX_COMPLETIONS: usize = CompletionInfo::MAX_VALUES;

impl McpServer {
    /// Serves `resources` beside the tools (builder style, before serving). The server
    /// then advertises resources, with subscriptions and `listChanged`.
    #[must_use]
    pub fn with_resources(self, resources: ResourceSet) -> Self {
        self.change_features(|features| features.resources = Some(resources));
        self
    }

    /// Serves `prompts` beside the tools (builder style, before serving). The server
    /// then advertises prompts, with `listChanged`, and completions.
    #[must_use]
    pub fn with_prompts(self, prompts: PromptSet) -> Self {
        self.change_features(|features| features.prompts = Some(prompts));
        self
    }

    /// Serves `resources` in place of those served so far, and tells every connected
    /// client (`notifications/resources/list_changed`, to sessions and to listen
    /// streams that asked for it). Reads already running finish with the set they
    /// started with.
    pub async fn replace_resources(&self, resources: ResourceSet) {
        self.change_features(|features| features.resources = Some(resources));
        self.notify_all(
            |peer| async move { peer.notify_resource_list_changed().await.is_ok() },
            |sink| async move { sink.notify_resource_list_changed().await.is_ok() },
        )
        .await;
    }

    /// Serves `prompts` in place of those served so far, and tells every connected
    /// client (`notifications/prompts/list_changed`).
    pub async fn replace_prompts(&self, prompts: PromptSet) {
        self.change_features(|features| features.prompts = Some(prompts));
        self.notify_all(
            |peer| async move { peer.notify_prompt_list_changed().await.is_ok() },
            |sink| async move { sink.notify_prompt_list_changed().await.is_ok() },
        )
        .await;
    }

    /// Says the resource at `uri` changed: every 2025 session subscribed to it
    /// (`resources/subscribe`) and every listen stream (protocol 2026-07-28) whose
    /// filter names it is sent `notifications/resources/updated`, as long as its caller
    /// may read the resource (a stream never learns of a change to what it cannot read).
    /// Returns how many were told.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        let sessions: Vec<Peer<RoleServer>> = self
            .live_subscribers()
            .iter()
            .filter(|s| {
                s.uris
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains(uri)
            })
            .map(|s| s.peer.clone())
            .collect();
        let notices = sessions.iter().map(|peer| {
            let params = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
            tokio::time::timeout(super::NOTICE_TIMEOUT, peer.notify_resource_updated(params))
        });
        // Only callers who may read the resource hear of it, as only they may subscribe
        // to it on a 2025 session; a URI the server does not serve needs no scope.
        let scopes: Vec<String> = self
            .shared
            .features()
            .resources
            .as_ref()
            .and_then(|set| set.resolve(uri))
            .map(|resolved| resolved.scopes().to_vec())
            .unwrap_or_default();
        let sinks = self
            .shared
            .listeners
            .sinks_of(|principal| principal_permitted(principal, &scopes));
        // A stream whose filter does not name the URI refuses the notice itself.
        let streamed = sinks.iter().map(|sink| {
            tokio::time::timeout(super::NOTICE_TIMEOUT, sink.notify_resource_updated(uri))
        });
        let (sent, streamed) = futures::future::join(
            futures::future::join_all(notices),
            futures::future::join_all(streamed),
        )
        .await;
        sent.iter().filter(|r| matches!(r, Ok(Ok(())))).count()
            + streamed.iter().filter(|r| matches!(r, Ok(Ok(())))).count()
    }

    /// Sends a notice to every live session and listen stream at once; one that does
    /// not take it in time is not waited for.
    async fn notify_all<S, SF, L, LF>(&self, session: S, stream: L)
    where
        S: Fn(Peer<RoleServer>) -> SF,
        SF: Future<Output = bool>,
        L: Fn(rmcp::service::SubscriptionSink) -> LF,
        LF: Future<Output = bool>,
    {
        let clients = self.shared.live_clients().clone();
        let notices = clients
            .into_iter()
            .map(|peer| tokio::time::timeout(super::NOTICE_TIMEOUT, session(peer)));
        let streamed = self
            .shared
            .listeners
            .sinks()
            .into_iter()
            .map(|sink| tokio::time::timeout(super::NOTICE_TIMEOUT, stream(sink)));
        let _ = futures::future::join(
            futures::future::join_all(notices),
            futures::future::join_all(streamed),
        )
        .await;
    }

    fn change_features(&self, change: impl FnOnce(&mut Features)) {
        let _one_at_a_time = self
            .shared
            .changing
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let current = self.shared.features();
        let mut next = Features {
            resources: current.resources.clone(),
            prompts: current.prompts.clone(),
        };
        change(&mut next);
        *self
            .shared
            .features
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
    }

    /// The subscribed sessions, closed ones dropped.
    fn live_subscribers(&self) -> std::sync::MutexGuard<'_, Vec<Subscriber>> {
        let mut subscribers = self
            .shared
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        subscribers.retain(|s| !s.peer.is_transport_closed());
        subscribers
    }

    /// Adds what this server offers beside tools to `capabilities`.
    pub(crate) fn feature_capabilities(&self, capabilities: &mut ServerCapabilities) {
        let features = self.shared.features();
        if features.resources.is_some() {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = Some(true);
            resources.list_changed = Some(true);
            capabilities.resources = Some(resources);
        }
        if features.prompts.is_some() {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = Some(true);
            capabilities.prompts = Some(prompts);
        }
        if features.resources.is_some() || features.prompts.is_some() {
            capabilities.completions = Some(Default::default());
        }
    }

    /// The context a read, a prompt or a completion runs with: the session, the
    /// request's cancellation, the caller's principal and the client as `McpPeer`
    /// (holding the answers of a multi-round-trip request's `input`, on 2026-07-28).
    fn feature_context(
        &self,
        context: &RequestContext<RoleServer>,
        client: Option<&Arc<RequestClient>>,
        input: Option<Arc<CallInput>>,
    ) -> ToolContext {
        let extensions = match client {
            Some(client) => {
                let mut state = toolwright_core::tool::Extensions::new();
                let peer = self.request_peer(context, client);
                state.insert(match input {
                    Some(input) => peer.with_input(input),
                    None => peer,
                });
                state
            }
            None => self.connection_state(context),
        };
        let mut ctx = ToolContext::new(session_key(context))
            .with_cancellation(context.ct.clone())
            .with_extensions(extensions);
        if let Some(principal) = access::principal(context) {
            ctx = ctx.with_state(principal);
        }
        ctx
    }

    pub(crate) fn serve_list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let start = page_start(RESOURCES_PAGE, request)?;
        let features = self.shared.features();
        let listed = features
            .resources
            .iter()
            .flat_map(|set| set.resources().iter().enumerate().skip(start))
            .filter(|(_, r)| permitted(context, r.scopes()))
            .map(|(index, r)| {
                let info = r.info();
                let mut listed = rmcp::model::Resource::new(r.uri(), &info.name);
                listed.title = info.title.clone();
                listed.description = info.description.clone();
                listed.mime_type = info.mime_type.clone();
                listed.size = info.size;
                listed.annotations = info.mcp_annotations();
                listed.icons = info.mcp_icons();
                (index, listed)
            });
        let (listed, next) = self.page(RESOURCES_PAGE, listed);
        let mut result = ListResourcesResult::with_all_items(listed);
        result.next_cursor = next;
        Ok(with_list_hints!(result, self, context))
    }

    pub(crate) fn serve_list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let start = page_start(TEMPLATES_PAGE, request)?;
        let features = self.shared.features();
        let listed = features
            .resources
            .iter()
            .flat_map(|set| set.templates().iter().enumerate().skip(start))
            .filter(|(_, t)| permitted(context, t.scopes()))
            .map(|(index, t)| {
                let info = t.info();
                let mut listed =
                    rmcp::model::ResourceTemplate::new(t.template().as_str(), &info.name);
                listed.title = info.title.clone();
                listed.description = info.description.clone();
                listed.mime_type = info.mime_type.clone();
                listed.annotations = info.mcp_annotations();
                listed.icons = info.mcp_icons();
                (index, listed)
            });
        let (listed, next) = self.page(TEMPLATES_PAGE, listed);
        let mut result = ListResourceTemplatesResult::with_all_items(listed);
        result.next_cursor = next;
        Ok(with_list_hints!(result, self, context))
    }

    pub(crate) async fn serve_read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, McpError> {
        let features = self.shared.features();
        let uri = request.uri;
        // Not offered, not matched, or not the caller's to read: all the same answer.
        let not_found = || {
            FeatureError::not_found(format!(
                "no resource at `{uri}`; resources/list and resources/templates/list \
                 name what this server offers"
            ))
            .into_mcp()
        };
        let resolved = features
            .resources
            .as_ref()
            .and_then(|set| set.resolve(&uri))
            .filter(|resolved| permitted(context, resolved.scopes()))
            .ok_or_else(not_found)?;
        let client = RequestClient::of(context);
        let ctx = self.feature_context(context, client.as_ref(), None);
        let contents = match &resolved {
            Resolved::Fixed(resource) => resource.read(&ctx).await,
            Resolved::Templated(template, params) => template.read(&uri, params, &ctx).await,
        }
        .map_err(FeatureError::into_mcp)?;
        // A resource with no contents does not exist (SEP-2164: never an empty list).
        if contents.is_empty() {
            return Err(not_found());
        }
        let mime_type = resolved.info().mime_type.as_deref();
        let contents = contents
            .into_iter()
            .map(|content| content.into_mcp(&uri, mime_type))
            .collect();
        let mut result = ReadResourceResult::new(contents);
        if cache_hint(context, std::time::Duration::ZERO).is_some() {
            result.ttl_ms = Some(0);
            result.cache_scope = Some(CacheScope::Private);
        }
        Ok(result)
    }

    /// `resources/subscribe` on a 2025 session: the session hears of changes to `uri`
    /// until it unsubscribes or closes. A URI that names no resource the caller may
    /// read is refused as not found.
    pub(crate) fn serve_subscribe(
        &self,
        request: SubscribeRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let features = self.shared.features();
        let known = features
            .resources
            .as_ref()
            .and_then(|set| set.resolve(&request.uri))
            .is_some_and(|resolved| permitted(context, resolved.scopes()));
        if !known {
            return Err(FeatureError::not_found(format!(
                "no resource at `{}` to subscribe to",
                request.uri
            ))
            .into_mcp());
        }
        let uris = self.subscriptions.get_or_init(|| {
            let uris = Arc::new(SubscribedUris::default());
            self.live_subscribers().push(Subscriber {
                peer: context.peer.clone(),
                uris: uris.clone(),
            });
            uris
        });
        uris.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(request.uri);
        Ok(())
    }

    /// `resources/unsubscribe`: the session no longer hears of changes to `uri`.
    pub(crate) fn serve_unsubscribe(&self, request: UnsubscribeRequestParams) {
        if let Some(uris) = self.subscriptions.get() {
            uris.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&request.uri);
        }
    }

    pub(crate) fn serve_list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: &RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let start = page_start(PROMPTS_PAGE, request)?;
        let features = self.shared.features();
        let listed = features
            .prompts
            .iter()
            .flat_map(|set| set.iter().enumerate().skip(start))
            .filter(|(_, p)| permitted(context, p.scopes()))
            .map(|(index, p)| {
                let arguments = p
                    .arguments()
                    .iter()
                    .map(|a| {
                        let mut argument =
                            rmcp::model::PromptArgument::new(&a.name).with_required(a.required);
                        argument.description = a.description.clone();
                        argument
                    })
                    .collect::<Vec<_>>();
                let mut listed = rmcp::model::Prompt::new(
                    p.name(),
                    p.description(),
                    (!arguments.is_empty()).then_some(arguments),
                );
                listed.title = p.title().map(str::to_owned);
                listed.icons = super::resources::icons_to_mcp(p.icons());
                (index, listed)
            });
        let (listed, next) = self.page(PROMPTS_PAGE, listed);
        let mut result = ListPromptsResult::with_all_items(listed);
        result.next_cursor = next;
        Ok(with_list_hints!(result, self, context))
    }

    /// At most `ServerOptions::page_size` of `items` (each with its index in its set),
    /// and the cursor of the next page if more remain.
    fn page<T>(
        &self,
        kind: &str,
        items: impl Iterator<Item = (usize, T)>,
    ) -> (Vec<T>, Option<String>) {
        let page_size = self.shared.options.page_size.max(1);
        let mut page = Vec::new();
        for (index, item) in items {
            if page.len() == page_size {
                return (page, Some(format!("{kind}-{index:x}")));
            }
            page.push(item);
        }
        (page, None)
    }

    /// `prompts/get`; from protocol 2026-07-28 in rounds, so that a prompt may ask its
    /// caller through `McpPeer::ask` as a tool does.
    pub(crate) async fn serve_get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if !input::asks_by_result(&context) {
            return self
                .get_prompt_with(request, &context, None)
                .await
                .map(Into::into);
        }
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        // Bound to the prompt, never to a tool of the same name: tool names have no
        // spaces, so a tool call's state cannot answer a prompt's round.
        let what = format!("prompt {}", request.name);
        let round = Round {
            what: &what,
            arguments: &arguments,
            responses: request.input_responses.take().unwrap_or_default(),
            state: request.request_state.take(),
            task: input::TaskTurn::Never,
        };
        // The prompt's own failure is the round's result: it may have failed because it
        // asked, and then its questions are the answer.
        let answered = input::in_rounds(self, context, round, async |input, context| {
            Ok(self.get_prompt_with(request, &context, Some(input)).await)
        })
        .await?;
        match answered {
            Answered::Complete(result) => result.map(Into::into),
            Answered::InputRequired(asked) => Ok(asked.into()),
        }
    }

    async fn get_prompt_with(
        &self,
        request: GetPromptRequestParams,
        context: &RequestContext<RoleServer>,
        input: Option<Arc<CallInput>>,
    ) -> Result<GetPromptResult, McpError> {
        let features = self.shared.features();
        let prompt = features
            .prompts
            .as_ref()
            .and_then(|set| set.get(&request.name))
            .filter(|p| permitted(context, p.scopes()))
            .ok_or_else(|| {
                McpError::invalid_params(
                    format!(
                        "no prompt named `{}`; prompts/list names what this server offers",
                        request.name
                    ),
                    None,
                )
            })?;
        let arguments = string_arguments(request.arguments.unwrap_or_default())
            .map_err(FeatureError::into_mcp)?;
        prompts::check_arguments(prompt.as_ref(), &arguments).map_err(FeatureError::into_mcp)?;
        let client = RequestClient::of(context);
        let ctx = self.feature_context(context, client.as_ref(), input);
        let messages = prompt.get(&arguments, &ctx).await;
        // The prompt asked for what the client did not declare: the request is refused
        // as the protocol says (-32021), as a tool's call is.
        if let Some(refusal) = client.and_then(|client| client.missing_capability()) {
            return Err(refusal);
        }
        let messages = messages.map_err(FeatureError::into_mcp)?;
        let mut result = GetPromptResult::new(messages.into_iter().map(|m| m.into_mcp()).collect());
        result.description = prompt.description().map(str::to_owned);
        Ok(result)
    }

    pub(crate) async fn serve_complete(
        &self,
        request: CompleteRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let features = self.shared.features();
        let resolved: PromptArguments = request
            .context
            .and_then(|c| c.arguments)
            .unwrap_or_default()
            .into_iter()
            .collect();
        let argument = request.argument;
        let values = match request.r#ref {
            Reference::Prompt(reference) => {
                let prompt = features
                    .prompts
                    .as_ref()
                    .and_then(|set| set.get(&reference.name))
                    .filter(|p| permitted(context, p.scopes()))
                    .ok_or_else(|| {
                        McpError::invalid_params(
                            format!("no prompt named `{}` to complete", reference.name),
                            None,
                        )
                    })?;
                // Checked here, once for every prompt: a prompt's own `complete` is
                // asked only about arguments it takes.
                let names = prompt.arguments().iter().map(|a| a.name.as_str());
                no_such_input(
                    &format!("prompt `{}`", reference.name),
                    names,
                    &argument.name,
                )?;
                prompt
                    .complete(&argument.name, &argument.value, &resolved)
                    .await
            }
            Reference::Resource(reference) => {
                let set = features.resources.as_ref();
                match set.and_then(|set| set.template(&reference.uri)) {
                    Some(template) if permitted(context, template.scopes()) => {
                        let what = format!("the template `{}`", reference.uri);
                        no_such_input(&what, template.template().variables(), &argument.name)?;
                        let resolved: UriParams = resolved.into_iter().collect();
                        template
                            .complete(&argument.name, &argument.value, &resolved)
                            .await
                    }
                    // A fixed URI has nothing to complete.
                    _ if set.and_then(|set| set.resource(&reference.uri)).is_some() => {
                        Ok(Vec::new())
                    }
                    _ => {
                        return Err(McpError::invalid_params(
                            format!(
                                "no resource template `{}` to complete; \
                                 resources/templates/list names them",
                                reference.uri
                            ),
                            None,
                        ));
                    }
                }
            }
            _ => {
                return Err(McpError::invalid_params(
                    "completion/complete takes a `ref/prompt` or `ref/resource` reference",
                    None,
                ));
            }
        }
        .map_err(FeatureError::into_mcp)?;
        let total = values.len();
        let mut values = values;
        values.truncate(MAX_COMPLETIONS);
        let mut completion = CompletionInfo::default();
        completion.has_more = Some(total > values.len());
        completion.total = u32::try_from(total).ok();
        completion.values = values;
        Ok(CompleteResult::new(completion))
    }
}

/// A `prompts/get`'s arguments as strings, as MCP defines them; a client that sends
/// another JSON type is told which argument.
fn string_arguments(
    arguments: serde_json::Map<String, Value>,
) -> Result<PromptArguments, FeatureError> {
    arguments
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => Ok((name, text)),
            other => Err(FeatureError::invalid_arguments(format!(
                "prompt argument `{name}` must be a string, got {other}"
            ))),
        })
        .collect()
}

/// Refuses completing `name` for `what` (a prompt, a template), whose inputs are
/// `names`, when it is none of them: -32602, naming them.
fn no_such_input<'a>(
    what: &str,
    names: impl Iterator<Item = &'a str>,
    name: &str,
) -> Result<(), McpError> {
    let names: Vec<&str> = names.collect();
    if names.contains(&name) {
        return Ok(());
    }
    let has = if names.is_empty() {
        "none".to_owned()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(McpError::invalid_params(
        format!("{what} has no `{name}` to complete; it has: {has}"),
        None,
    ))
}

//! Access by principal: which tools the caller of a request may see and call. The
//! transport that authenticates (the HTTP endpoint with `HttpAuth`) puts the caller's
//! [`Principal`] and the server's [`ToolScopes`] on the request; every transport's calls
//! and listings ask here, so the rule holds however a request arrives.

use rmcp::service::{RequestContext, RoleServer};
use std::collections::HashMap;
use std::sync::Arc;
use toolwright_core::{Principal, ToolSet, tool::ToolExposure};

/// The scopes each tool needs, by tool name.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolScopes(HashMap<String, Vec<String>>);

impl ToolScopes {
    /// `tool` is usable only by principals granted every one of `scopes`.
    pub(crate) fn require(&mut self, tool: String, scopes: Vec<String>) {
        self.0.insert(tool, scopes);
    }

    /// The names of the tools that need scopes.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// Every scope some tool needs (with repeats).
    pub(crate) fn all(&self) -> impl Iterator<Item = &String> {
        self.0.values().flatten()
    }

    fn permits(&self, principal: &Principal, tool: &str) -> bool {
        self.0
            .get(tool)
            .is_none_or(|needed| needed.iter().all(|scope| principal.has_scope(scope)))
    }
}

/// Whether the caller of `context`'s request may see and call `tool`: always, unless
/// the request came through an authenticating transport and the tool needs scopes its
/// principal lacks.
pub(crate) fn may_use(context: &RequestContext<RoleServer>, tool: &str) -> bool {
    let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
        return true;
    };
    match (
        parts.extensions.get::<Principal>(),
        parts.extensions.get::<Arc<ToolScopes>>(),
    ) {
        (Some(principal), Some(scopes)) => scopes.permits(principal, tool),
        _ => true,
    }
}

/// The error for a call to a tool the caller may not use: the one an unknown tool gets,
/// listing only the tools the caller may use.
pub(crate) fn unknown_tool(
    tools: &ToolSet,
    name: &str,
    context: &RequestContext<RoleServer>,
) -> rmcp::ErrorData {
    let visible = tools
        .iter()
        .filter(|tool| tool.exposure() == ToolExposure::Direct)
        .map(|tool| tool.name())
        .filter(|tool| may_use(context, tool));
    let error = toolwright_core::ToolError::unknown_tool(name, visible);
    rmcp::ErrorData::invalid_params(error.message().to_owned(), None)
}

/// The principal that made `context`'s request, when the transport authenticates.
pub(crate) fn principal(context: &RequestContext<RoleServer>) -> Option<Principal> {
    context
        .extensions
        .get::<axum::http::request::Parts>()?
        .extensions
        .get::<Principal>()
        .cloned()
}

//! [`Principal`]: who is calling, as an authenticating server established it.

use crate::model::context::ToolContext;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The authenticated caller of a tool: its subject, the scopes it was granted, and the
/// claims of its token. A server that authenticates its clients (toolwright-mcp's HTTP
/// server, for one) puts it in the [`ToolContext`] of every call; a tool reads it with
/// [`ToolContext::principal`] or a `State<Principal>` parameter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Principal {
    /// Who the caller is: the token's `sub` claim, or the name a static token was given.
    pub subject: String,
    /// The scopes granted to the caller (a token's `scope` or `scp` claim).
    pub scopes: BTreeSet<String>,
    /// Every claim of the caller's token, as it was sent (empty for a static token).
    pub claims: Map<String, Value>,
}

impl Principal {
    /// A principal named `subject`, with no scopes and no claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Self {
            subject: subject.into(),
            ..Self::default()
        }
    }

    /// The same principal, granted `scopes` as well.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Whether the caller was granted `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.contains(scope)
    }
}

impl ToolContext {
    /// The authenticated caller, when the server that runs this call authenticates its
    /// clients; `None` otherwise (an agent run, stdio, an unauthenticated server).
    pub fn principal(&self) -> Option<&Principal> {
        self.state::<Principal>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_in_the_context_is_found_and_absent_otherwise() {
        assert!(ToolContext::default().principal().is_none());
        let ctx = ToolContext::default().with_state(Principal::new("alice").with_scopes(["read"]));
        let principal = ctx.principal().expect("the principal put in the context");
        assert_eq!(principal.subject, "alice");
        assert!(principal.has_scope("read"));
        assert!(!principal.has_scope("write"));
    }
}

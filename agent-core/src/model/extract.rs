//! Parameters the runtime supplies instead of the model: `&ToolContext`, [`State<T>`],
//! [`Progress`]. `#[tool]` recognises them by type and leaves them out of the schema.

use crate::model::context::ToolContext;
use crate::model::error::ToolError;
use serde::Serialize;
use std::any::type_name;
use std::ops::Deref;

/// A value the runtime builds from the call's context.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be supplied by the runtime",
    label = "not an injected parameter type",
    note = "injected parameters are `&ToolContext`, `State<T>` and `Progress`; a parameter the model fills must be an owned type implementing `Deserialize` and `JsonSchema`"
)]
pub trait FromToolContext<'a>: Sized {
    /// Extracts the value, or explains why it is not available.
    fn from_tool_context(ctx: &'a ToolContext) -> Result<Self, ToolError>;
}

impl<'a> FromToolContext<'a> for &'a ToolContext {
    fn from_tool_context(ctx: &'a ToolContext) -> Result<Self, ToolError> {
        Ok(ctx)
    }
}

/// Application state registered by type on the [`ToolSet`](crate::ToolSet), the agent,
/// or the [`ToolContext`]. Share expensive things (pools, clients) behind an `Arc`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone + Send + Sync + 'static> FromToolContext<'_> for State<T> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        ctx.state::<T>().cloned().map(State).ok_or_else(|| {
            ToolError::execution(format!(
                "the tool needs application state of type `{}`, but none was registered; \
                 add it with `ToolSet::with_state` (or the agent's `state`)",
                type_name::<T>()
            ))
        })
    }
}

/// Publishes preliminary results while a tool works; they appear on the run's event
/// stream (and as MCP progress notifications).
#[derive(Debug, Clone)]
pub struct Progress {
    ctx: ToolContext,
}

impl Progress {
    /// Publishes `value`. Fails if it cannot be serialized or the tool's progress
    /// validator rejects it.
    pub fn emit(&self, value: impl Serialize) -> Result<(), ToolError> {
        let value = serde_json::to_value(value).map_err(|e| {
            ToolError::execution(format!("progress value could not be serialized: {e}"))
        })?;
        self.ctx.emit_progress(value)
    }
}

impl FromToolContext<'_> for Progress {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        Ok(Self { ctx: ctx.clone() })
    }
}

//! [`ToolSet`]: the tools an agent or server offers, looked up by name in O(1), with
//! exposure enforced at dispatch.

use crate::model::content::Content;
use crate::model::context::{ActivationContext, Extensions, ToolContext};
use crate::model::error::{AgentError, AgentResult, ToolError};
use crate::model::message::OutputSchema;
use crate::model::schema::{normalize_root, root_problem};
use crate::model::tool::{Tool, ToolAnnotations, ToolExposure};
use rustc_hash::FxBuildHasher;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// What a model is told about a tool. Built once, when the tool is registered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// A human-readable title, if the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the arguments (root `{"type": "object"}`).
    pub parameters: Value,
    /// JSON Schema of the structured result, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Effect hints.
    #[serde(default)]
    pub annotations: ToolAnnotations,
    /// Example inputs ([`Tool::input_examples`]), for providers that show them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_examples: Vec<Value>,
    /// The tool's own strict-mode choice ([`Tool::strict`]); `None` leaves it to the
    /// client. [`Dialect::render`](crate::dialect::Dialect::render) honours it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl ToolDefinition {
    /// The definition of `tool`, its schema root normalised. Fails when the schema cannot
    /// describe arguments (its root is not an object).
    pub fn of(tool: &dyn Tool) -> AgentResult<Self> {
        let parameters = normalize_root(tool.schema());
        if let Some(reason) = root_problem(&parameters) {
            return Err(AgentError::InvalidTool {
                tool: tool.name().to_owned(),
                reason,
            });
        }
        let annotations = tool.annotations();
        Ok(Self {
            name: tool.name().to_owned(),
            title: annotations.title.clone(),
            description: tool.description().to_owned(),
            parameters,
            output_schema: tool.output_schema(),
            annotations,
            input_examples: tool.input_examples(),
            strict: tool.strict(),
        })
    }
}

/// Whether `name` is a tool name every major provider accepts:
/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

struct Entry {
    tool: Arc<dyn Tool>,
    exposure: ToolExposure,
    definition: Arc<ToolDefinition>,
}

/// A set of tools with unique names, plus application state for `State<T>` parameters.
///
/// Build one with `tools![a, b]`, or [`ToolSet::new`] and [`register_tool`](Self::register_tool).
#[derive(Default)]
pub struct ToolSet {
    entries: Vec<Entry>,
    /// FxHash: the names are the application's, so a model's guesses can only miss,
    /// never crowd a bucket, and SipHash's flooding defence buys nothing here.
    index: HashMap<Arc<str>, usize, FxBuildHasher>,
    state: Extensions,
}

impl ToolSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool. Fails if the name is taken or invalid, or the schema's root is not an
    /// object.
    pub fn register_tool<T: Tool + 'static>(&mut self, tool: T) -> AgentResult<&mut Self> {
        self.register_arc(Arc::new(tool))
    }

    /// Adds a shared tool; see [`register_tool`](Self::register_tool).
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> AgentResult<&mut Self> {
        let name = tool.name();
        if !is_valid_tool_name(name) {
            return Err(AgentError::InvalidTool {
                tool: name.to_owned(),
                reason: "a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$".to_owned(),
            });
        }
        if self.index.contains_key(name) {
            return Err(AgentError::DuplicateTool(name.to_owned()));
        }
        let definition = Arc::new(ToolDefinition::of(tool.as_ref())?);
        self.index.insert(Arc::from(name), self.entries.len());
        self.entries.push(Entry {
            exposure: tool.exposure(),
            tool,
            definition,
        });
        Ok(self)
    }

    /// The set with `tool` added; see [`register_tool`](Self::register_tool).
    pub fn with_tool<T: Tool + 'static>(mut self, tool: T) -> AgentResult<Self> {
        self.register_tool(tool)?;
        Ok(self)
    }

    /// Moves every tool of `other` into this set, and its state: each value of a type
    /// this set holds no value of. Fails, adding none, on a name both sets hold.
    pub fn extend(&mut self, other: ToolSet) -> AgentResult<()> {
        if let Some(taken) = other
            .entries
            .iter()
            .find(|e| self.index.contains_key(e.tool.name()))
        {
            return Err(AgentError::DuplicateTool(taken.tool.name().to_owned()));
        }
        self.state.merge_missing(other.state);
        for entry in other.entries {
            self.index
                .insert(Arc::from(entry.tool.name()), self.entries.len());
            self.entries.push(entry);
        }
        Ok(())
    }

    /// The set with `value` available to `State<T>` parameters of its tools.
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert_state(value);
        self
    }

    /// Makes `value` available to `State<T>` parameters of this set's tools.
    pub fn insert_state<T: Send + Sync + 'static>(&mut self, value: T) {
        self.state.insert(value);
    }

    /// The application state registered on this set.
    pub fn state(&self) -> &Extensions {
        &self.state
    }

    /// How many tools are registered, whatever their exposure.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The registered tool with this name, whatever its exposure. This is the
    /// application's view; the model's view is [`call`](Self::call).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.entry(name).map(|entry| &entry.tool)
    }

    /// The registered tools, in registration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Arc<dyn Tool>> {
        self.entries.iter().map(|entry| &entry.tool)
    }

    /// The cached definition of the tool with this name.
    pub fn definition(&self, name: &str) -> Option<&Arc<ToolDefinition>> {
        self.entry(name).map(|entry| &entry.definition)
    }

    /// Definitions of the tools the model may see in this context: every Direct tool
    /// and every Deferred tool whose `should_activate` agrees, in registration order.
    pub async fn active_definitions(&self, ctx: &ActivationContext) -> Vec<Arc<ToolDefinition>> {
        let mut active = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            let offered = match entry.exposure {
                ToolExposure::Direct => true,
                ToolExposure::Deferred => entry.tool.should_activate(ctx).await,
                ToolExposure::Hidden => false,
            };
            if offered {
                active.push(entry.definition.clone());
            }
        }
        active
    }

    /// The activation context of a call: its session and workspace, with the Direct
    /// tools as the tools already offered.
    pub fn activation_context(&self, ctx: &ToolContext) -> ActivationContext {
        ActivationContext {
            session_id: ctx.session_id().to_owned(),
            current_tools: self.direct_names().map(str::to_owned).collect(),
            workspace: ctx.workspace().map(Into::into).unwrap_or_default(),
        }
    }

    /// The tool the model may call by `name` in this context, or the error the model
    /// should see: Hidden tools and inactive Deferred tools answer as unknown tools.
    pub async fn resolve(
        &self,
        name: &str,
        ctx: &ActivationContext,
    ) -> Result<&Arc<dyn Tool>, ToolError> {
        let position = self.callable_position(name, ctx).await?;
        Ok(self.tool_at(position))
    }

    /// [`resolve`](Self::resolve), answering with where the tool is in the set.
    pub(crate) async fn callable_position(
        &self,
        name: &str,
        ctx: &ActivationContext,
    ) -> Result<usize, ToolError> {
        let callable = match self.index.get(name) {
            Some(&position) => match self.entries[position].exposure {
                ToolExposure::Direct => Some(position),
                ToolExposure::Deferred
                    if self.entries[position].tool.should_activate(ctx).await =>
                {
                    Some(position)
                }
                ToolExposure::Deferred | ToolExposure::Hidden => None,
            },
            None => None,
        };
        callable.ok_or_else(|| ToolError::unknown_tool(name, self.direct_names()))
    }

    /// [`resolve`](Self::resolve) for a call made in `ctx`. The activation context is
    /// built only when `name` is not a Direct tool: it lists every Direct tool, a string
    /// each, and a Direct tool is callable without asking.
    pub async fn resolve_in(
        &self,
        name: &str,
        ctx: &ToolContext,
    ) -> Result<&Arc<dyn Tool>, ToolError> {
        match self.entry(name) {
            Some(entry) if entry.exposure == ToolExposure::Direct => Ok(&entry.tool),
            _ => self.resolve(name, &self.activation_context(ctx)).await,
        }
    }

    /// `ctx` with this set's state behind its own.
    pub fn context_for<'c>(&self, ctx: &'c ToolContext) -> Cow<'c, ToolContext> {
        if self.state.is_empty() {
            Cow::Borrowed(ctx)
        } else {
            Cow::Owned(ctx.clone().inheriting_state(&self.state))
        }
    }

    /// Calls the tool `name` as the model would: exposure is enforced (a Hidden or
    /// inactive Deferred tool is an unknown tool), arguments are checked by the tool, and
    /// the set's state is available to it. Timeouts, approval and concurrency are the
    /// executor's; this is the bare dispatch.
    // An `async` block, not an `async fn`: the block reads what it captures in place,
    // where an `async fn` first copies its parameters into its state, and that copy of
    // `name`, just written by the caller, stalled store forwarding on every call.
    #[allow(clippy::manual_async_fn)]
    pub fn call<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = AgentResult<Vec<Content>>> + Send + 'a {
        async move {
            let tool = self.resolve_in(name, ctx).await?;
            // Without state the caller's context is the tool's: no `Cow` to build and drop.
            if self.state.is_empty() {
                tool.call(args, ctx).await
            } else {
                tool.call(args, &self.context_for(ctx)).await
            }
        }
    }

    /// The position, in registration order, of the tool named `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The tool at `position` (see [`position`](Self::position)).
    pub(crate) fn tool_at(&self, position: usize) -> &Arc<dyn Tool> {
        &self.entries[position].tool
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    /// The names of the tools every context is offered.
    pub(crate) fn direct_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.entries
            .iter()
            .filter(|e| e.exposure == ToolExposure::Direct)
            .map(|e| e.tool.name())
    }
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field(
                "tools",
                &self
                    .entries
                    .iter()
                    .map(|e| e.tool.name())
                    .collect::<Vec<_>>(),
            )
            .field("state", &self.state)
            .finish()
    }
}

/// Cloning shares the tools, their definitions and the state (a reference count each):
/// a copy to change, as a server whose tools change at run time makes, costs one pointer
/// per tool.
impl Clone for ToolSet {
    fn clone(&self) -> Self {
        Self {
            entries: self
                .entries
                .iter()
                .map(|entry| Entry {
                    tool: entry.tool.clone(),
                    exposure: entry.exposure,
                    definition: entry.definition.clone(),
                })
                .collect(),
            index: self.index.clone(),
            state: self.state.clone(),
        }
    }
}

impl ToolSet {
    /// Takes the tool named `name` out of the set, if it holds one; the others keep
    /// their order.
    pub fn remove(&mut self, name: &str) -> Option<Arc<dyn Tool>> {
        let position = self.index.remove(name)?;
        let entry = self.entries.remove(position);
        for later in self.index.values_mut().filter(|p| **p > position) {
            *later -= 1;
        }
        Some(entry.tool)
    }
}

impl<'a> IntoIterator for &'a ToolSet {
    type Item = &'a Arc<dyn Tool>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = &'a Arc<dyn Tool>> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl OutputSchema {
    /// The schema as a tool definition, its root an object: how clients render it in
    /// their dialect (for a structured-output field, or as the final-answer tool).
    pub fn as_tool(&self) -> ToolDefinition {
        ToolDefinition {
            name: Self::ANSWER_TOOL.to_owned(),
            title: None,
            description: format!(
                "Give your final answer (`{}`) by calling this tool with it as the arguments.",
                self.name
            ),
            parameters: normalize_root(self.schema.clone()),
            output_schema: None,
            annotations: Default::default(),
            ..Default::default()
        }
    }
}

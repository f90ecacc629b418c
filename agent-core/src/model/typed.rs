//! [`TypedTool`]: a tool whose arguments and result are Rust types.

use crate::model::args::decode_args;
use crate::model::content::Content;
use crate::model::context::{ActivationContext, ToolContext};
use crate::model::error::{AgentResult, ToolError};
use crate::model::schema::ArgsSchema;
#[cfg(doc)]
use crate::model::tool::Tool;
use crate::model::tool::{
    ApprovalPolicy, BoxFuture, ErrorPolicy, TaskSupport, ToolAnnotations, ToolConcurrency,
    ToolExposure, ToolMetadata, ToolRoute, ToolVia,
};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A tool with typed arguments: the schema is derived from `Args` (once, then cached),
/// the model's JSON is decoded into `Args` with errors that name the field, and `Output`
/// becomes content: `String` and `&'static str` are text, `Content` and `Vec<Content>`
/// pass through, `()` is empty, anything else is JSON (text, plus a structured block when
/// it is an object).
///
/// Every `TypedTool` is a [`Tool`]. The optional methods mirror `Tool`'s.
#[async_trait]
pub trait TypedTool: Send + Sync {
    /// The arguments the model sends.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// What the tool returns.
    type Output: Serialize + Send + 'static;

    /// Unique identifier the model uses to call this tool.
    fn name(&self) -> &str;

    /// What the tool does, written for the model.
    fn description(&self) -> &str;

    /// Runs the tool on decoded arguments.
    async fn call_typed(&self, args: Self::Args, ctx: &ToolContext) -> AgentResult<Self::Output>;

    /// The argument schema and what decoding needs to know about it. Built once per
    /// `Args` type; override only to supply a static you already hold.
    fn args_schema(&self) -> &'static ArgsSchema {
        ArgsSchema::cached::<Self::Args>()
    }

    /// See [`Tool::timeout_ms`].
    fn timeout_ms(&self) -> Option<u64> {
        None
    }

    /// See [`Tool::metadata`].
    fn metadata(&self) -> ToolMetadata {
        ToolMetadata::custom(self.name(), self.description())
    }

    /// See [`Tool::exposure`].
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Direct
    }

    /// See [`Tool::should_activate`].
    // Written as `#[async_trait]` expands it, with a ready future: the default is then
    // one small fn per tool, not a state machine per tool.
    fn should_activate<'life0, 'life1, 'async_trait>(
        &'life0 self,
        _ctx: &'life1 ActivationContext,
    ) -> BoxFuture<'async_trait, bool>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(std::future::ready(true))
    }

    /// See [`Tool::approval`].
    fn approval(&self, _args: &Value) -> ApprovalPolicy {
        ApprovalPolicy::Unspecified
    }

    /// See [`Tool::on_error`].
    fn on_error(&self) -> ErrorPolicy {
        ErrorPolicy::ReturnToModel
    }

    /// See [`Tool::output_schema`].
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// See [`Tool::annotations`].
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// See [`Tool::concurrency`].
    fn concurrency(&self) -> ToolConcurrency {
        ToolConcurrency::default()
    }

    /// See [`Tool::validate_output`].
    fn validate_output(&self, _output: &[Content]) -> Result<(), String> {
        Ok(())
    }

    /// See [`Tool::validate_progress`].
    fn validate_progress(&self, _progress: &Value) -> Result<(), String> {
        Ok(())
    }

    /// See [`Tool::task_support`].
    fn task_support(&self) -> TaskSupport {
        TaskSupport::Forbidden
    }

    /// See [`Tool::input_examples`].
    fn input_examples(&self) -> Vec<Value> {
        Vec::new()
    }

    /// See [`Tool::strict`].
    fn strict(&self) -> Option<bool> {
        None
    }
}

/// The [`ToolRoute`] of every [`TypedTool`]: its `Tool` methods are the ones below.
#[doc(hidden)]
pub struct ViaTyped;

#[diagnostic::do_not_recommend]
impl<T: TypedTool> ToolRoute for T {
    type Route = ViaTyped;
}

impl<T: TypedTool> ToolVia<ViaTyped> for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn schema(&self) -> Value {
        self.args_schema().schema().clone()
    }

    // Not an `async fn`: the arguments are decoded here, and the future is the tool's own
    // with the conversion to content around it, generic in the output type only. An
    // `async` body would be one more state machine per tool.
    fn call<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, AgentResult<Vec<Content>>> {
        match decode_args::<T::Args>(self.args_schema(), args) {
            Ok(args) => Box::pin(ToContent(self.call_typed(args, ctx))),
            Err(error) => Box::pin(std::future::ready(Err(error.into()))),
        }
    }

    fn timeout_ms(&self) -> Option<u64> {
        TypedTool::timeout_ms(self)
    }

    fn metadata(&self) -> ToolMetadata {
        TypedTool::metadata(self)
    }

    fn exposure(&self) -> ToolExposure {
        TypedTool::exposure(self)
    }

    fn should_activate<'a>(&'a self, ctx: &'a ActivationContext) -> BoxFuture<'a, bool> {
        TypedTool::should_activate(self, ctx)
    }

    fn approval(&self, args: &Value) -> ApprovalPolicy {
        TypedTool::approval(self, args)
    }

    fn on_error(&self) -> ErrorPolicy {
        TypedTool::on_error(self)
    }

    fn output_schema(&self) -> Option<Value> {
        TypedTool::output_schema(self)
    }

    fn annotations(&self) -> ToolAnnotations {
        TypedTool::annotations(self)
    }

    fn concurrency(&self) -> ToolConcurrency {
        TypedTool::concurrency(self)
    }

    fn validate_output(&self, output: &[Content]) -> Result<(), String> {
        TypedTool::validate_output(self, output)
    }

    fn validate_progress(&self, progress: &Value) -> Result<(), String> {
        TypedTool::validate_progress(self, progress)
    }

    fn uses_context(&self) -> bool {
        true
    }

    fn task_support(&self) -> TaskSupport {
        TypedTool::task_support(self)
    }

    fn input_examples(&self) -> Vec<Value> {
        TypedTool::input_examples(self)
    }

    fn strict(&self) -> Option<bool> {
        TypedTool::strict(self)
    }
}

/// A typed call's future, its output converted to content when it is ready.
struct ToContent<'a, O>(BoxFuture<'a, AgentResult<O>>);

impl<O: Serialize + 'static> Future for ToContent<'_, O> {
    type Output = AgentResult<Vec<Content>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0
            .as_mut()
            .poll(cx)
            .map(|output| Ok(into_content(output?)?))
    }
}

/// Converts a tool's result into content, by the rules of [`TypedTool`].
pub fn into_content<O: Serialize + 'static>(output: O) -> Result<Vec<Content>, ToolError> {
    // Moved out through `Option::take` so the common kinds are not re-serialized.
    let mut slot = Some(output);
    let any: &mut dyn Any = &mut slot;
    if let Some(text) = any.downcast_mut::<Option<String>>().and_then(Option::take) {
        return Ok(vec![Content::text(text)]);
    }
    if let Some(text) = any
        .downcast_mut::<Option<&'static str>>()
        .and_then(Option::take)
    {
        return Ok(vec![Content::text(text)]);
    }
    if let Some(content) = any.downcast_mut::<Option<Content>>().and_then(Option::take) {
        return Ok(vec![content]);
    }
    if let Some(content) = any
        .downcast_mut::<Option<Vec<Content>>>()
        .and_then(Option::take)
    {
        return Ok(content);
    }
    if any.downcast_mut::<Option<()>>().is_some() {
        return Ok(Vec::new());
    }
    let value = serde_json::to_value(&slot).map_err(|e| {
        ToolError::execution(format!("the tool's result could not be serialized: {e}"))
    })?;
    let text = value.to_string();
    Ok(match value {
        Value::Object(_) => vec![Content::text(text), Content::json(value)],
        _ => vec![Content::text(text)],
    })
}

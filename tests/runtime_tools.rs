//! Hand-written tools for the runtime's tests: one configurable `FnTool` whose body is a
//! closure, so each test states the behaviour it needs in one place.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, async_trait,
    tool::{
        ActivationContext, ApprovalPolicy, ErrorPolicy, ToolAnnotations, ToolConcurrency,
        ToolExposure,
    },
};

/// The future a tool body returns.
pub type BodyFuture = Pin<Box<dyn Future<Output = AgentResult<Vec<Content>>> + Send>>;
type Body = Arc<dyn Fn(Value, ToolContext) -> BodyFuture + Send + Sync>;
type ArgsApproval = Arc<dyn Fn(&Value) -> ApprovalPolicy + Send + Sync>;
type Check<T> = Arc<dyn Fn(&T) -> Result<(), String> + Send + Sync>;

/// A tool whose every trait method is set by the test.
#[derive(Clone)]
pub struct FnTool {
    name: &'static str,
    body: Body,
    timeout_ms: Option<u64>,
    annotations: ToolAnnotations,
    concurrency: ToolConcurrency,
    approval: Option<ArgsApproval>,
    on_error: ErrorPolicy,
    exposure: ToolExposure,
    active: Option<Arc<AtomicBool>>,
    external: bool,
    validate_output: Option<Check<[Content]>>,
    validate_progress: Option<Check<Value>>,
}

impl FnTool {
    /// A tool running `body` on each call.
    pub fn new<F, Fut>(name: &'static str, body: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = AgentResult<Vec<Content>>> + Send + 'static,
    {
        Self {
            name,
            body: Arc::new(move |args, ctx| Box::pin(body(args, ctx))),
            timeout_ms: None,
            annotations: ToolAnnotations::default(),
            concurrency: ToolConcurrency::default(),
            approval: None,
            on_error: ErrorPolicy::ReturnToModel,
            exposure: ToolExposure::Direct,
            active: None,
            external: false,
            validate_output: None,
            validate_progress: None,
        }
    }

    /// A tool answering `text` at once.
    pub fn text(name: &'static str, text: &'static str) -> Self {
        Self::new(
            name,
            move |_, _| async move { Ok(vec![Content::text(text)]) },
        )
    }

    /// A tool that counts its calls in `counter` and answers `text`.
    pub fn counting(name: &'static str, counter: Arc<AtomicUsize>) -> Self {
        Self::new(name, move |_, _| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(vec![Content::text(format!("{name} ran"))])
            }
        })
    }

    pub fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    pub fn read_only(mut self) -> Self {
        self.annotations.read_only = Some(true);
        self
    }

    pub fn destructive(mut self) -> Self {
        self.annotations.destructive = Some(true);
        self
    }

    pub fn max_in_flight(mut self, limit: usize) -> Self {
        self.concurrency.max_in_flight = Some(limit);
        self
    }

    pub fn exclusive_group(mut self, group: &str) -> Self {
        self.concurrency.exclusive_group = Some(group.to_owned());
        self
    }

    pub fn sequential(mut self, sequential: bool) -> Self {
        self.concurrency.sequential = Some(sequential);
        self
    }

    pub fn approval(
        mut self,
        rule: impl Fn(&Value) -> ApprovalPolicy + Send + Sync + 'static,
    ) -> Self {
        self.approval = Some(Arc::new(rule));
        self
    }

    pub fn require_approval(self) -> Self {
        self.approval(|_| ApprovalPolicy::Required)
    }

    pub fn fail_run(mut self) -> Self {
        self.on_error = ErrorPolicy::FailRun;
        self
    }

    pub fn hidden(mut self) -> Self {
        self.exposure = ToolExposure::Hidden;
        self
    }

    /// Deferred: offered while `active` is true.
    pub fn deferred(mut self, active: Arc<AtomicBool>) -> Self {
        self.exposure = ToolExposure::Deferred;
        self.active = Some(active);
        self
    }

    pub fn external(mut self) -> Self {
        self.external = true;
        self
    }

    pub fn validate_output(
        mut self,
        check: impl Fn(&[Content]) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.validate_output = Some(Arc::new(check));
        self
    }

    pub fn validate_progress(
        mut self,
        check: impl Fn(&Value) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.validate_progress = Some(Arc::new(check));
        self
    }
}

#[async_trait]
impl Tool for FnTool {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        "A tool written for a test."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(&self, args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        (self.body)(args.clone(), ctx.clone()).await
    }

    fn timeout_ms(&self) -> Option<u64> {
        self.timeout_ms
    }

    fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    async fn should_activate(&self, _ctx: &ActivationContext) -> bool {
        self.active
            .as_ref()
            .is_none_or(|active| active.load(Ordering::SeqCst))
    }

    fn approval(&self, args: &Value) -> ApprovalPolicy {
        self.approval
            .as_ref()
            .map_or(ApprovalPolicy::Unspecified, |rule| rule(args))
    }

    fn on_error(&self) -> ErrorPolicy {
        self.on_error
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations.clone()
    }

    fn concurrency(&self) -> ToolConcurrency {
        self.concurrency.clone()
    }

    fn is_external(&self) -> bool {
        self.external
    }

    fn validate_output(&self, output: &[Content]) -> Result<(), String> {
        self.validate_output
            .as_ref()
            .map_or(Ok(()), |check| check(output))
    }

    fn validate_progress(&self, progress: &Value) -> Result<(), String> {
        self.validate_progress
            .as_ref()
            .map_or(Ok(()), |check| check(progress))
    }
}

/// Counts calls in flight and remembers the most seen at once.
#[derive(Debug, Default)]
pub struct InFlight {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl InFlight {
    /// Marks a call as running until the guard drops.
    pub fn enter(self: &Arc<Self>) -> InFlightGuard {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        InFlightGuard(self.clone())
    }

    /// The most calls seen running at once.
    pub fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

/// Leaves the in-flight count when dropped.
pub struct InFlightGuard(Arc<InFlight>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Sets a flag when dropped: proves a call's future was dropped (aborted).
pub struct DropFlag(pub Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The text of a result's first block.
pub fn first_text(content: &[Content]) -> &str {
    content.first().and_then(Content::as_text).unwrap_or("")
}

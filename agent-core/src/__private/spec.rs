//! A `#[tool]` as data: a [`ToolSpec`] static per tool, read by one `Tool`
//! implementation, over [`SpecSource`]: for [`FnTool`], compiled once here for every tool
//! of every crate, and for the tool types `#[tool]` generates (through [`ViaSpec`]), so
//! they need no `Tool` impl of their own.
//!
//! What is left per tool is the static and [`RunTool::run`], the user's fn called on its
//! decoded arguments (see `agent-macros/src/expand.rs`); reading them is [`call_tool`],
//! generic in the tool type: no trait impl, vtable or decoder of its own is compiled per
//! tool when the tool is reached through `tools![]` or the registry.

use super::{
    ApprovalFn, BoxFuture, FieldSchema, ValidateOutputFn, ValidateProgressFn, annotations,
    cached_args_schema, cached_output_schema, concurrency, metadata,
};
use crate::ToolSet;
use crate::args::ArgsReader;
use crate::content::Content;
use crate::context::{ActivationContext, ToolContext};
use crate::error::{AgentResult, ToolError};
use crate::schema::ArgsSchema;
use crate::tool::{
    Approval, ErrorPolicy, Tool, ToolAnnotations, ToolConcurrency, ToolExposure, ToolMetadata,
    ToolRoute, ToolVia,
};
use crate::typed::into_content;
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

/// A tool's call: decodes the arguments, then runs the tool. The future borrows the
/// context only.
pub type CallFn = for<'a> fn(&Value, &'a ToolContext) -> BoxFuture<'a, AgentResult<Vec<Content>>>;

/// A deferred tool's `activate_when`, boxed.
pub type ActivateFn = for<'a> fn(&'a ActivationContext) -> BoxFuture<'a, bool>;

/// Whether a tool's calls need approval.
#[derive(Clone, Copy)]
pub enum ApprovalRule {
    /// The tool does not say (`Approval::Unspecified`).
    Unspecified,
    /// Every call (`require_approval`).
    Always,
    /// A fn decides per call (`require_approval = path`).
    When(ApprovalFn),
}

/// Everything a `#[tool]` declares, as constants: built by `const fn`s in a static, so a
/// tool's description costs no code.
pub struct ToolSpec {
    name: &'static str,
    description: &'static str,
    origin: &'static str,
    version: &'static str,
    requirements: &'static [&'static str],
    names: &'static [&'static str],
    fields: &'static [FieldSchema],
    output_schema: fn() -> Option<Value>,
    timeout_ms: Option<u64>,
    exposure: ToolExposure,
    activate: Option<ActivateFn>,
    approval: ApprovalRule,
    on_error: ErrorPolicy,
    title: Option<&'static str>,
    hints: [bool; 4],
    max_in_flight: Option<usize>,
    exclusive_group: Option<&'static str>,
    sequential: bool,
    uses_context: bool,
    validate_output: Option<ValidateOutputFn>,
    validate_progress: Option<ValidateProgressFn>,
    args_schema: OnceLock<ArgsSchema>,
    output_cell: OnceLock<Option<Value>>,
}

impl ToolSpec {
    // Empty caches as constants: copying a constant is one step for rustc's const
    // evaluator, where `OnceLock::new()` is a call with calls of its own, for every tool.
    #[allow(clippy::declare_interior_mutable_const)]
    const NO_ARGS_SCHEMA: OnceLock<ArgsSchema> = OnceLock::new();
    #[allow(clippy::declare_interior_mutable_const)]
    const NO_OUTPUT_SCHEMA: OnceLock<Option<Value>> = OnceLock::new();

    /// A tool with the defaults of every optional key. `names` are the properties in
    /// parameter order, `fields` their schemas, `output_schema` builds the output's.
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        name: &'static str,
        description: &'static str,
        origin: &'static str,
        version: &'static str,
        requirements: &'static [&'static str],
        names: &'static [&'static str],
        fields: &'static [FieldSchema],
        output_schema: fn() -> Option<Value>,
    ) -> Self {
        Self {
            name,
            description,
            origin,
            version,
            requirements,
            names,
            fields,
            output_schema,
            timeout_ms: None,
            exposure: ToolExposure::Direct,
            activate: None,
            approval: ApprovalRule::Unspecified,
            on_error: ErrorPolicy::ReturnToModel,
            title: None,
            hints: [false; 4],
            max_in_flight: None,
            exclusive_group: None,
            sequential: false,
            uses_context: true,
            validate_output: None,
            validate_progress: None,
            args_schema: Self::NO_ARGS_SCHEMA,
            output_cell: Self::NO_OUTPUT_SCHEMA,
        }
    }

    /// For a fn with no `&ToolContext` and no `State<T>` parameter.
    pub const fn without_context(mut self) -> Self {
        self.uses_context = false;
        self
    }

    /// `timeout`/`timeout_ms`.
    pub const fn with_timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// `exposure`.
    pub const fn with_exposure(mut self, exposure: ToolExposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// `activate_when`.
    pub const fn with_activate_when(mut self, activate: ActivateFn) -> Self {
        self.activate = Some(activate);
        self
    }

    /// `require_approval`.
    pub const fn with_approval(mut self, approval: ApprovalRule) -> Self {
        self.approval = approval;
        self
    }

    /// `on_error`.
    pub const fn with_on_error(mut self, on_error: ErrorPolicy) -> Self {
        self.on_error = on_error;
        self
    }

    /// `title` and the hints `read_only`, `destructive`, `idempotent`, `open_world`.
    pub const fn with_annotations(mut self, title: Option<&'static str>, hints: [bool; 4]) -> Self {
        self.title = title;
        self.hints = hints;
        self
    }

    /// `max_in_flight`, `exclusive` and `sequential`.
    pub const fn with_concurrency(
        mut self,
        max_in_flight: Option<usize>,
        exclusive_group: Option<&'static str>,
        sequential: bool,
    ) -> Self {
        self.max_in_flight = max_in_flight;
        self.exclusive_group = exclusive_group;
        self.sequential = sequential;
        self
    }

    /// `validate_output`.
    pub const fn with_validate_output(mut self, validate: ValidateOutputFn) -> Self {
        self.validate_output = Some(validate);
        self
    }

    /// `validate_progress`.
    pub const fn with_validate_progress(mut self, validate: ValidateProgressFn) -> Self {
        self.validate_progress = Some(validate);
        self
    }

    /// See [`Tool::name`].
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// See [`Tool::description`].
    pub fn description(&self) -> &'static str {
        self.description
    }

    /// The argument schema, built on first use.
    pub fn args_schema(&'static self) -> &'static ArgsSchema {
        cached_args_schema(&self.args_schema, self.fields)
    }

    /// See [`Tool::schema`].
    pub fn schema(&'static self) -> Value {
        self.args_schema().schema().clone()
    }

    /// The reader of one call's arguments, into `slots` (one per parameter).
    pub fn reader<'v, 's>(
        &'static self,
        args: &'v Value,
        slots: &'s mut [Option<&'v Value>],
    ) -> Result<ArgsReader<'v, 's>, ToolError> {
        ArgsReader::new(self.args_schema(), self.names, args, slots)
    }

    /// See [`Tool::timeout_ms`].
    pub fn timeout_ms(&self) -> Option<u64> {
        self.timeout_ms
    }

    /// See [`Tool::metadata`].
    pub fn metadata(&self) -> ToolMetadata {
        metadata(
            self.name,
            self.description,
            self.origin,
            self.version,
            self.requirements,
        )
    }

    /// See [`Tool::exposure`].
    pub fn exposure(&self) -> ToolExposure {
        self.exposure
    }

    /// See [`Tool::should_activate`].
    pub fn should_activate<'a>(&self, ctx: &'a ActivationContext) -> BoxFuture<'a, bool> {
        match self.activate {
            Some(activate) => activate(ctx),
            None => Box::pin(std::future::ready(true)),
        }
    }

    /// See [`Tool::approval`].
    pub fn approval(&self, args: &Value) -> Approval {
        match self.approval {
            ApprovalRule::Unspecified => Approval::Unspecified,
            ApprovalRule::Always => Approval::Required,
            ApprovalRule::When(decide) => Approval::from(decide(args)),
        }
    }

    /// See [`Tool::on_error`].
    pub fn on_error(&self) -> ErrorPolicy {
        self.on_error
    }

    /// See [`Tool::output_schema`].
    pub fn output_schema(&'static self) -> Option<Value> {
        cached_output_schema(&self.output_cell, self.output_schema)
    }

    /// See [`Tool::annotations`].
    pub fn annotations(&self) -> ToolAnnotations {
        let [read_only, destructive, idempotent, open_world] = self.hints;
        annotations(self.title, read_only, destructive, idempotent, open_world)
    }

    /// See [`Tool::concurrency`].
    pub fn concurrency(&self) -> ToolConcurrency {
        concurrency(self.max_in_flight, self.exclusive_group, self.sequential)
    }

    /// See [`Tool::validate_output`].
    pub fn validate_output(&self, output: &[Content]) -> Result<(), String> {
        self.validate_output
            .map_or(Ok(()), |validate| validate(output))
    }

    /// See [`Tool::validate_progress`].
    pub fn validate_progress(&self, progress: &Value) -> Result<(), String> {
        self.validate_progress
            .map_or(Ok(()), |validate| validate(progress))
    }

    /// Whether a call reads its context.
    pub fn uses_context(&self) -> bool {
        self.uses_context
    }
}

/// A `#[tool]` fn as a `Tool`: its spec and its call. `tools![]` and the registry build
/// this, so no tool needs a vtable of its own.
pub struct FnTool {
    spec: &'static ToolSpec,
    call: CallFn,
}

/// The `Tool` of a `#[tool]` fn.
pub fn fn_tool(spec: &'static ToolSpec, call: CallFn) -> Arc<dyn Tool> {
    Arc::new(FnTool { spec, call })
}

/// The `Tool` of the `#[tool]` fn whose type is `T`, for `tools![]` and the registry.
/// Generic rather than a fn per tool: its copies are compiled with this crate's code, not
/// in the module of the tools, so editing a tool does not recompile them.
pub fn static_tool<T: super::StaticTool>() -> Arc<dyn Tool> {
    fn_tool(T::SPEC, T::CALL)
}

/// What a `#[tool]` fn of up to 12 parameters generates, implemented by its tool type:
/// its name and spec, and the fn run on its arguments. Reading them is [`call_tool`]'s;
/// the rest of [`StaticTool`](super::StaticTool) follows.
pub trait ToolRun: 'static {
    /// The tool's name.
    const NAME: &'static str;
    /// The tool as data.
    const SPEC: &'static ToolSpec;
    /// The parameters the model fills, in order, as a tuple.
    type Args: ReadArgs;
    /// How each is read.
    const PLAN: <Self::Args as ReadArgs>::Plan;
    /// The defaults of those that have one (written only by a tool with a default).
    const DEFAULTS: <Self::Args as ReadArgs>::Defaults = <Self::Args as ReadArgs>::NO_DEFAULTS;
    /// The type whose [`RunTool`] impl holds the tool's run fn: one of the runners (`r0`
    /// to `r7`, see `runners`).
    type Runner: RunTool<Self>;
}

/// The run fn of tool `T`: the fn's future on its arguments (and on the context, for the
/// parameters the runtime supplies), its output converted and boxed.
pub trait RunTool<T: ToolRun + ?Sized> {
    /// The boxed future.
    fn run<'a>(args: T::Args, ctx: &'a ToolContext) -> BoxFuture<'a, AgentResult<Vec<Content>>>;
}

/// The types implementing [`RunTool`], one per module. rustc compiles a trait impl's
/// methods in the codegen unit of the module defining the impl's type, so each tool's run
/// fn lands in its runner's unit rather than in the tools' module. An edit to one tool
/// recompiles every unit naming its future: the tools' module (as for plain fns) and one
/// runner with an eighth of the run fns, rather than all of them. More runners would cut
/// an edit further but cost a clean build more (each unit has a fixed cost).
/// `#[tool]` picks one by a hash of the tool's name, modulo 8.
pub mod runners {
    macro_rules! runners {
        ($($module:ident)*) => {$(
            /// A runner's module: see `runners`.
            pub mod $module {
                /// A runner: see `runners`.
                pub struct Runner;
            }
        )*};
    }
    runners!(r0 r1 r2 r3 r4 r5 r6 r7);
}

impl<T: ToolRun> super::StaticTool for T {
    const NAME: &'static str = T::NAME;
    const SPEC: &'static ToolSpec = T::SPEC;
    const CALL: CallFn = call_tool::<T>;
}

/// The call of a `#[tool]` fn: its arguments read, then [`RunTool::run`]. Generic in the
/// tool type, so its copies are compiled with agent-core's code rather than in the
/// tools' module, which an edit to any tool recompiles; and only a hand-over to
/// `call_with`, which the tools of one signature share.
pub fn call_tool<'a, T: ToolRun>(
    args: &Value,
    ctx: &'a ToolContext,
) -> BoxFuture<'a, AgentResult<Vec<Content>>> {
    call_with::<T::Args>(T::SPEC, &T::PLAN, &T::DEFAULTS, T::Runner::run, args, ctx)
}

/// The body of [`call_tool`], generic in the parameter types only: the arguments read by
/// `plan`, then `run` on them, or the first error.
fn call_with<'a, A: ReadArgs>(
    spec: &'static ToolSpec,
    plan: &A::Plan,
    defaults: &A::Defaults,
    run: fn(A, &'a ToolContext) -> BoxFuture<'a, AgentResult<Vec<Content>>>,
    args: &Value,
    ctx: &'a ToolContext,
) -> BoxFuture<'a, AgentResult<Vec<Content>>> {
    match A::__agent_read_all(spec, args, plan, defaults) {
        Ok(args) => run(args, ctx),
        Err(error) => super::failed(error),
    }
}

/// The set `tools![]` names, from a constant table of each tool's spec and call: the code
/// listing the tools is one call, however many there are. The macro has already proven
/// the names valid and distinct, so registration cannot fail for them.
pub fn static_toolset(tools: &[(&'static ToolSpec, CallFn)]) -> ToolSet {
    let mut set = ToolSet::new();
    for &(spec, call) in tools {
        if let Err(error) = set.register_arc(fn_tool(spec, call)) {
            unreachable!("tools![] registered a tool it had checked: {error}");
        }
    }
    set
}

/// The call of a `#[tool]` fn that did not compile (its errors are reported already).
pub fn broken_call<'a>(_: &Value, _: &'a ToolContext) -> BoxFuture<'a, AgentResult<Vec<Content>>> {
    super::failed(ToolError::execution("this tool did not compile"))
}

/// The [`ToolRoute`] of the tools a [`ToolSpec`] describes: [`FnTool`], and the types
/// `#[tool]` generates for free fns.
pub struct ViaSpec;

/// A tool a [`ToolSpec`] describes, with its call.
pub trait SpecSource: Send + Sync {
    /// What the tool declares.
    fn spec(&self) -> &'static ToolSpec;
    /// Its call.
    fn call_fn(&self) -> CallFn;
}

impl<T: super::StaticTool + Send + Sync> SpecSource for T {
    fn spec(&self) -> &'static ToolSpec {
        T::SPEC
    }

    fn call_fn(&self) -> CallFn {
        T::CALL
    }
}

impl SpecSource for FnTool {
    fn spec(&self) -> &'static ToolSpec {
        self.spec
    }

    fn call_fn(&self) -> CallFn {
        self.call
    }
}

impl ToolRoute for FnTool {
    type Route = ViaSpec;
}

impl<T: SpecSource> ToolVia<ViaSpec> for T {
    fn name(&self) -> &str {
        self.spec().name()
    }

    fn description(&self) -> &str {
        self.spec().description()
    }

    fn schema(&self) -> Value {
        self.spec().schema()
    }

    fn call<'a>(
        &'a self,
        args: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, AgentResult<Vec<Content>>> {
        (self.call_fn())(args, ctx)
    }

    fn timeout_ms(&self) -> Option<u64> {
        self.spec().timeout_ms()
    }

    fn metadata(&self) -> ToolMetadata {
        self.spec().metadata()
    }

    fn exposure(&self) -> ToolExposure {
        self.spec().exposure()
    }

    fn should_activate<'a>(&'a self, ctx: &'a ActivationContext) -> BoxFuture<'a, bool> {
        self.spec().should_activate(ctx)
    }

    fn approval(&self, args: &Value) -> Approval {
        self.spec().approval(args)
    }

    fn on_error(&self) -> ErrorPolicy {
        self.spec().on_error()
    }

    fn output_schema(&self) -> Option<Value> {
        self.spec().output_schema()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.spec().annotations()
    }

    fn concurrency(&self) -> ToolConcurrency {
        self.spec().concurrency()
    }

    fn validate_output(&self, output: &[Content]) -> Result<(), String> {
        self.spec().validate_output(output)
    }

    fn validate_progress(&self, progress: &Value) -> Result<(), String> {
        self.spec().validate_progress(progress)
    }

    fn uses_context(&self) -> bool {
        self.spec().uses_context()
    }
}

/// The bound on what a tool returns (its `Ok` type for a `Result`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result: the model reads it as text or JSON",
    label = "the result type must implement `serde::Serialize`",
    note = "derive it on your type: `#[derive(serde::Serialize)]`; or return `String`, `Content` or `Vec<Content>`"
)]
pub trait ToolOutput: Serialize + 'static {}

impl<T: Serialize + 'static> ToolOutput for T {}

/// A tool's output as its call's result, by the rules of `TypedTool`. Generic in the
/// output type only: shared by every tool returning that type.
pub fn output_result<O: ToolOutput>(output: O) -> AgentResult<Vec<Content>> {
    Ok(into_content(output)?)
}

/// The call's future: the user's fn, boxed, then `convert` on its output. Generic in
/// the output type only; the user's future is behind its own vtable.
pub fn converted<'a, O: 'a>(
    future: BoxFuture<'a, O>,
    convert: fn(O) -> AgentResult<Vec<Content>>,
) -> BoxFuture<'a, AgentResult<Vec<Content>>> {
    Box::pin(Converted { future, convert })
}

struct Converted<'a, O> {
    future: BoxFuture<'a, O>,
    convert: fn(O) -> AgentResult<Vec<Content>>,
}

impl<O> Future for Converted<'_, O> {
    type Output = AgentResult<Vec<Content>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let convert = self.convert;
        self.future.as_mut().poll(cx).map(convert)
    }
}

/// How one parameter is read: `ModelArg::__agent_arg`, or `__agent_read` for one with
/// a default.
pub type ReadFn<T> = for<'r, 'v, 's> fn(&'r mut ArgsReader<'v, 's>, usize) -> Option<T>;

/// A `#[tool]`'s parameters as a tuple, read in one call: generic in the parameter types
/// only, so the tools sharing a signature (say `(String, u8)`) share one reader, and
/// each tool is left with a single call.
///
/// No bound on the types: the tool passes each parameter's read fn, named at the
/// parameter's type, so a type that cannot be a parameter is reported there, once.
pub trait ReadArgs: Sized {
    /// Per parameter, its read fn.
    type Plan;
    /// Per parameter, its default when it has one.
    type Defaults;
    /// No parameter has a default (what a tool without `#[arg(default)]` reads with).
    const NO_DEFAULTS: Self::Defaults;
    /// The parameters, or the first error as `decode_args` would report it.
    fn __agent_read_all(
        spec: &'static ToolSpec,
        args: &Value,
        plan: &Self::Plan,
        defaults: &Self::Defaults,
    ) -> Result<Self, ToolError>;
}

impl ReadArgs for () {
    type Plan = ();
    type Defaults = ();
    const NO_DEFAULTS: () = ();

    fn __agent_read_all(
        spec: &'static ToolSpec,
        args: &Value,
        (): &(),
        (): &(),
    ) -> Result<(), ToolError> {
        let reader = spec.reader(args, &mut [])?;
        if reader.failed() {
            return Err(reader.into_error());
        }
        Ok(())
    }
}

/// `ReadArgs` for a tuple: each parameter read, then, once nothing failed, the defaults
/// of the absent ones.
macro_rules! read_args_tuple {
    ($n:literal; $($t:ident $v:ident $i:tt),+) => {
        impl<$($t),+> ReadArgs for ($($t,)+) {
            type Plan = ($(ReadFn<$t>,)+);
            type Defaults = ($(Option<fn() -> $t>,)+);
            const NO_DEFAULTS: Self::Defaults = ($(None::<fn() -> $t>,)+);

            fn __agent_read_all(
                spec: &'static ToolSpec,
                args: &Value,
                plan: &Self::Plan,
                defaults: &Self::Defaults,
            ) -> Result<Self, ToolError> {
                let mut slots = [None; $n];
                let mut reader = spec.reader(args, &mut slots)?;
                $(let $v = (plan.$i)(&mut reader, $i);)+
                if reader.failed() {
                    return Err(reader.into_error());
                }
                match ($($v.or_else(|| defaults.$i.map(|default| default())),)+) {
                    ($(Some($v),)+) => Ok(($($v,)+)),
                    _ => Err(reader.into_error()),
                }
            }
        }
    };
}

read_args_tuple!(1; A a 0);
read_args_tuple!(2; A a 0, B b 1);
read_args_tuple!(3; A a 0, B b 1, C c 2);
read_args_tuple!(4; A a 0, B b 1, C c 2, D d 3);
read_args_tuple!(5; A a 0, B b 1, C c 2, D d 3, E e 4);
read_args_tuple!(6; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
read_args_tuple!(7; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
read_args_tuple!(8; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
read_args_tuple!(9; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
read_args_tuple!(10; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);
read_args_tuple!(11; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10);
read_args_tuple!(12; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11);

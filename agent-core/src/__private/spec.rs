//! A `#[tool]` as data and one call.
//!
//! What `#[tool]` writes for a fn is small, since a crate compiles it once per tool and
//! an edit makes rustc check and record it again: the tool type, a [`ToolRoute`] impl
//! naming the route [`ViaFn`] and a runner, and a [`RunTool`] impl on that runner with
//! the fn's argument types, its declaration (one string and a function per parameter,
//! [`Decl`]) and [`RunTool::run`], the fn called on its decoded arguments. Everything
//! else is here, compiled once: the [`ToolSpec`] a declaration is read into, the `Tool`
//! methods over it, reading the arguments ([`ReadArgs`], generic in their types only),
//! and the table `tools![]` builds a set from ([`ToolEntry`]).
//!
//! A `#[toolbox]` method takes the same shape with [`ViaMethod`] and [`RunMethod`],
//! whose `run` is given the tool value (the impl's shared `Arc`).

use super::{
    BoxFuture, OutputFn, RequireApprovalFn, ValidateOutputFn, ValidateProgressFn, annotations,
    concurrency, metadata,
};
use crate::ToolSet;
use crate::model::args::ArgsReader;
use crate::model::content::Content;
use crate::model::context::{ActivationContext, ToolContext};
use crate::model::error::{AgentResult, ToolError};
use crate::model::schema::{ArgsSchema, TypeCache, per_type};
use crate::model::tool::{
    ApprovalPolicy, ErrorPolicy, TaskSupport, Tool, ToolAnnotations, ToolConcurrency, ToolExposure,
    ToolMetadata, ToolRoute, ToolVia,
};
use crate::model::typed::into_content;
use serde::Serialize;
use serde_json::Value;
use std::any::TypeId;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

/// The future of one tool call, as `Tool::call` returns it.
pub type CallFuture<'a> = BoxFuture<'a, AgentResult<Vec<Content>>>;

/// A tool's call: its arguments read as `spec` describes them, then the tool run on them.
/// The future borrows the context only.
pub type CallFn = for<'a> fn(&ToolSpec, &Value, &'a ToolContext) -> CallFuture<'a>;

/// A deferred tool's `activate_when`, boxed.
pub type ActivateFn = for<'a> fn(&'a ActivationContext) -> BoxFuture<'a, bool>;

/// Builds a parameter type's JSON Schema (`ModelArg`'s, shared by every tool).
pub type SchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// How one parameter is read: `ModelArg::__agent_arg`, or `__agent_read` for one with a
/// default.
pub type ReadFn<T> = for<'r, 'v, 's> fn(&'r mut ArgsReader<'v, 's>, usize) -> Option<T>;

/// Whether a tool's calls need approval.
#[derive(Clone, Copy)]
pub enum ApprovalSpec {
    /// The tool does not say (`ApprovalPolicy::Unspecified`).
    Unspecified,
    /// Every call (`require_approval`).
    Always,
    /// A fn decides per call (`require_approval = path`).
    When(RequireApprovalFn),
}

/// The optional keys of `#[tool(...)]`, as one constant: a tool that gives none writes
/// nothing (the trait's default is [`ToolKeys::NONE`]).
#[derive(Clone, Copy)]
pub struct ToolKeys {
    timeout_ms: Option<u64>,
    exposure: ToolExposure,
    activate: Option<ActivateFn>,
    approval: ApprovalSpec,
    on_error: ErrorPolicy,
    title: Option<&'static str>,
    hints: [bool; 4],
    max_in_flight: Option<usize>,
    exclusive_group: Option<&'static str>,
    sequential: bool,
    uses_context: bool,
    task: TaskSupport,
    requirements: &'static [&'static str],
    validate_output: Option<ValidateOutputFn>,
    validate_progress: Option<ValidateProgressFn>,
    strict: Option<bool>,
    /// The examples as one JSON array of argument objects; empty for none.
    examples: &'static str,
}

impl ToolKeys {
    /// No key given: the defaults, for a fn that reads nothing but its arguments.
    pub const NONE: Self = Self {
        timeout_ms: None,
        exposure: ToolExposure::Direct,
        activate: None,
        approval: ApprovalSpec::Unspecified,
        on_error: ErrorPolicy::ReturnToModel,
        title: None,
        hints: [false; 4],
        max_in_flight: None,
        exclusive_group: None,
        sequential: false,
        uses_context: false,
        task: TaskSupport::Forbidden,
        requirements: &[],
        validate_output: None,
        validate_progress: None,
        strict: None,
        examples: "",
    };

    /// A fn with a `&ToolContext`, `State<T>` or `Progress` parameter.
    pub const fn with_context(mut self) -> Self {
        self.uses_context = true;
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
    pub const fn with_approval(mut self, approval: ApprovalSpec) -> Self {
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

    /// `task` or `task = "required"`.
    pub const fn with_task(mut self, task: TaskSupport) -> Self {
        self.task = task;
        self
    }

    /// `requirements`.
    pub const fn with_requirements(mut self, requirements: &'static [&'static str]) -> Self {
        self.requirements = requirements;
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

    /// `strict` or `strict = false`.
    pub const fn with_strict(mut self, strict: bool) -> Self {
        self.strict = Some(strict);
        self
    }

    /// `example(...)`, every one: a JSON array of argument objects, which the macro
    /// wrote from the user's literals (so it parses).
    pub const fn with_examples(mut self, examples: &'static str) -> Self {
        self.examples = examples;
        self
    }
}

/// What a tool declares: its text (see `ToolSpec::new` for the layout) and, per
/// parameter, how it is read and described.
pub struct Decl<A: ReadArgs>(pub &'static str, pub A::Plan);

/// One parameter's functions: generic in its type only, so every tool with a `String`
/// parameter shares them. `<T as ModelArg>::FNS`, and [`with_default`](Self::with_default)
/// for a parameter with `#[arg(default)]`.
pub struct ArgFns<T> {
    arg: ReadFn<T>,
    read: ReadFn<T>,
    schema: SchemaFn,
    default: Option<(fn() -> T, OutputFn)>,
}

impl<T> ArgFns<T> {
    /// The functions of a parameter of type `T`.
    pub const fn new(arg: ReadFn<T>, read: ReadFn<T>, schema: SchemaFn) -> Self {
        Self {
            arg,
            read,
            schema,
            default: None,
        }
    }

    /// A parameter with a default: `value` makes it, `schema_value` is it as JSON for the
    /// schema (`None` when it does not serialize).
    pub const fn with_default(mut self, value: fn() -> T, schema_value: OutputFn) -> Self {
        self.default = Some((value, schema_value));
        self
    }

    /// Reads the parameter at `index`: its default when absent and it has one.
    fn read(&self, reader: &mut ArgsReader<'_, '_>, index: usize) -> Option<T> {
        match self.default {
            None => (self.arg)(reader, index),
            Some((value, _)) => (self.read)(reader, index).or_else(|| Some(value())),
        }
    }

    /// The schema functions.
    fn param(&self) -> ParamFns {
        ParamFns {
            schema: self.schema,
            default: self.default.map(|(_, schema_value)| schema_value),
        }
    }
}

/// One parameter as its schema needs it.
#[derive(Clone, Copy)]
pub struct ParamFns {
    schema: SchemaFn,
    default: Option<fn() -> Option<Value>>,
}

/// The parameters' functions of one tool, whatever their types (a tuple of [`ArgFns`]).
pub trait ArgPlan: Sync {
    /// Each parameter's schema functions, in order.
    fn params(&self) -> Vec<ParamFns>;
}

/// A `#[tool]`'s parameters as a tuple, read in one call: generic in the parameter types
/// only, so the tools sharing a signature (say `(String, u8)`) share one reader.
///
/// No bound on the types: each parameter's functions are named at its type in the
/// tool's [`Decl`], so a type that cannot be a parameter is reported there, once.
pub trait ReadArgs: Sized + 'static {
    /// Per parameter, its functions.
    type Plan: ArgPlan + 'static;
    /// The parameters, or the first error as `decode_args` would report it.
    fn __agent_read_all(
        spec: &ToolSpec,
        args: &Value,
        plan: &Self::Plan,
    ) -> Result<Self, ToolError>;
}

impl ArgPlan for () {
    fn params(&self) -> Vec<ParamFns> {
        Vec::new()
    }
}

impl ReadArgs for () {
    type Plan = ();

    fn __agent_read_all(spec: &ToolSpec, args: &Value, (): &()) -> Result<(), ToolError> {
        let reader = spec.reader(args, &mut [])?;
        if reader.failed() {
            return Err(reader.into_error());
        }
        Ok(())
    }
}

/// `ReadArgs` for a tuple: each parameter read (absent ones with a default take it),
/// then the first error, if any.
macro_rules! read_args_tuple {
    ($n:literal; $($t:ident $v:ident $i:tt),+) => {
        impl<$($t: 'static),+> ArgPlan for ($(ArgFns<$t>,)+) {
            fn params(&self) -> Vec<ParamFns> {
                vec![$(self.$i.param()),+]
            }
        }

        impl<$($t: 'static),+> ReadArgs for ($($t,)+) {
            type Plan = ($(ArgFns<$t>,)+);

            fn __agent_read_all(
                spec: &ToolSpec,
                args: &Value,
                plan: &Self::Plan,
            ) -> Result<Self, ToolError> {
                let mut slots = [None; $n];
                let mut reader = spec.reader(args, &mut slots)?;
                $(let $v = plan.$i.read(&mut reader, $i);)+
                match ($($v,)+) {
                    ($(Some($v),)+) if !reader.failed() => Ok(($($v,)+)),
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
read_args_tuple!(13; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12);
read_args_tuple!(14; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13);
read_args_tuple!(15; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14);
read_args_tuple!(16; A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9, K k 10, L l 11, M m 12, N n 13, O o 14, P p 15);

/// What `#[tool]` implements for a free fn, on one of the runner types (see
/// `runners`): the fn's parameters, its declaration, and the fn run on its arguments.
/// `T` is the tool type. The optional items are written only by a tool that needs them.
pub trait RunTool<T: ?Sized> {
    /// The parameters the model fills, in order, as a tuple.
    type Args: ReadArgs;
    /// The tool's text and its parameters' functions.
    const DECL: &'static Decl<Self::Args>;
    /// The keys given in `#[tool(...)]` (a reference, so a table of tools holds a
    /// pointer per tool rather than every key).
    const KEYS: &'static ToolKeys = &ToolKeys::NONE;
    /// Builds the output schema ([`OutputSchema`](super::OutputSchema)'s pick).
    const OUTPUT: fn() -> Option<Value> = super::no_output_schema;
    /// The fn's future on its arguments (and, for the parameters the runtime supplies,
    /// on the context), its output converted and boxed.
    fn run(args: Self::Args, ctx: &ToolContext) -> CallFuture<'_>;
}

/// What `#[toolbox]` implements for a `#[tool]` method, as [`RunTool`] for a fn: `run`
/// is given the tool value, which holds the impl's shared value.
pub trait RunMethod<T: ?Sized> {
    /// The parameters the model fills, in order, as a tuple.
    type Args: ReadArgs;
    /// The tool's text and its parameters' functions.
    const DECL: &'static Decl<Self::Args>;
    /// The keys given in `#[tool(...)]` (a reference, so a table of tools holds a
    /// pointer per tool rather than every key).
    const KEYS: &'static ToolKeys = &ToolKeys::NONE;
    /// Builds the output schema.
    const OUTPUT: fn() -> Option<Value> = super::no_output_schema;
    /// The method's future on its arguments, its output converted and boxed.
    fn run<'a>(tool: &'a T, args: Self::Args, ctx: &'a ToolContext) -> CallFuture<'a>;
}

/// The types implementing [`RunTool`] and [`RunMethod`], one per module. rustc compiles
/// a trait impl's methods in the codegen unit of the module defining the impl's type, so
/// each tool's run fn lands in its runner's unit rather than in the tools' module. An
/// edit to one tool recompiles every unit naming its future: the tools' module (as for
/// plain fns) and one runner with an eighth of the run fns, rather than all of them.
/// More runners would cut an edit further but cost a clean build more (each unit has a
/// fixed cost). `#[tool]` picks one by a hash of the tool's name, modulo 8.
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

/// The runner of a tool that did not compile (its errors are reported already).
pub struct Broken;

/// The [`ToolRoute`] of a `#[tool]` fn's type: the tool as `R`'s [`RunTool`] describes it.
pub struct ViaFn<R>(PhantomData<fn() -> R>);

/// The [`ToolRoute`] of a `#[toolbox]` method's type: the tool as `R`'s [`RunMethod`]
/// describes it.
pub struct ViaMethod<R>(PhantomData<fn() -> R>);

/// A tool as `tools![]` and the registry take it: what it declares and its call, built
/// into a [`FnTool`] without a vtable of its own.
#[derive(Clone, Copy)]
pub struct ToolEntry {
    decl: &'static str,
    plan: &'static dyn ArgPlan,
    keys: &'static ToolKeys,
    output: fn() -> Option<Value>,
    call: CallFn,
}

/// Implemented by every type `#[tool]` generates; `tools![]` reads the name at compile
/// time through it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool made with `#[tool]`",
    label = "not a `#[tool]` fn",
    note = "`tools![]` takes the names of `async fn`s marked `#[tool]`; register other tools with `ToolSet::register_tool`"
)]
pub trait StaticTool: 'static {
    /// The tool's name.
    const NAME: &'static str;
    /// The tool as `tools![]` takes it.
    const ENTRY: ToolEntry;
}

impl<T, R> StaticTool for T
where
    T: ToolRoute<Route = R> + 'static,
    R: FnRoute<T>,
{
    const NAME: &'static str = R::NAME;
    const ENTRY: ToolEntry = R::ENTRY;
}

/// The routes `tools![]` takes: a `#[tool]` fn's, [`ViaFn`]; a `TypedTool`'s fails
/// constant evaluation with a message. Every route implements it, so that a type that
/// is no tool at all gets the one error that explains it (its `ToolRoute`, which rustc
/// would otherwise take from `TypedTool`'s blanket impl and report the route as well).
pub trait FnRoute<T> {
    /// The tool's name.
    const NAME: &'static str;
    /// The tool as `tools![]` takes it.
    const ENTRY: ToolEntry;
}

impl<T: 'static, R: RunTool<T> + 'static> FnRoute<T> for ViaFn<R> {
    const NAME: &'static str = decl_name(R::DECL.0);
    const ENTRY: ToolEntry = ToolEntry {
        decl: R::DECL.0,
        plan: &R::DECL.1,
        keys: R::KEYS,
        output: R::OUTPUT,
        call: call_tool::<T, R>,
    };
}

impl<T> FnRoute<T> for crate::model::typed::ViaTyped {
    // No name (`#[tool]` names are never empty, and the duplicate check skips it): the
    // entry's error is the one to report.
    const NAME: &'static str = "";
    const ENTRY: ToolEntry = panic!(
        "`tools![]` takes `#[tool]` fns, and this is a `TypedTool`: register it with \
         `ToolSet::register_tool`"
    );
}

/// The name at the head of a declaration, in constant evaluation.
const fn decl_name(decl: &'static str) -> &'static str {
    let bytes = decl.as_bytes();
    let mut end = 0;
    while end < bytes.len() && bytes[end] != 0 {
        end += 1;
    }
    decl.split_at(end).0
}

/// The call of a `#[tool]` fn: its arguments read, then [`RunTool::run`]. Generic in the
/// tool type, so its copies are compiled with toolwright-core's code rather than in the tools'
/// module, which an edit to any tool recompiles: it names the run fn, not the future.
fn call_tool<'a, T, R: RunTool<T>>(
    spec: &ToolSpec,
    args: &Value,
    ctx: &'a ToolContext,
) -> CallFuture<'a> {
    match R::Args::__agent_read_all(spec, args, &R::DECL.1) {
        Ok(args) => R::run(args, ctx),
        Err(error) => super::failed(error),
    }
}

/// A parameter of a [`ToolSpec`].
struct Param {
    description: &'static str,
    /// `#[arg(header = "...")]`; empty for none.
    header: &'static str,
    optional: bool,
    fns: ParamFns,
}

/// The types an `#[arg(header = "...")]` parameter may have: those a header value can
/// carry (strings, numbers, booleans), or an `Option` of one.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as an HTTP header, so it cannot be a header parameter",
    label = "not a string, number or boolean",
    note = "`#[arg(header = \"...\")]` takes a `String`, an integer, a float or a `bool` (or an `Option` of one); remove `header` from this parameter"
)]
pub trait HeaderParam {}

macro_rules! header_params {
    ($($t:ty),*) => { $(impl HeaderParam for $t {})* };
}
header_params!(
    String, bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64
);
impl<T: HeaderParam> HeaderParam for Option<T> {}

/// Compiles only for a type that may be a header parameter (`#[tool]` calls it).
pub const fn header_param<T: HeaderParam + ?Sized>() {}

/// A tool's declaration read for use: what its `Tool` methods answer, and the schemas
/// built on first use.
pub struct ToolSpec {
    name: &'static str,
    description: &'static str,
    origin: &'static str,
    version: &'static str,
    names: Vec<&'static str>,
    params: Vec<Param>,
    keys: ToolKeys,
    output: fn() -> Option<Value>,
    args_schema: OnceLock<ArgsSchema>,
    output_schema: OnceLock<Option<Value>>,
}

impl ToolSpec {
    /// Reads a declaration. Its text is NUL-separated: the name, the origin, the version,
    /// then per parameter a flag (`-` required, `?` optional, `=` with a default) joined
    /// to its name, its header name (`x-mcp-header`; empty for none) and its description, and last the tool's description, which
    /// runs to the end (it alone may come from a file the macro cannot read, so only it
    /// may hold a NUL; the macro writes every other part without one).
    fn new(
        decl: &'static str,
        plan: &'static dyn ArgPlan,
        keys: ToolKeys,
        output: fn() -> Option<Value>,
    ) -> Self {
        let fns = plan.params();
        let mut fields = decl.splitn(4 + 3 * fns.len(), '\0');
        let mut next = || fields.next().unwrap_or_default();
        let (name, origin, version) = (next(), next(), next());
        let mut names = Vec::with_capacity(fns.len());
        let mut params = Vec::with_capacity(fns.len());
        for fns in fns {
            let (flagged, header, description) = (next(), next(), next());
            let (optional, wire_name) = match flagged.split_at_checked(1) {
                Some(("-", wire_name)) => (false, wire_name),
                Some((_, wire_name)) => (true, wire_name),
                None => (false, flagged),
            };
            names.push(wire_name);
            params.push(Param {
                description,
                header,
                optional,
                fns,
            });
        }
        Self {
            name,
            description: next(),
            origin,
            version,
            names,
            params,
            keys,
            output,
            args_schema: OnceLock::new(),
            output_schema: OnceLock::new(),
        }
    }

    /// The spec of tool type `T`, read on first use and kept for the life of the process
    /// (one per tool type, so the memory is bounded by the program's tools).
    fn of<T: 'static>(make: impl FnOnce() -> Self) -> &'static Self {
        static CACHE: TypeCache<ToolSpec> = OnceLock::new();
        per_type(&CACHE, TypeId::of::<T>(), make)
    }

    /// See [`Tool::name`].
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// See [`Tool::description`].
    pub fn description(&self) -> &'static str {
        self.description
    }

    /// The argument schema, built on first use: what `#[derive(JsonSchema)]` with
    /// `deny_unknown_fields` builds for the parameters, property by property.
    pub fn args_schema(&self) -> &ArgsSchema {
        self.args_schema.get_or_init(|| {
            let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
            let mut schema = self.object_schema(&mut generator);
            let definitions = generator.take_definitions(false);
            if !definitions.is_empty() {
                schema.insert("$defs".into(), Value::Object(definitions));
            }
            // The reader denies unknown fields itself.
            ArgsSchema::from_schema(schema.to_value()).decoder_denies_unknown_fields()
        })
    }

    /// The root object of the argument schema.
    fn object_schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut schema = schemars::json_schema!({
            "type": "object",
            "additionalProperties": false,
        });
        for (name, param) in self.names.iter().zip(&self.params) {
            let mut sub = (param.fns.schema)(generator);
            if !param.description.is_empty() {
                sub.insert("description".into(), param.description.into());
            }
            if let Some(default) = param.fns.default.and_then(|default| default()) {
                sub.insert("default".into(), default);
            }
            if !param.header.is_empty() {
                sub.insert(
                    crate::model::dialect::MCP_HEADER_KEYWORD.into(),
                    param.header.into(),
                );
            }
            let optional = param.optional && generator.contract().is_deserialize();
            insert_property(&mut schema, name, optional, sub);
        }
        schema
    }

    /// See [`Tool::schema`].
    pub fn schema(&self) -> Value {
        self.args_schema().schema().clone()
    }

    /// The reader of one call's arguments, into `slots` (one per parameter).
    pub fn reader<'v, 's>(
        &'s self,
        args: &'v Value,
        slots: &'s mut [Option<&'v Value>],
    ) -> Result<ArgsReader<'v, 's>, ToolError> {
        ArgsReader::new(self.args_schema(), &self.names, args, slots)
    }

    /// See [`Tool::timeout_ms`].
    pub fn timeout_ms(&self) -> Option<u64> {
        self.keys.timeout_ms
    }

    /// See [`Tool::metadata`].
    pub fn metadata(&self) -> ToolMetadata {
        metadata(
            self.name,
            self.description,
            self.origin,
            self.version,
            self.keys.requirements,
        )
    }

    /// See [`Tool::exposure`].
    pub fn exposure(&self) -> ToolExposure {
        self.keys.exposure
    }

    /// See [`Tool::should_activate`].
    pub fn should_activate<'a>(&self, ctx: &'a ActivationContext) -> BoxFuture<'a, bool> {
        match self.keys.activate {
            Some(activate) => activate(ctx),
            None => Box::pin(std::future::ready(true)),
        }
    }

    /// See [`Tool::approval`].
    pub fn approval(&self, args: &Value) -> ApprovalPolicy {
        match self.keys.approval {
            ApprovalSpec::Unspecified => ApprovalPolicy::Unspecified,
            ApprovalSpec::Always => ApprovalPolicy::Required,
            ApprovalSpec::When(decide) => ApprovalPolicy::from(decide(args)),
        }
    }

    /// See [`Tool::on_error`].
    pub fn on_error(&self) -> ErrorPolicy {
        self.keys.on_error
    }

    /// See [`Tool::output_schema`]: built on first use.
    pub fn output_schema(&self) -> Option<Value> {
        self.output_schema.get_or_init(self.output).clone()
    }

    /// See [`Tool::annotations`].
    pub fn annotations(&self) -> ToolAnnotations {
        let [read_only, destructive, idempotent, open_world] = self.keys.hints;
        annotations(
            self.keys.title,
            read_only,
            destructive,
            idempotent,
            open_world,
        )
    }

    /// See [`Tool::concurrency`].
    pub fn concurrency(&self) -> ToolConcurrency {
        concurrency(
            self.keys.max_in_flight,
            self.keys.exclusive_group,
            self.keys.sequential,
        )
    }

    /// See [`Tool::validate_output`].
    pub fn validate_output(&self, output: &[Content]) -> Result<(), String> {
        self.keys
            .validate_output
            .map_or(Ok(()), |validate| validate(output))
    }

    /// See [`Tool::validate_progress`].
    pub fn validate_progress(&self, progress: &Value) -> Result<(), String> {
        self.keys
            .validate_progress
            .map_or(Ok(()), |validate| validate(progress))
    }

    /// Whether a call reads its context.
    pub fn uses_context(&self) -> bool {
        self.keys.uses_context
    }

    /// See [`Tool::task_support`].
    pub fn task_support(&self) -> TaskSupport {
        self.keys.task
    }

    /// See [`Tool::input_examples`]: read from their JSON on each call (a definition is
    /// built once per registration, the only caller).
    pub fn input_examples(&self) -> Vec<Value> {
        if self.keys.examples.is_empty() {
            return Vec::new();
        }
        serde_json::from_str(self.keys.examples).unwrap_or_default()
    }

    /// See [`Tool::strict`].
    pub fn strict(&self) -> Option<bool> {
        self.keys.strict
    }
}

/// Adds a property to an object schema, and its name to `required` unless `optional`.
fn insert_property(
    schema: &mut schemars::Schema,
    name: &str,
    optional: bool,
    sub: schemars::Schema,
) {
    let object = schema.ensure_object();
    if let Some(properties) = object
        .entry("properties")
        .or_insert_with(|| Value::Object(serde_json::Map::new()))
        .as_object_mut()
    {
        properties.insert(name.to_owned(), sub.into());
    }
    if !optional
        && let Some(required) = object
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
    {
        required.push(name.into());
    }
}

/// A `#[tool]` fn as a `Tool`: its spec and its call. `tools![]` and the registry build
/// this, so no tool needs a vtable of its own.
pub struct FnTool {
    spec: ToolSpec,
    call: CallFn,
}

impl FnTool {
    /// The tool of an entry.
    pub fn new(entry: ToolEntry) -> Self {
        Self {
            spec: ToolSpec::new(entry.decl, entry.plan, *entry.keys, entry.output),
            call: entry.call,
        }
    }
}

/// The `Tool` of the `#[tool]` fn whose type is `T`, for the registry.
pub fn static_tool<T: StaticTool>() -> Arc<dyn Tool> {
    Arc::new(FnTool::new(T::ENTRY))
}

/// The entries `tools![]` lists, as a constant of a type the macro defines beside it.
pub trait ToolTable {
    /// The entries, in the order listed.
    const TOOLS: &'static [ToolEntry];
}

/// The set `tools![]` names, from its constant table: the code listing the tools is one
/// call, however many there are. Generic in the table, so the table is compiled with
/// this fn's copy (in a codegen unit of toolwright-core's own) rather than into the module
/// that lists the tools, which an edit of any fn in it compiles again. The macro has
/// already proven the names valid and distinct, so registration cannot fail for them.
pub fn table_toolset<T: ToolTable>() -> ToolSet {
    toolset_of(T::TOOLS)
}

fn toolset_of(tools: &[ToolEntry]) -> ToolSet {
    let mut set = ToolSet::new();
    for &entry in tools {
        if let Err(error) = set.register_arc(Arc::new(FnTool::new(entry))) {
            unreachable!("tools![] registered a tool it had checked: {error}");
        }
    }
    set
}

/// The call of a `#[tool]` fn that did not compile (its errors are reported already).
pub fn broken_call<'a>() -> CallFuture<'a> {
    super::failed(ToolError::execution("this tool did not compile"))
}

/// The `Tool` methods every route answers from its [`ToolSpec`], which `$spec` (a fn
/// from the tool to its spec) finds; each route writes `name` and `call` itself.
macro_rules! spec_methods {
    ($spec:expr) => {
        fn description(&self) -> &str {
            $spec(self).description()
        }

        fn schema(&self) -> Value {
            $spec(self).schema()
        }

        fn timeout_ms(&self) -> Option<u64> {
            $spec(self).timeout_ms()
        }

        fn metadata(&self) -> ToolMetadata {
            $spec(self).metadata()
        }

        fn exposure(&self) -> ToolExposure {
            $spec(self).exposure()
        }

        fn should_activate<'a>(&'a self, ctx: &'a ActivationContext) -> BoxFuture<'a, bool> {
            $spec(self).should_activate(ctx)
        }

        fn approval(&self, args: &Value) -> ApprovalPolicy {
            $spec(self).approval(args)
        }

        fn on_error(&self) -> ErrorPolicy {
            $spec(self).on_error()
        }

        fn output_schema(&self) -> Option<Value> {
            $spec(self).output_schema()
        }

        fn annotations(&self) -> ToolAnnotations {
            $spec(self).annotations()
        }

        fn concurrency(&self) -> ToolConcurrency {
            $spec(self).concurrency()
        }

        fn validate_output(&self, output: &[Content]) -> Result<(), String> {
            $spec(self).validate_output(output)
        }

        fn validate_progress(&self, progress: &Value) -> Result<(), String> {
            $spec(self).validate_progress(progress)
        }

        fn uses_context(&self) -> bool {
            $spec(self).uses_context()
        }

        fn task_support(&self) -> TaskSupport {
            $spec(self).task_support()
        }

        fn input_examples(&self) -> Vec<Value> {
            $spec(self).input_examples()
        }

        fn strict(&self) -> Option<bool> {
            $spec(self).strict()
        }
    };
}

/// The [`ToolRoute`] of [`FnTool`].
pub struct ViaEntry;

impl ToolRoute for FnTool {
    type Route = ViaEntry;
}

fn entry_spec(tool: &FnTool) -> &ToolSpec {
    &tool.spec
}

impl ToolVia<ViaEntry> for FnTool {
    fn name(&self) -> &str {
        self.spec.name()
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> CallFuture<'a> {
        (self.call)(&self.spec, args, ctx)
    }

    spec_methods!(entry_spec);
}

/// The spec of `#[tool]` fn type `T`, read once per type (a tool type registered as a
/// value, `set.register_tool(name {})`, rather than through `tools![]`).
fn fn_spec<T: 'static, R: RunTool<T> + 'static>(_: &T) -> &'static ToolSpec {
    ToolSpec::of::<T>(|| ToolSpec::new(R::DECL.0, &R::DECL.1, *R::KEYS, R::OUTPUT))
}

impl<T, R> ToolVia<ViaFn<R>> for T
where
    T: ToolRoute<Route = ViaFn<R>> + Send + Sync + 'static,
    R: RunTool<T> + 'static,
{
    fn name(&self) -> &str {
        decl_name(R::DECL.0)
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> CallFuture<'a> {
        call_tool::<T, R>(fn_spec::<T, R>(self), args, ctx)
    }

    spec_methods!(fn_spec::<T, R>);
}

/// The spec of `#[toolbox]` method type `T`, read once per type.
fn method_spec<T: 'static, R: RunMethod<T> + 'static>(_: &T) -> &'static ToolSpec {
    ToolSpec::of::<T>(|| ToolSpec::new(R::DECL.0, &R::DECL.1, *R::KEYS, R::OUTPUT))
}

impl<T, R> ToolVia<ViaMethod<R>> for T
where
    T: ToolRoute<Route = ViaMethod<R>> + Send + Sync + 'static,
    R: RunMethod<T> + 'static,
{
    fn name(&self) -> &str {
        decl_name(R::DECL.0)
    }

    fn call<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> CallFuture<'a> {
        match R::Args::__agent_read_all(method_spec::<T, R>(self), args, &R::DECL.1) {
            Ok(values) => R::run(self, values, ctx),
            Err(error) => super::failed(error),
        }
    }

    spec_methods!(method_spec::<T, R>);
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

/// A text result as its call's result.
fn text_result(output: String) -> AgentResult<Vec<Content>> {
    Ok(vec![Content::text(output)])
}

/// The call's future of a fn returning `String`: boxed where the tool's run fn is
/// compiled (`inline(always)`, so the copy for the fn's future is made in the runner's
/// codegen unit, which an edit of another tool leaves alone), then made text.
#[inline(always)]
pub fn text<'a, F: Future<Output = String> + Send + 'a>(future: F) -> CallFuture<'a> {
    converted(Box::pin(future), text_result)
}

/// The call's future: the user's fn, boxed, then `convert` on its output. Generic in
/// the output type only; the user's future is behind its own vtable.
pub fn converted<'a, O: 'a>(
    future: BoxFuture<'a, O>,
    convert: fn(O) -> AgentResult<Vec<Content>>,
) -> CallFuture<'a> {
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

/// The functions of the parameter and output types tools use most, compiled here once.
///
/// In a debug build rustc shares generic functions between crates (`-Z share-generics`
/// is on when optimizations are off): a crate of tools reuses what this crate already
/// compiled instead of compiling its own copy. Without this, every crate of tools
/// compiled and recorded the reader, decoder and schema of `String`, `u8`, ... again, and
/// on every edit, rustc's list of them too. The fn is never called: naming the instances
/// is what compiles them.
#[doc(hidden)]
pub fn shared_instances() -> Vec<*const ()> {
    macro_rules! arg_types {
        ($($t:ty),*) => {
            vec![$(
                <$t as super::ModelArg>::__agent_arg as *const (),
                <$t as super::ModelArg>::__agent_read as *const (),
                <$t as super::ModelArg>::__agent_schema as *const (),
                ArgFns::<$t>::read as *const (),
                ArgFns::<$t>::param as *const (),
                <Option<$t> as super::ModelArg>::__agent_arg as *const (),
                <Option<$t> as super::ModelArg>::__agent_read as *const (),
                <Option<$t> as super::ModelArg>::__agent_schema as *const (),
                ArgFns::<Option<$t>>::read as *const (),
                ArgFns::<Option<$t>>::param as *const (),
                output_result::<$t> as *const (),
                converted::<$t> as *const (),
            )*]
        };
    }
    let mut instances = arg_types!(
        String,
        bool,
        u8,
        u16,
        u32,
        u64,
        usize,
        i8,
        i16,
        i32,
        i64,
        isize,
        f32,
        f64,
        Value,
        Vec<String>,
        Vec<u32>,
        Vec<i64>,
        Vec<Value>
    );
    instances.push(converted::<AgentResult<String>> as *const ());
    instances.push(converted::<Result<String, ToolError>> as *const ());
    instances
}

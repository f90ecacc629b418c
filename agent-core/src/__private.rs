//! Support for the code `#[tool]`, `#[toolbox]` and `tools![]` generate. Not a public API:
//! it changes without notice.

pub use async_trait::async_trait;
pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;
pub use std::borrow::Cow;
pub use std::boxed::Box;
pub use std::future::Future;
pub use std::pin::Pin;
pub use std::sync::{Arc, OnceLock};
pub use toolwright_macros::tools_impl;

mod spec;

pub use crate::model::args::ArgsReader;
pub use crate::model::context::ActivationContext;
pub use crate::model::context::ToolContext;
pub use crate::model::extract::FromToolContext;
pub use crate::model::registry::RegisteredTool;
pub use crate::model::tool::{ErrorPolicy, TaskSupport, ToolExposure};
pub use crate::model::tool::{ToolRoute, ToolVia};
pub use spec::runners::*;
pub use spec::{
    ActivateFn, ApprovalSpec, ArgFns, ArgPlan, Broken, CallFn, CallFuture, Decl, FnTool,
    HeaderParam, ParamFns, ReadArgs, ReadFn, RunMethod, RunTool, SchemaFn, StaticTool, ToolEntry,
    ToolKeys, ToolOutput, ToolSpec, ToolTable, ViaEntry, ViaFn, ViaMethod, broken_call, converted,
    header_param, output_result, shared_instances, static_tool, table_toolset, text,
};

use crate::model::content::Content;
use crate::model::error::ToolError;
use crate::model::tool::{ToolAnnotations, ToolConcurrency, ToolMetadata};
use crate::{Tool, ToolSet};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt::Display;
use std::marker::PhantomData;

/// The boxed future `async_trait` methods return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The future of a `#[tool]` call whose runtime-supplied parameter is not available.
pub fn failed<'a, T: Send + 'a>(error: ToolError) -> BoxFuture<'a, crate::AgentResult<T>> {
    Box::pin(std::future::ready(Err(error.into())))
}

/// Builds the set of a `#[toolbox]` impl. Names were checked distinct by the macro.
pub fn toolbox_set(tools: Vec<Arc<dyn Tool>>) -> ToolSet {
    let mut set = ToolSet::new();
    for tool in tools {
        if let Err(error) = set.register_arc(tool) {
            unreachable!("#[toolbox] registered a tool it had checked: {error}");
        }
    }
    set
}

/// Compares tool names in constant evaluation, for `tools![]`'s duplicate check.
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// For each name, whether it equals an earlier one: `tools![]`'s duplicate check, in
/// constant evaluation.
///
/// Each name goes into an open-addressing table of its hash, compared byte by byte only
/// with the names already in its probe run: constant evaluation interprets every step,
/// and comparing every pair of 200 names took a third of a clean build's const
/// evaluation. Beyond the table's size, the pairs are compared.
pub const fn repeated_names<const N: usize>(names: &[&str; N]) -> [bool; N] {
    const SLOTS: usize = 4096;
    let mut repeated = [false; N];
    if N > SLOTS / 2 {
        let mut i = 1;
        while i < N {
            let mut j = 0;
            while j < i {
                if same_name(names[j], names[i]) {
                    repeated[i] = true;
                    break;
                }
                j += 1;
            }
            i += 1;
        }
        return repeated;
    }
    // Each slot holds the index of a name, plus one (0: empty).
    let mut table = [0u16; SLOTS];
    let mut i = 0;
    while i < N {
        let mut slot = (name_hash(names[i]) % SLOTS as u64) as usize;
        loop {
            let held = table[slot] as usize;
            if held == 0 {
                table[slot] = (i + 1) as u16;
                break;
            }
            if same_name(names[held - 1], names[i]) {
                repeated[i] = true;
                break;
            }
            slot = (slot + 1) % SLOTS;
        }
        i += 1;
    }
    repeated
}

/// Fails constant evaluation, at the caller's location (the path `tools![]` was given),
/// when the `i`th name is also an earlier one (`repeated`, of [`repeated_names`]).
#[track_caller]
pub const fn distinct_name(repeated: &[bool], names: &[&str], i: usize) {
    if repeated[i] && !names[i].is_empty() {
        panic!(
            "{}",
            ConstMessage::new(
                "tools![] lists two tools named `",
                names[i],
                "`: a tool set needs distinct names; remove one, or give one another name with #[tool(name = \"...\")]",
            )
            .as_str()
        );
    }
}

/// FNV-1a of a name.
const fn name_hash(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut i = 0;
    while i < bytes.len() {
        hash = (hash ^ bytes[i] as u64).wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

/// A message built in constant evaluation (a panic message naming a duplicate tool).
pub struct ConstMessage {
    buf: [u8; 256],
    len: usize,
}

impl ConstMessage {
    /// `prefix`, `name`, `suffix` joined (cut at 256 bytes, on a character boundary).
    pub const fn new(prefix: &str, name: &str, suffix: &str) -> Self {
        let mut msg = Self {
            buf: [0; 256],
            len: 0,
        };
        msg.push(prefix);
        msg.push(name);
        msg.push(suffix);
        msg
    }

    const fn push(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() && self.len < self.buf.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
    }

    /// The message.
    pub const fn as_str(&self) -> &str {
        let (mut len, bytes) = (self.len, &self.buf);
        loop {
            let (head, _) = bytes.split_at(len);
            match std::str::from_utf8(head) {
                Ok(text) => return text,
                Err(_) => len -= 1,
            }
        }
    }
}

/// The bound on a parameter the model fills; its message explains what to do. The
/// generated code reads and describes each parameter through it, so a type that is
/// not `Deserialize + JsonSchema` gives this one error, at the parameter's type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: the model's arguments are decoded from JSON",
    label = "this parameter's type must implement `serde::Deserialize` and `schemars::JsonSchema`",
    note = "derive both on your type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`",
    note = "parameters the runtime supplies instead are `&ToolContext`, `State<T>` and `Progress`"
)]
pub trait ModelArg: Sized {
    /// The parameter's value, when the model sent one and it decodes.
    fn __agent_read(reader: &mut ArgsReader<'_, '_>, index: usize) -> Option<Self>;
    /// The parameter's value; when absent, `None` for an `Option` and serde's "missing
    /// field" error otherwise.
    fn __agent_arg(reader: &mut ArgsReader<'_, '_>, index: usize) -> Option<Self>;
    /// The parameter's schema.
    fn __agent_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema;
    /// The three, as a tool's declaration lists them.
    const FNS: ArgFns<Self> =
        ArgFns::new(Self::__agent_arg, Self::__agent_read, Self::__agent_schema);
}

// Generic in the parameter's type only, never in the tool: every tool with a `String`
// parameter shares one instance.
impl<T: DeserializeOwned + JsonSchema> ModelArg for T {
    fn __agent_read(reader: &mut ArgsReader<'_, '_>, index: usize) -> Option<Self> {
        reader.read(index)
    }

    fn __agent_arg(reader: &mut ArgsReader<'_, '_>, index: usize) -> Option<Self> {
        reader.arg(index)
    }

    fn __agent_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<T>()
    }
}

/// A parameter's default value, for its schema: `DefaultValue(value).to_schema_value()`
/// is the value as JSON when its type is `Serialize` (this inherent method), and `None`
/// otherwise ([`NoDefaultValue`]'s, which method resolution picks only when this one
/// does not apply).
pub struct DefaultValue<T>(pub T);

impl<T: serde::Serialize> DefaultValue<T> {
    /// The value as JSON.
    pub fn to_schema_value(self) -> Option<Value> {
        serde_json::to_value(self.0).ok()
    }
}

/// The fallback of [`DefaultValue`] for a type that is not `Serialize`: no default in the
/// schema.
pub trait NoDefaultValue: Sized {
    /// No value.
    fn to_schema_value(self) -> Option<Value> {
        None
    }
}

impl<T> NoDefaultValue for DefaultValue<T> {}

/// The value a `#[toolbox(register)]` impl's tools share: its type's `Default`.
pub fn registered_default<T: Default>() -> T {
    T::default()
}

/// Probes a tool's error type; autoref specialization then picks its conversion: a
/// [`ToolError`] (or anything `Into<ToolError>`, such as `AgentError`) keeps its kind,
/// any other `Display` error becomes an execution error with its message.
///
/// `(&ErrorProbe::of(&e)).__agent_tag().convert(e)`: the first impl below applies when
/// `E: Into<ToolError>`; the second always does, and its `convert` asks for `Display`
/// through [`ToolErrorMessage`], whose message says what to do.
pub struct ErrorProbe<E>(PhantomData<fn() -> E>);

impl<E> ErrorProbe<E> {
    /// The probe of `error`'s type.
    pub fn of(_: &E) -> Self {
        Self(PhantomData)
    }
}

/// Converts with `Into<ToolError>`, keeping the kind.
pub struct ConvertKeepingKind;

impl ConvertKeepingKind {
    /// Converts the error.
    pub fn convert<E: Into<ToolError>>(self, error: E) -> ToolError {
        error.into()
    }
}

/// Converts with `Display`: an execution error with the error's message.
pub struct ConvertFromMessage;

impl ConvertFromMessage {
    /// Converts the error.
    pub fn convert<E: ToolErrorMessage>(self, error: E) -> ToolError {
        ToolError::execution(error.to_string())
    }
}

/// Preferred: the error knows its tool error.
pub trait KeepToolError {
    /// The conversion to use.
    fn __agent_tag(&self) -> ConvertKeepingKind;
}

impl<E: Into<ToolError>> KeepToolError for ErrorProbe<E> {
    fn __agent_tag(&self) -> ConvertKeepingKind {
        ConvertKeepingKind
    }
}

/// Fallback: the error's message.
pub trait DisplayToolError {
    /// The conversion to use.
    fn __agent_tag(&self) -> ConvertFromMessage;
}

impl<E> DisplayToolError for &ErrorProbe<E> {
    fn __agent_tag(&self) -> ConvertFromMessage {
        ConvertFromMessage
    }
}

/// The bound on a tool's error type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error: it must implement `Display` (or convert into `ToolError`)",
    label = "the error type of this result must implement `std::fmt::Display`",
    note = "the model reads the error's message; implement `Display`, or `From<{Self}> for ToolError` to choose the error's kind"
)]
pub trait ToolErrorMessage: Display {}

impl<T: Display> ToolErrorMessage for T {}

/// Picks whether a result type has an output schema: `OutputSchema::<T>::FN` is the
/// inherent constant below when `T: JsonSchema`, else [`NoOutputSchema::FN`] (the trait
/// in scope where the spec is written).
pub struct OutputSchema<T: ?Sized>(PhantomData<fn() -> Box<T>>);

/// `T: JsonSchema`: the fn building its schema, when the root is an object. An inherent
/// constant, so it is chosen over [`NoOutputSchema::FN`] wherever the bound holds.
impl<T: JsonSchema + ?Sized> OutputSchema<T> {
    /// The fn building the output schema.
    pub const FN: fn() -> Option<Value> = output_schema_of::<T>;
}

/// Otherwise: none.
pub trait NoOutputSchema {
    /// The fn building no output schema.
    const FN: fn() -> Option<Value> = no_output_schema;
}

impl<T: ?Sized> NoOutputSchema for OutputSchema<T> {}

/// No output schema.
pub fn no_output_schema() -> Option<Value> {
    None
}

/// The JSON Schema of a result type, when its root is an object: of what the type
/// serializes to (a field skipped when empty is not required), as the tool returns it.
pub fn output_schema_of<T: JsonSchema + ?Sized>() -> Option<Value> {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    let map = schema.as_object_mut()?;
    if map.get("type") != Some(&Value::String("object".into())) {
        return None;
    }
    map.remove("$schema");
    Some(schema)
}

/// A tool's metadata.
pub fn metadata(
    name: &str,
    description: &str,
    origin: &str,
    version: &str,
    requirements: &[&str],
) -> ToolMetadata {
    ToolMetadata {
        name: name.to_owned(),
        description: description.to_owned(),
        origin: origin.to_owned(),
        version: version.to_owned(),
        requirements: requirements.iter().map(|r| (*r).to_owned()).collect(),
    }
}

/// A tool's annotations; `false` hints are "not stated".
pub fn annotations(
    title: Option<&str>,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
) -> ToolAnnotations {
    let hint = |set: bool| set.then_some(true);
    ToolAnnotations {
        title: title.map(str::to_owned),
        read_only: hint(read_only),
        destructive: hint(destructive),
        idempotent: hint(idempotent),
        open_world: hint(open_world),
    }
}

/// A tool's concurrency.
pub fn concurrency(
    max_in_flight: Option<usize>,
    exclusive_group: Option<&str>,
    sequential: bool,
) -> ToolConcurrency {
    ToolConcurrency {
        max_in_flight,
        exclusive_group: exclusive_group.map(str::to_owned),
        sequential: sequential.then_some(true),
    }
}

/// Builds a tool's output schema (or a default parameter value for its schema).
pub type OutputFn = fn() -> Option<Value>;

/// The signature `validate_output` paths must have.
pub type ValidateOutputFn = fn(&[Content]) -> Result<(), String>;
/// The signature `validate_progress` paths must have.
pub type ValidateProgressFn = fn(&Value) -> Result<(), String>;
/// The signature `require_approval` paths must have.
pub type RequireApprovalFn = fn(&Value) -> bool;

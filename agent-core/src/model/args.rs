//! Turning the JSON a model sent into typed arguments, with errors that name the field.

use crate::model::error::ToolError;
use crate::model::locate::first_violation;
use crate::model::schema::ArgsSchema;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::Value;
use std::any::TypeId;
use std::borrow::Cow;

/// Arguments nested deeper than this are refused before decoding, so no input can
/// exhaust the stack of a decoder, a validator or a `Drop`.
pub const MAX_ARGUMENT_DEPTH: usize = 128;

/// Decodes `args` into `A`, after the checks every tool gets:
/// - the arguments are an object, nested at most [`MAX_ARGUMENT_DEPTH`] deep;
/// - a property the schema does not declare is refused when the schema is closed;
/// - `null` for a property that is not required means "absent" (strict-mode providers
///   send every property, optionals as `null`).
pub fn decode_args<A: DeserializeOwned + 'static>(
    schema: &ArgsSchema,
    args: &Value,
) -> Result<A, ToolError> {
    let args = prepare(schema, args)?;
    // `()` is the natural "no parameters" type; its schema is an empty object, but serde
    // reads unit only from `null`. (Borrowed, so no owned-`Value` decoder is built.)
    let target = if TypeId::of::<A>() == TypeId::of::<()>() {
        &Value::Null
    } else {
        &*args
    };
    A::deserialize(target).map_err(|error| located(schema, &args, &error.to_string()))
}

/// The checks before decoding, kept out of the generic [`decode_args`] so that each
/// tool compiles only its own decoder, not another copy of these.
fn prepare<'a>(schema: &ArgsSchema, args: &'a Value) -> Result<Cow<'a, Value>, ToolError> {
    let Value::Object(map) = args else {
        return Err(not_an_object(args));
    };
    // One pass over the top level: depth, and the two checks that need the schema. The
    // property lookups run only where needed (a `null`, or a type that would silently
    // ignore unknown fields), so the common call pays for neither.
    let check_unknown = schema.must_check_unknown();
    let mut null_optionals = false;
    for (key, value) in map {
        // Scalars, the common case, skip the call.
        if too_deep(value) {
            return Err(nested_too_deep());
        }
        if !(check_unknown || value.is_null()) {
            continue;
        }
        match schema.property(key) {
            Some(property) => null_optionals |= value.is_null() && !property.required,
            None if check_unknown => return Err(unknown_field(schema, key)),
            None => {}
        }
    }
    if !null_optionals {
        return Ok(Cow::Borrowed(args));
    }
    let mut owned = map.clone();
    owned.retain(|key, value| {
        !(value.is_null() && schema.property(key).is_some_and(|p| !p.required))
    });
    Ok(Cow::Owned(Value::Object(owned)))
}

fn not_an_object(args: &Value) -> ToolError {
    ToolError::invalid_arguments(format!(
        "Invalid arguments: expected a JSON object, got {}",
        json_kind(args)
    ))
}

/// Whether a top-level argument nests deeper than [`MAX_ARGUMENT_DEPTH`]. Scalars, the
/// common case, skip the call.
fn too_deep(value: &Value) -> bool {
    matches!(value, Value::Array(_) | Value::Object(_))
        && exceeds_depth(value, MAX_ARGUMENT_DEPTH - 1)
}

fn nested_too_deep() -> ToolError {
    ToolError::invalid_arguments(format!(
        "Invalid arguments: nested deeper than {MAX_ARGUMENT_DEPTH} levels"
    ))
}

/// Reads the arguments of a `#[tool]` fn parameter by parameter, answering exactly as
/// [`decode_args`] into a struct with those fields (`deny_unknown_fields`) would: the
/// same checks, the same first error, the same message.
///
/// The generated code asks for each parameter with [`arg`](Self::arg) (or
/// [`read`](Self::read) when it has a default, applied once nothing failed). Each is
/// generic in the parameter's type only, so every tool with a `String` parameter shares
/// one decoder; what is left per tool is a call per parameter.
///
/// Errors are kept with the position of their key in the object, and the first one
/// wins, as serde reports the first it meets walking the object; a missing field counts
/// only when nothing in the object was wrong, the first in parameter order.
#[doc(hidden)]
pub struct ArgsReader<'v, 's> {
    schema: &'s ArgsSchema,
    names: &'s [&'static str],
    args: &'v Value,
    slots: &'s mut [Option<&'v Value>],
    error: Option<(usize, String)>,
}

impl<'v, 's> ArgsReader<'v, 's> {
    /// Checks `args` as [`decode_args`] does and puts each known property's value in
    /// the slot of its name in `names`; `null` for an optional property is absent. An
    /// unknown property is kept as an error, reported unless an earlier one is.
    pub fn new(
        schema: &'s ArgsSchema,
        names: &'s [&'static str],
        args: &'v Value,
        slots: &'s mut [Option<&'v Value>],
    ) -> Result<Self, ToolError> {
        let Value::Object(map) = args else {
            return Err(not_an_object(args));
        };
        let mut error = None;
        for (position, (key, value)) in map.iter().enumerate() {
            if too_deep(value) {
                return Err(nested_too_deep());
            }
            match find_name(names, key).and_then(|index| slots.get_mut(index)) {
                Some(slot) => {
                    let absent =
                        value.is_null() && schema.property(key).is_some_and(|p| !p.required);
                    if !absent {
                        *slot = Some(value);
                    }
                }
                None => {
                    if error.is_none() {
                        error = Some((position, unknown_field_message(key, names)));
                    }
                }
            }
        }
        Ok(Self {
            schema,
            names,
            args,
            slots,
            error,
        })
    }

    /// The value of parameter `index` when the model sent one and it decodes.
    pub fn read<T: DeserializeOwned>(&mut self, index: usize) -> Option<T> {
        let value = self.slots.get(index).copied().flatten()?;
        match T::deserialize(value) {
            Ok(decoded) => Some(decoded),
            Err(error) => {
                let position = self.position_of(value);
                if self
                    .error
                    .as_ref()
                    .is_none_or(|(first, _)| position < *first)
                {
                    self.error = Some((position, error.to_string()));
                }
                None
            }
        }
    }

    /// The value of parameter `index`, or for an absent one what serde makes of a
    /// missing field: `None` for an `Option`, otherwise the "missing field" error, which
    /// counts only when nothing in the object was wrong (the first in parameter order).
    pub fn arg<T: DeserializeOwned>(&mut self, index: usize) -> Option<T> {
        if self.slots.get(index).copied().flatten().is_some() {
            return self.read(index);
        }
        let name = self.names.get(index).copied().unwrap_or_default();
        match T::deserialize(MissingField(name)) {
            Ok(decoded) => Some(decoded),
            Err(error) => {
                if self.error.is_none() {
                    self.error = Some((usize::MAX, error.to_string()));
                }
                None
            }
        }
    }

    /// Whether something was wrong.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// The first error, located as [`decode_args`] locates it.
    pub fn into_error(self) -> ToolError {
        let message = self
            .error
            .map_or_else(|| "the arguments could not be read".to_owned(), |(_, m)| m);
        match prepare(self.schema, self.args) {
            Ok(args) => located(self.schema, &args, &message),
            Err(error) => error,
        }
    }

    /// Where `value` stands in the object (it is one of its values).
    fn position_of(&self, value: &Value) -> usize {
        match self.args {
            Value::Object(map) => map
                .values()
                .position(|v| std::ptr::eq(v, value))
                .unwrap_or(usize::MAX),
            _ => usize::MAX,
        }
    }
}

/// serde's "unknown field" message, worded as `de::Error::unknown_field` words it for a
/// derived struct (which needs the names for the life of the program; these are the
/// tool's).
fn unknown_field_message(key: &str, names: &[&str]) -> String {
    match names {
        [] => format!("unknown field `{key}`, there are no fields"),
        [only] => format!("unknown field `{key}`, expected `{only}`"),
        [first, second] => format!("unknown field `{key}`, expected `{first}` or `{second}`"),
        _ => {
            let listed: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
            format!(
                "unknown field `{key}`, expected one of {}",
                listed.join(", ")
            )
        }
    }
}

/// The index of `key` in `names`. Length and first byte first: most names differ there,
/// and a full comparison is a call to `memcmp`.
fn find_name(names: &[&str], key: &str) -> Option<usize> {
    let key = key.as_bytes();
    names.iter().position(|name| {
        let name = name.as_bytes();
        name.len() == key.len() && name.first() == key.first() && name == key
    })
}

/// What serde's derive decodes an absent field from: an `Option` reads it as `None`,
/// anything else fails with "missing field".
struct MissingField(&'static str);

impl<'de> Deserializer<'de> for MissingField {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// A decoding error with the path of the field at fault: serde says what was wrong, the
/// schema walk says where.
fn located(schema: &ArgsSchema, args: &Value, error: &str) -> ToolError {
    match first_violation(schema.schema(), args) {
        Some(path) => ToolError::invalid_arguments(format!("Invalid arguments: {path}: {error}")),
        None => ToolError::invalid_arguments(format!("Invalid arguments: {error}")),
    }
}

fn unknown_field(schema: &ArgsSchema, key: &str) -> ToolError {
    let expected: Vec<String> = schema.property_names().map(|n| format!("`{n}`")).collect();
    let expected = if expected.is_empty() {
        "this tool takes no arguments".to_owned()
    } else {
        format!("expected one of {}", expected.join(", "))
    };
    ToolError::invalid_arguments(format!(
        "Invalid arguments: unknown field `{key}`, {expected}"
    ))
}

/// A JSON value's kind, for messages.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether `value` nests more than `limit` levels. Recursion stops at the limit, so the
/// check itself is bounded whatever the input.
pub(crate) fn exceeds_depth(value: &Value, limit: usize) -> bool {
    if limit == 0 {
        return matches!(value, Value::Array(_) | Value::Object(_));
    }
    match value {
        Value::Array(items) => items.iter().any(|v| exceeds_depth(v, limit - 1)),
        Value::Object(map) => map.values().any(|v| exceeds_depth(v, limit - 1)),
        _ => false,
    }
}

//! Turning the JSON a model sent into typed arguments, with errors that name the field.

use crate::error::ToolError;
use crate::locate::first_violation;
use crate::schema::ArgsSchema;
use serde::de::DeserializeOwned;
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
        return Err(ToolError::invalid_arguments(format!(
            "Invalid arguments: expected a JSON object, got {}",
            json_kind(args)
        )));
    };
    // One pass over the top level: depth, and the two checks that need the schema. The
    // property lookups run only where needed (a `null`, or a type that would silently
    // ignore unknown fields), so the common call pays for neither.
    let check_unknown = schema.must_check_unknown();
    let mut null_optionals = false;
    for (key, value) in map {
        // Scalars, the common case, skip the call.
        if matches!(value, Value::Array(_) | Value::Object(_))
            && exceeds_depth(value, MAX_ARGUMENT_DEPTH - 1)
        {
            return Err(ToolError::invalid_arguments(format!(
                "Invalid arguments: nested deeper than {MAX_ARGUMENT_DEPTH} levels"
            )));
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

//! Checking a tool's example inputs against its own argument schema, for
//! [`assert_dialects`](super::assert_dialects): a provider that shows examples to the
//! model (Anthropic's `input_examples`) refuses a request whose example does not match
//! the schema, and an example that does not match teaches the model a mistake.
//!
//! The check covers what argument schemas are made of (schemars' output and what the
//! dialects render): `$ref` to local definitions, `type` (and OpenAPI's `nullable`),
//! `enum`, `const`, `properties`, `required`, `additionalProperties`, maps, `items`,
//! `prefixItems`, `anyOf`, `oneOf`, `allOf`, and the numeric and length bounds. It is
//! written here rather than taken from a general validator so that the core crate
//! stays small; `pattern` and `format` are not checked (a regular-expression engine
//! would be the core's largest dependency), and a schema keyword it does not know is
//! taken as no constraint.

use super::shape::{MAX_SCHEMA_DEPTH, defs_of, has_type, local_ref_name, map_of};
use serde_json::{Map, Value};

/// The first way `value` fails `schema` (a root argument schema, whose definitions its
/// `$ref`s name): where in the value, as a JSON pointer, and what. `None` when it
/// matches.
pub(super) fn mismatch(schema: &Value, value: &Value) -> Option<String> {
    let checker = Checker {
        defs: defs_of(schema),
    };
    checker
        .check(schema, value, &mut String::new(), 0)
        .map(|(path, problem)| {
            if path.is_empty() {
                problem
            } else {
                format!("at `{path}`: {problem}")
            }
        })
}

struct Checker<'a> {
    defs: Option<&'a Map<String, Value>>,
}

/// Where and what.
type Problem = (String, String);

impl Checker<'_> {
    fn check(
        &self,
        schema: &Value,
        value: &Value,
        path: &mut String,
        depth: usize,
    ) -> Option<Problem> {
        let fail = |path: &String, problem: String| Some((path.clone(), problem));
        if depth > MAX_SCHEMA_DEPTH {
            return fail(path, "the schema nests too deeply to check".into());
        }
        let schema = match schema {
            Value::Bool(true) => return None,
            Value::Bool(false) => return fail(path, "no value is allowed here".into()),
            Value::Object(schema) => schema,
            _ => return None,
        };
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            let Some(def) = local_ref_name(target)
                .and_then(|name| self.defs.and_then(|defs| defs.get(name.as_ref())))
            else {
                return fail(
                    path,
                    format!("the schema's `$ref` `{target}` names no definition"),
                );
            };
            if let Some(problem) = self.check(def, value, path, depth + 1) {
                return Some(problem);
            }
        }
        if value.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
            return None;
        }
        if let Some(problem) = type_mismatch(schema, value) {
            return fail(path, problem);
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            return fail(
                path,
                format!("{} is not one of {}", value, Value::Array(allowed.clone())),
            );
        }
        if let Some(expected) = schema.get("const")
            && expected != value
        {
            return fail(path, format!("{value} is not {expected}"));
        }
        if let Some(problem) = bounds(schema, value) {
            return fail(path, problem);
        }
        if let Some(problem) = self.alternatives(schema, value, path, depth) {
            return Some(problem);
        }
        match value {
            Value::Object(object) => self.object(schema, object, path, depth),
            Value::Array(items) => self.array(schema, items, path, depth),
            _ => None,
        }
    }

    /// `allOf`: every one; `anyOf`: at least one; `oneOf`: exactly one.
    fn alternatives(
        &self,
        schema: &Map<String, Value>,
        value: &Value,
        path: &mut String,
        depth: usize,
    ) -> Option<Problem> {
        if let Some(Value::Array(all)) = schema.get("allOf") {
            for sub in all {
                if let Some(problem) = self.check(sub, value, path, depth + 1) {
                    return Some(problem);
                }
            }
        }
        for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
            let Some(Value::Array(options)) = schema.get(key) else {
                continue;
            };
            let mut problems = Vec::new();
            let matching = options
                .iter()
                .filter(
                    |sub| match self.check(sub, value, &mut path.clone(), depth + 1) {
                        None => true,
                        Some(problem) => {
                            problems.push(problem);
                            false
                        }
                    },
                )
                .count();
            if matching == 0 {
                // One alternative's own complaint reads better than "none matched",
                // when there was only one to choose from.
                if let [problem] = problems.as_slice() {
                    return Some(problem.clone());
                }
                return Some((
                    path.clone(),
                    format!("{value} matches none of the `{key}` alternatives"),
                ));
            }
            if exactly_one && matching > 1 {
                return Some((
                    path.clone(),
                    format!("{value} matches more than one of the `oneOf` alternatives"),
                ));
            }
        }
        None
    }

    fn object(
        &self,
        schema: &Map<String, Value>,
        object: &Map<String, Value>,
        path: &mut String,
        depth: usize,
    ) -> Option<Problem> {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    return Some((
                        path.clone(),
                        format!("the required property `{name}` is missing"),
                    ));
                }
            }
        }
        let map_values = map_of(schema).map(|map| map.values);
        for (key, value) in object {
            let sub = match properties.and_then(|p| p.get(key)) {
                Some(sub) => sub,
                None => match (map_values, schema.get("additionalProperties")) {
                    (Some(values), _) => values,
                    (None, Some(Value::Bool(false))) => {
                        return Some((
                            path.clone(),
                            format!("`{key}` is not a property the tool has"),
                        ));
                    }
                    (None, Some(sub @ Value::Object(_))) => sub,
                    _ => continue,
                },
            };
            let len = path.len();
            path.push('/');
            path.push_str(&key.replace('~', "~0").replace('/', "~1"));
            let problem = self.check(sub, value, path, depth + 1);
            path.truncate(len);
            if problem.is_some() {
                return problem;
            }
        }
        None
    }

    fn array(
        &self,
        schema: &Map<String, Value>,
        items: &[Value],
        path: &mut String,
        depth: usize,
    ) -> Option<Problem> {
        let prefix = schema
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for (index, item) in items.iter().enumerate() {
            let sub = match prefix.get(index) {
                Some(sub) => sub,
                None => match schema.get("items") {
                    Some(sub) => sub,
                    None => continue,
                },
            };
            let len = path.len();
            path.push('/');
            path.push_str(&index.to_string());
            let problem = self.check(sub, item, path, depth + 1);
            path.truncate(len);
            if problem.is_some() {
                return problem;
            }
        }
        None
    }
}

/// The JSON type names `value` has (an integral number is both).
fn type_names(value: &Value) -> &'static [&'static str] {
    match value {
        Value::Null => &["null"],
        Value::Bool(_) => &["boolean"],
        Value::Number(n) if n.is_i64() || n.is_u64() => &["integer", "number"],
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => &["integer", "number"],
        Value::Number(_) => &["number"],
        Value::String(_) => &["string"],
        Value::Array(_) => &["array"],
        Value::Object(_) => &["object"],
    }
}

/// `type`: the value has one of the types named.
fn type_mismatch(schema: &Map<String, Value>, value: &Value) -> Option<String> {
    let expected = match schema.get("type")? {
        Value::String(name) => name.clone(),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => return None,
    };
    if type_names(value).iter().any(|name| has_type(schema, name)) {
        return None;
    }
    Some(format!("expected {expected}, found {value}"))
}

/// The numeric, length and size bounds.
fn bounds(schema: &Map<String, Value>, value: &Value) -> Option<String> {
    let limit = |key: &str| schema.get(key).and_then(Value::as_f64);
    let size = |key: &str| schema.get(key).and_then(Value::as_u64);
    match value {
        Value::Number(n) => {
            let n = n.as_f64()?;
            let checks = [
                ("minimum", limit("minimum").filter(|m| n < *m)),
                ("maximum", limit("maximum").filter(|m| n > *m)),
                (
                    "exclusiveMinimum",
                    limit("exclusiveMinimum").filter(|m| n <= *m),
                ),
                (
                    "exclusiveMaximum",
                    limit("exclusiveMaximum").filter(|m| n >= *m),
                ),
            ];
            checks
                .into_iter()
                .find_map(|(key, broken)| broken.map(|m| format!("{value} breaks `{key}: {m}`")))
        }
        Value::String(s) => {
            let length = s.chars().count() as u64;
            let checks = [
                ("minLength", size("minLength").filter(|m| length < *m)),
                ("maxLength", size("maxLength").filter(|m| length > *m)),
            ];
            checks
                .into_iter()
                .find_map(|(key, broken)| broken.map(|m| format!("{value} breaks `{key}: {m}`")))
        }
        Value::Array(items) => {
            let count = items.len() as u64;
            let checks = [
                ("minItems", size("minItems").filter(|m| count < *m)),
                ("maxItems", size("maxItems").filter(|m| count > *m)),
            ];
            checks.into_iter().find_map(|(key, broken)| {
                broken.map(|m| format!("{count} items break `{key}: {m}`"))
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::mismatch;
    use serde_json::json;

    #[test]
    fn a_matching_value_passes_and_each_mistake_is_named_where_it_is() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "minimum": 1, "maximum": 16},
                "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "limits": {"type": "object", "additionalProperties": {"type": "number"}},
            },
            "required": ["city"],
            "additionalProperties": false,
            "$defs": {"Unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        });
        let ok = json!({"city": "Oslo", "days": 3, "unit": "celsius", "tags": ["a"], "limits": {"x": 1.5}});
        assert_eq!(mismatch(&schema, &ok), None);
        assert_eq!(
            mismatch(&schema, &json!({"city": "Oslo", "unit": null})),
            None
        );
        for (value, expected) in [
            (
                json!({"days": 3}),
                "the required property `city` is missing",
            ),
            (
                json!({"city": "Oslo", "days": "three"}),
                "at `/days`: expected integer, found \"three\"",
            ),
            (
                json!({"city": "Oslo", "days": 2.5}),
                "at `/days`: expected integer, found 2.5",
            ),
            (
                json!({"city": "Oslo", "days": 40}),
                "at `/days`: 40 breaks `maximum: 16`",
            ),
            (
                json!({"city": "Oslo", "unit": "kelvin"}),
                "at `/unit`: \"kelvin\" matches none of the `anyOf` alternatives",
            ),
            (
                json!({"city": "Oslo", "tags": ["a", 1]}),
                "at `/tags/1`: expected string, found 1",
            ),
            (
                json!({"city": "Oslo", "limits": {"x": "high"}}),
                "at `/limits/x`: expected number, found \"high\"",
            ),
            (
                json!({"city": "Oslo", "weeks": 1}),
                "`weeks` is not a property the tool has",
            ),
            (
                json!({"city": ""}),
                "at `/city`: \"\" breaks `minLength: 1`",
            ),
            (json!(["Oslo"]), "expected object, found [\"Oslo\"]"),
        ] {
            assert_eq!(
                mismatch(&schema, &value).as_deref(),
                Some(expected),
                "{value}"
            );
        }
    }

    #[test]
    fn a_reference_cycle_ends_in_a_problem_not_a_stack_overflow() {
        let schema = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}});
        let problem = mismatch(&schema, &json!({})).unwrap();
        assert!(problem.contains("nests too deeply"), "{problem}");
    }
}

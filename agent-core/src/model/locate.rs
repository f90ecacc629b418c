//! Finding where arguments depart from their schema, to put a field path in front of a
//! decoding error.
//!
//! serde's errors say what was wrong but not where. Tracking the path while decoding
//! (serde_path_to_error) would monomorphize a second decoder for every argument type,
//! doubling the code each tool compiles to. Instead, when decoding fails, this walks the
//! arguments beside their schema (code compiled once, for every tool) in the order a
//! derived decoder visits them: object entries in the order they were sent, then the
//! required properties that are missing. The first place that breaks the schema is
//! where decoding failed.

use serde_json::{Map, Value};

/// Nesting of `$ref`s and unions followed without descending into the arguments; a
/// schema that loops on itself stops here.
const MAX_SCHEMA_HOPS: usize = 64;

/// Schema checks one walk makes at most. A union whose branches all descend into the
/// same value (an untagged enum of look-alike variants, nested) takes time exponential
/// in the nesting; past this, the walk gives up and the error goes without its path.
const MAX_STEPS: usize = 100_000;

/// The path (`window.days`, `points[2].x`) of the first place `args` breaks `schema`, or
/// `None` when it breaks nothing the walk checks, breaks it at the root, or takes the
/// walk more than [`MAX_STEPS`] to find.
pub(crate) fn first_violation(schema: &Value, args: &Value) -> Option<String> {
    let mut walk = Walk {
        root: schema,
        steps_left: MAX_STEPS,
    };
    let mut path = Vec::new();
    let fits = walk.check(schema, args, &mut path, 0);
    (!fits && !path.is_empty()).then(|| render(&path))
}

/// What keeps `args` from fitting `schema`, in words (`` `amount` does not fit ``), as
/// far as the walk sees: the top level (an object, its required and its closed
/// properties), then [`first_violation`]. `None` when the walk sees nothing wrong; a tool
/// may still refuse what the walk does not check (a range, a pattern, its validator).
pub(crate) fn schema_problem(schema: &Value, args: &Value) -> Option<String> {
    root_problem(schema, args)
        .or_else(|| first_violation(schema, args).map(|path| format!("`{path}` does not fit")))
}

/// What is wrong at the top level of `arguments`, which the schema walk does not name:
/// not an object, a required property missing, a property a closed schema lacks.
fn root_problem(schema: &Value, arguments: &Value) -> Option<String> {
    let Value::Object(given) = arguments else {
        return Some("expected a JSON object".to_owned());
    };
    let names = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    };
    if let Some(missing) = names("required").find(|name| !given.contains_key(*name)) {
        return Some(format!("`{missing}` is required and missing"));
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let unknown = given
            .keys()
            .find(|key| !properties.is_some_and(|p| p.contains_key(*key)));
        if let Some(key) = unknown {
            return Some(format!("`{key}` is not one of its properties"));
        }
    }
    None
}

enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

fn render(path: &[Segment<'_>]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

struct Walk<'s> {
    root: &'s Value,
    steps_left: usize,
}

impl<'s> Walk<'s> {
    /// Whether `value` fits `schema`. On `false`, `path` holds the segments down to the
    /// offending place.
    fn check<'v>(
        &mut self,
        schema: &'s Value,
        value: &'v Value,
        path: &mut Vec<Segment<'v>>,
        hops: usize,
    ) -> bool {
        let Value::Object(schema) = schema else {
            // `true`, `false` or a malformed schema: nothing more to learn here.
            return schema != &Value::Bool(false);
        };
        if hops > MAX_SCHEMA_HOPS || self.steps_left == 0 {
            return true;
        }
        self.steps_left -= 1;
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            return match self.resolve(target) {
                Some(target) => self.check(target, value, path, hops + 1),
                None => true,
            };
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(key) {
                return self.check_union(branches, value, path, hops);
            }
        }
        if let Some(Value::Array(all)) = schema.get("allOf")
            && !all.iter().all(|s| self.check(s, value, path, hops + 1))
        {
            return false;
        }
        if !type_fits(schema.get("type"), value) {
            return false;
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            return false;
        }
        if schema
            .get("const")
            .is_some_and(|constant| constant != value)
        {
            return false;
        }
        if !within_bounds(schema, value) {
            return false;
        }
        match value {
            Value::Object(map) => self.check_object(schema, map, path),
            Value::Array(items) => match schema.get("items") {
                Some(item_schema) => items.iter().enumerate().all(|(i, item)| {
                    path.push(Segment::Index(i));
                    let fits = self.check(item_schema, item, path, 0);
                    if fits {
                        path.pop();
                    }
                    fits
                }),
                None => true,
            },
            _ => true,
        }
    }

    fn check_object<'v>(
        &mut self,
        schema: &'s Map<String, Value>,
        map: &'v Map<String, Value>,
        path: &mut Vec<Segment<'v>>,
    ) -> bool {
        let properties = schema.get("properties").and_then(Value::as_object);
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        // A key not named is a map's: its values follow the one key pattern there is
        // (schemars' form of a map with integer keys), else `additionalProperties`.
        // Which of several patterns a key matches would take a regex engine; such keys
        // are left unchecked, as in an open object.
        let patterns = schema.get("patternProperties").and_then(Value::as_object);
        let pattern_schema = patterns
            .filter(|patterns| patterns.len() == 1)
            .and_then(|patterns| patterns.values().next());
        let several_patterns = patterns.is_some_and(|patterns| patterns.len() > 1);
        let extra_schema = pattern_schema
            .or_else(|| schema.get("additionalProperties"))
            .filter(|s| s.is_object());
        for (key, item) in map {
            let item_schema = properties.and_then(|p| p.get(key)).or(extra_schema);
            match item_schema {
                Some(item_schema) => {
                    path.push(Segment::Key(key));
                    if !self.check(item_schema, item, path, 0) {
                        return false;
                    }
                    path.pop();
                }
                // An unknown field is the object's fault, as serde reports it.
                None if closed && !several_patterns => return false,
                None => {}
            }
        }
        let required = schema.get("required").and_then(Value::as_array);
        !required.is_some_and(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .any(|name| !map.contains_key(name))
        })
    }

    /// A union fits when one branch does. When none does, the path is the one found in
    /// the branch meant for this kind of value (the non-null branch of an `Option`, the
    /// object variant named by the value's key), so it reaches the real culprit. Each
    /// branch is walked once: walking the likeliest again would double the work at every
    /// level of a recursive type.
    fn check_union<'v>(
        &mut self,
        branches: &'s [Value],
        value: &'v Value,
        path: &mut Vec<Segment<'v>>,
        hops: usize,
    ) -> bool {
        let mut paths = Vec::with_capacity(branches.len());
        for branch in branches {
            let mut branch_path = Vec::new();
            if self.check(branch, value, &mut branch_path, hops + 1) {
                return true;
            }
            paths.push(branch_path);
        }
        if let Some(likeliest) = self.likeliest_branch(branches, value) {
            path.append(&mut paths[likeliest]);
        }
        false
    }

    /// The position of the branch meant for `value`, if one stands out.
    fn likeliest_branch(&self, branches: &'s [Value], value: &Value) -> Option<usize> {
        let same_kind: Vec<(usize, &'s Value)> = branches
            .iter()
            .map(|b| {
                b.get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| self.resolve(r))
                    .unwrap_or(b)
            })
            .enumerate()
            .filter(|(_, b)| type_fits(b.get("type"), value) || b.get("type").is_none())
            .collect();
        if let Value::Object(map) = value {
            // An externally tagged variant: the branch whose properties hold the key sent.
            if let Some((found, _)) = same_kind.iter().find(|(_, b)| {
                b.get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| map.keys().any(|k| p.contains_key(k)))
            }) {
                return Some(*found);
            }
        }
        match same_kind[..] {
            [(only, _)] => Some(only),
            _ => None,
        }
    }

    fn resolve(&self, reference: &str) -> Option<&'s Value> {
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }
}

fn type_fits(expected: Option<&Value>, value: &Value) -> bool {
    match expected {
        None => true,
        Some(Value::String(t)) => kind_fits(t, value),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .any(|t| kind_fits(t, value)),
        Some(_) => true,
    }
}

fn kind_fits(expected: &str, value: &Value) -> bool {
    match (expected, value) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) => true,
        ("string", Value::String(_)) | ("array", Value::Array(_)) => true,
        ("object", Value::Object(_)) | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

fn within_bounds(schema: &Map<String, Value>, value: &Value) -> bool {
    let Some(number) = value.as_f64() else {
        return true;
    };
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    // Integers beyond f64's exact range compare through i128 so u64::MAX is not rounded
    // into range.
    let exact = value
        .as_u64()
        .map(i128::from)
        .or_else(|| value.as_i64().map(i128::from));
    let above = |limit: f64| match exact {
        Some(n) => n > limit as i128 || (limit.fract() != 0.0 && n as f64 > limit),
        None => number > limit,
    };
    let below = |limit: f64| match exact {
        Some(n) => n < limit as i128 || (limit.fract() != 0.0 && (n as f64) < limit),
        None => number < limit,
    };
    !(bound("maximum").is_some_and(above)
        || bound("minimum").is_some_and(below)
        || bound("exclusiveMaximum").is_some_and(|l| number >= l)
        || bound("exclusiveMinimum").is_some_and(|l| number <= l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An untagged union of two variants that both hold `inner`, recursively: a value
    /// nested `levels` deep fits both at every level, so walking it doubles per level.
    fn look_alike(levels: usize) -> (Value, Value) {
        let variant = |own: &str| {
            json!({
                "type": "object",
                "properties": {
                    "inner": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/LookAlike"}]},
                    own: {"type": "integer"}
                }
            })
        };
        let schema = json!({
            "type": "object",
            "properties": {"nesting": {"$ref": "#/$defs/LookAlike"}},
            "$defs": {"LookAlike": {"anyOf": [variant("a"), variant("b")]}}
        });
        let nesting = (0..levels).fold(json!(5), |inner, _| json!({ "inner": inner }));
        (schema, json!({ "nesting": nesting }))
    }

    #[test]
    fn a_walk_that_would_take_exponential_time_gives_up() {
        // 2^10 steps: the path is found.
        let (schema, args) = look_alike(10);
        let expected = format!("nesting.{}inner", "inner.".repeat(9));
        assert_eq!(first_violation(&schema, &args), Some(expected));
        // 2^60 steps: the walk stops at its budget, without a path.
        let (schema, args) = look_alike(60);
        assert_eq!(first_violation(&schema, &args), None);
    }
}

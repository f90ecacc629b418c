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

/// The path (`window.days`, `points[2].x`) of the first place `args` breaks `schema`, or
/// `None` when it breaks nothing the walk checks, or breaks it at the root.
pub(crate) fn first_violation(schema: &Value, args: &Value) -> Option<String> {
    let mut walk = Walk { root: schema };
    let mut path = Vec::new();
    let fits = walk.check(schema, args, &mut path, 0);
    (!fits && !path.is_empty()).then(|| render(&path))
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
        if hops > MAX_SCHEMA_HOPS {
            return true;
        }
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
        let extra_schema = schema.get("additionalProperties").filter(|s| s.is_object());
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
                None if closed => return false,
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

    /// A union fits when one branch does. When none does, the walk goes on into the
    /// branch meant for this kind of value (the non-null branch of an `Option`, the
    /// object variant named by the value's key), so the path reaches the real culprit.
    fn check_union<'v>(
        &mut self,
        branches: &'s [Value],
        value: &'v Value,
        path: &mut Vec<Segment<'v>>,
        hops: usize,
    ) -> bool {
        let depth = path.len();
        if branches
            .iter()
            .any(|branch| self.check(branch, value, &mut Vec::new(), hops + 1))
        {
            return true;
        }
        path.truncate(depth);
        if let Some(branch) = self.likeliest_branch(branches, value) {
            self.check(branch, value, path, hops + 1);
        }
        false
    }

    fn likeliest_branch(&self, branches: &'s [Value], value: &Value) -> Option<&'s Value> {
        let resolved: Vec<&'s Value> = branches
            .iter()
            .map(|b| {
                b.get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| self.resolve(r))
                    .unwrap_or(b)
            })
            .collect();
        let same_kind: Vec<&'s Value> = resolved
            .into_iter()
            .filter(|b| type_fits(b.get("type"), value) || b.get("type").is_none())
            .collect();
        if let Value::Object(map) = value {
            // An externally tagged variant: the branch whose properties hold the key sent.
            if let Some(found) = same_kind.iter().find(|b| {
                b.get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| map.keys().any(|k| p.contains_key(k)))
            }) {
                return Some(found);
            }
        }
        (same_kind.len() == 1).then(|| same_kind[0])
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

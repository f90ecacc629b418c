//! Reading a JSON Schema's shape: its types, whether it is an object or a map, its
//! definitions and the references between them. Shared by rendering, checking and
//! argument normalisation.

use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// How deep a schema may nest before rendering gives up, so no input can exhaust the
/// stack. Real argument schemas are far shallower.
pub(super) const MAX_SCHEMA_DEPTH: usize = 128;

pub(super) fn has_type(m: &Map<String, Value>, wanted: &str) -> bool {
    match m.get("type") {
        Some(Value::String(t)) => t == wanted,
        Some(Value::Array(types)) => types.iter().any(|t| t == wanted),
        _ => false,
    }
}

/// An object schema with named properties (or none at all).
pub(super) fn is_object(m: &Map<String, Value>) -> bool {
    has_type(m, "object") || m.contains_key("properties")
}

/// An object schema whose keys are data: no named properties, values described by
/// `additionalProperties` or by a single `patternProperties` entry.
pub(super) fn is_map(m: &Map<String, Value>) -> bool {
    map_of(m).is_some()
}

/// What a map schema says about its entries.
pub(super) struct MapSchema<'a> {
    /// The schema of every value.
    pub(super) values: &'a Value,
    /// The regular expression every key matches, if the map says so.
    pub(super) key_pattern: Option<&'a str>,
}

/// The entries of a map schema (see [`is_map`]), or `None` for any other schema.
///
/// Besides `additionalProperties: {schema}`, a map is one `patternProperties` entry
/// with no other key allowed: schemars writes `HashMap<u32, V>` as
/// `{"additionalProperties": false, "patternProperties": {"^\\d+$": V}}`. Read as a
/// plain object, that is a closed object without properties, whose only value is
/// `{}`. (With `additionalProperties` absent, keys outside the pattern could hold
/// anything; the map reading narrows them to the pattern, which the tool accepts.)
pub(super) fn map_of(m: &Map<String, Value>) -> Option<MapSchema<'_>> {
    let named = m
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if !has_type(m, "object") || named {
        return None;
    }
    match m.get("additionalProperties") {
        Some(values @ Value::Object(_)) => Some(MapSchema {
            values,
            key_pattern: None,
        }),
        None | Some(Value::Bool(false)) => {
            let Some(Value::Object(patterns)) = m.get("patternProperties") else {
                return None;
            };
            let mut patterns = patterns.iter();
            match (patterns.next(), patterns.next()) {
                (Some((pattern, values)), None) => Some(MapSchema {
                    values,
                    key_pattern: Some(pattern),
                }),
                _ => None,
            }
        }
        Some(_) => None,
    }
}

/// The schema's definitions (`$defs`, or draft 7's `definitions`), borrowed: cloning
/// is recursive, and a hostile schema may nest deeper than the stack allows.
pub(super) fn defs_of(schema: &Value) -> Option<&Map<String, Value>> {
    ["$defs", "definitions"]
        .iter()
        .find_map(|key| schema.get(*key).and_then(Value::as_object))
}

/// The definition name of a local reference, `#/$defs/Name` or `#/definitions/Name`,
/// with JSON pointer escapes (`~1` for `/`, `~0` for `~`) undone.
pub(super) fn local_ref_name(target: &str) -> Option<Cow<'_, str>> {
    let name = target
        .strip_prefix("#/$defs/")
        .or_else(|| target.strip_prefix("#/definitions/"))
        .filter(|name| !name.is_empty() && !name.contains('/'))?;
    Some(if name.contains('~') {
        Cow::Owned(name.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(name)
    })
}

/// A definition that reaches itself through references, if any.
pub(super) fn find_cycle(defs: &Map<String, Value>) -> Option<String> {
    fn refs(schema: &Value, out: &mut BTreeSet<String>, depth: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            return;
        }
        match schema {
            Value::Object(map) => {
                if let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(local_ref_name)
                {
                    out.insert(name.into_owned());
                }
                for value in map.values() {
                    refs(value, out, depth + 1);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out, depth + 1)),
            _ => {}
        }
    }
    let edges: Vec<(String, BTreeSet<String>)> = defs
        .iter()
        .map(|(name, def)| {
            let mut out = BTreeSet::new();
            refs(def, &mut out, 0);
            (name.clone(), out)
        })
        .collect();
    let targets = |name: &str| edges.iter().find(|(n, _)| n == name).map(|(_, t)| t);
    // Depth-first search with colours; the stack is explicit, so no schema can exhaust
    // the call stack.
    let mut done: BTreeSet<String> = BTreeSet::new();
    for (start, _) in &edges {
        if done.contains(start) {
            continue;
        }
        let mut path: Vec<String> = vec![start.clone()];
        let mut iters: Vec<Vec<String>> = vec![
            targets(start)
                .map(|t| t.iter().cloned().collect())
                .unwrap_or_default(),
        ];
        while let Some(next) = iters.last_mut().map(Vec::pop) {
            match next {
                Some(target) => {
                    if path.contains(&target) {
                        return Some(target);
                    }
                    if done.contains(&target) || targets(&target).is_none() {
                        continue;
                    }
                    iters.push(
                        targets(&target)
                            .map(|t| t.iter().cloned().collect())
                            .unwrap_or_default(),
                    );
                    path.push(target);
                }
                None => {
                    iters.pop();
                    if let Some(finished) = path.pop() {
                        done.insert(finished);
                    }
                }
            }
        }
    }
    None
}

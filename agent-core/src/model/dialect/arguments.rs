//! Mapping a model's arguments back to the shape the tool's own schema declares.
//!
//! The walk follows the tool's original schema (not the rendered one) alongside the
//! value, so it knows which properties were optional before a dialect made them
//! required, and which arrays were maps before a dialect made them lists of entries.

use super::Dialect;
use super::shape::{MAX_SCHEMA_DEPTH, defs_of, has_type, is_map, local_ref_name, map_of};
use serde_json::{Map, Value};

pub(super) fn normalize(dialect: Dialect, schema: &Value, args: Value) -> Value {
    let walk = Normalize {
        defs: defs_of(schema),
        entries: dialect.maps_as_entries(),
    };
    walk.value(schema, args, 0)
}

struct Normalize<'a> {
    defs: Option<&'a Map<String, Value>>,
    entries: bool,
}

impl Normalize<'_> {
    /// `schema` with its references followed; `None` for a dangling one.
    fn resolve<'s>(&'s self, mut schema: &'s Value) -> Option<&'s Value> {
        // A chain of references without a value in between is bounded here: the
        // value's own depth bounds everything else.
        for _ in 0..MAX_SCHEMA_DEPTH {
            match schema.get("$ref").and_then(Value::as_str) {
                Some(target) => schema = self.defs?.get(&*local_ref_name(target)?)?,
                None => return Some(schema),
            }
        }
        None
    }

    fn value(&self, schema: &Value, value: Value, depth: usize) -> Value {
        if depth > MAX_SCHEMA_DEPTH {
            return value;
        }
        let Some(Value::Object(m)) = self.resolve(schema) else {
            return value;
        };
        let value = match m.get("allOf") {
            Some(Value::Array(members)) => members
                .iter()
                .fold(value, |v, member| self.value(member, v, depth + 1)),
            _ => value,
        };
        match value {
            Value::Object(object) => self.object(m, object, depth),
            Value::Array(items) => self.array(m, items, depth),
            scalar => scalar,
        }
    }

    fn object(&self, m: &Map<String, Value>, object: Map<String, Value>, depth: usize) -> Value {
        if let Some(map) = map_of(m) {
            // Every value is read against the values' schema, whatever its key: telling
            // whether a key matches the map's pattern would take a regex engine, and
            // in the maps schemars writes (closed) such a key fails decoding anyway.
            let values = map.values;
            let object = object
                .into_iter()
                .map(|(k, v)| (k, self.value(values, v, depth + 1)))
                .collect();
            return Value::Object(object);
        }
        if let Some(Value::Object(properties)) = m.get("properties") {
            let required: Vec<&str> = m
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            for (key, value) in object {
                match properties.get(&key) {
                    // Optional in the tool's schema, `null` from the model: absent.
                    Some(_) if value.is_null() && !required.contains(&key.as_str()) => {}
                    Some(schema) => {
                        let value = self.value(schema, value, depth + 1);
                        out.insert(key, value);
                    }
                    None => {
                        out.insert(key, value);
                    }
                }
            }
            return Value::Object(out);
        }
        // The branch the object fits as the rendered schema checks it (strict dialects
        // close every object and require its properties). Only when none does, the
        // first open one: a derived struct without `deny_unknown_fields` is open, so
        // it fits any object and, tried first, would win over the variant sent.
        let branch = self
            .branch(m, |b| self.fits_object(b, &object, true))
            .or_else(|| self.branch(m, |b| self.fits_object(b, &object, false)));
        match branch {
            Some(branch) => self.value(branch, Value::Object(object), depth + 1),
            None => Value::Object(object),
        }
    }

    fn array(&self, m: &Map<String, Value>, items: Vec<Value>, depth: usize) -> Value {
        if self.entries
            && let Some(map) = map_of(m)
        {
            return self.entries(map.values, items, depth);
        }
        if let Some(Value::Array(prefix)) = m.get("prefixItems") {
            let rest = m.get("items");
            let items = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match prefix.get(i).or(rest) {
                    Some(schema) => self.value(schema, v, depth + 1),
                    None => v,
                })
                .collect();
            return Value::Array(items);
        }
        if let Some(schema) = m.get("items") {
            let items = items
                .into_iter()
                .map(|v| self.value(schema, v, depth + 1))
                .collect();
            return Value::Array(items);
        }
        let branch = self.branch(m, |b| {
            has_type(b, "array")
                || b.contains_key("items")
                || b.contains_key("prefixItems")
                || (self.entries && is_map(b))
        });
        match branch {
            Some(branch) => self.value(branch, Value::Array(items), depth + 1),
            None => Value::Array(items),
        }
    }

    /// A list of `{"key", "value"}` entries back into the map it stands for. Anything
    /// else is left for decoding to report.
    fn entries(&self, values: &Value, items: Vec<Value>, depth: usize) -> Value {
        let is_entry = |item: &Value| {
            item.as_object()
                .is_some_and(|e| e.len() == 2 && e.contains_key("key") && e.contains_key("value"))
        };
        if !items.iter().all(is_entry) {
            return Value::Array(items);
        }
        let mut map = Map::new();
        for item in items {
            let Value::Object(mut entry) = item else {
                continue;
            };
            let key = match entry.remove("key") {
                Some(Value::String(key)) => key,
                // Keys are strings in JSON; a model may send `1` for the key "1".
                Some(other) => other.to_string(),
                None => continue,
            };
            let value = entry.remove("value").unwrap_or(Value::Null);
            map.insert(key, self.value(values, value, depth + 1));
        }
        Value::Object(map)
    }

    /// The first `anyOf`/`oneOf` branch `fits` accepts.
    fn branch<'s>(
        &'s self,
        m: &'s Map<String, Value>,
        fits: impl Fn(&Map<String, Value>) -> bool,
    ) -> Option<&'s Value> {
        let branches = m
            .get("anyOf")
            .or_else(|| m.get("oneOf"))
            .and_then(Value::as_array)?;
        branches
            .iter()
            .find(|b| matches!(self.resolve(b), Some(Value::Object(b)) if fits(b)))
    }

    /// Whether an object value belongs to this branch: an object whose properties
    /// include every key sent and whose constant properties (a tag) match, or a map.
    ///
    /// `exact` reads the branch as the rendered schema does: a key outside its
    /// properties does not fit even where the branch is open, every required property
    /// must be sent, and a map fits only where the dialect keeps maps as objects.
    fn fits_object(
        &self,
        b: &Map<String, Value>,
        object: &Map<String, Value>,
        exact: bool,
    ) -> bool {
        if is_map(b) {
            return !(exact && self.entries);
        }
        let Some(Value::Object(properties)) = b.get("properties") else {
            return false;
        };
        if exact {
            let required = b.get("required").and_then(Value::as_array);
            let missing = required.is_some_and(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|name| !object.contains_key(name))
            });
            if missing {
                return false;
            }
        }
        let open = !exact && b.get("additionalProperties") != Some(&Value::Bool(false));
        object.iter().all(|(key, value)| match properties.get(key) {
            Some(schema) => match self.resolve(schema).and_then(|s| s.get("const")) {
                Some(tag) => tag == value,
                None => true,
            },
            None => open,
        })
    }
}

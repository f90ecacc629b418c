//! Argument schemas: generating them from types, normalising their root, and the facts
//! about them that argument decoding needs.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::{Map, Value, json};
use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{OnceLock, RwLock};

/// An argument schema together with what decoding needs to know about its root
/// properties. Built once per argument type.
#[derive(Debug, Clone)]
pub struct ArgsSchema {
    schema: Value,
    properties: Vec<Property>,
    closed: bool,
    decoder_denies_unknown: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Property {
    pub(crate) name: Box<str>,
    pub(crate) required: bool,
}

impl ArgsSchema {
    /// The normalised schema of `T`'s JSON form.
    pub fn of<T: JsonSchema>() -> Self {
        let generator = SchemaSettings::draft2020_12().into_generator();
        Self::from_schema(generator.into_root_schema_for::<T>().to_value())
    }

    /// The schema of `T`, built on first use and kept for the life of the process (one
    /// per argument type, so the memory is bounded by the program's types).
    pub fn cached<T: JsonSchema + 'static>() -> &'static Self {
        static CACHE: TypeCache<ArgsSchema> = OnceLock::new();
        per_type(&CACHE, TypeId::of::<T>(), Self::of::<T>)
    }

    /// Wraps a schema written by hand, normalising its root.
    pub fn from_schema(schema: Value) -> Self {
        let schema = normalize_root(schema);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .keys()
                    .map(|name| Property {
                        name: name.as_str().into(),
                        required: required.contains(&name.as_str()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        Self {
            schema,
            properties,
            closed,
            decoder_denies_unknown: false,
        }
    }

    /// Declares that the argument type refuses unknown fields itself
    /// (`#[serde(deny_unknown_fields)]`), so decoding need not look for them first.
    pub fn decoder_denies_unknown_fields(mut self) -> Self {
        self.decoder_denies_unknown = true;
        self
    }

    /// Whether decoding must look for unknown properties before the type's own decoder
    /// runs: the schema is closed and the type would otherwise ignore them.
    pub(crate) fn must_check_unknown(&self) -> bool {
        self.closed && !self.decoder_denies_unknown
    }

    /// The schema, root normalised.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether properties not in the schema are rejected.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    pub(crate) fn property(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| &*p.name == name)
    }

    pub(crate) fn property_names(&self) -> impl Iterator<Item = &str> {
        self.properties.iter().map(|p| &*p.name)
    }
}

/// Values kept for the life of the process, one per type (so the memory is bounded by
/// the program's types).
pub(crate) type TypeCache<V> =
    OnceLock<RwLock<HashMap<TypeId, &'static V, BuildHasherDefault<TypeIdHasher>>>>;

/// The value of `cache` for `key`, made by `make` on first use.
pub(crate) fn per_type<V: Sync + 'static>(
    cache: &'static TypeCache<V>,
    key: TypeId,
    make: impl FnOnce() -> V,
) -> &'static V {
    let cache = cache.get_or_init(Default::default);
    if let Some(found) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return found;
    }
    let mut cache = cache.write().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(key)
        .or_insert_with(|| Box::leak(Box::new(make())))
}

/// `TypeId`s are already well-distributed hashes: use their bits as they are.
#[derive(Default)]
pub(crate) struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }

    fn write_u128(&mut self, n: u128) {
        self.0 ^= n as u64 ^ (n >> 64) as u64;
    }
}

/// Makes a generated or hand-written schema fit to send: the root is an object schema,
/// without the generator's `$schema` and `title`, closed unless it says otherwise.
pub fn normalize_root(schema: Value) -> Value {
    let mut root = match schema {
        Value::Object(map) => map,
        // `true`, `{}`-like or unit schemas: a tool without parameters.
        Value::Bool(_) => Map::new(),
        other => return other,
    };
    root.remove("$schema");
    root.remove("title");
    match root.get("type") {
        Some(Value::String(t)) if t == "null" => {
            root.remove("type");
        }
        _ => {}
    }
    let is_composite = ["oneOf", "anyOf", "allOf"]
        .iter()
        .any(|k| root.contains_key(*k));
    if !root.contains_key("type") && !is_composite {
        root.insert("type".into(), json!("object"));
    }
    if root.get("type") == Some(&json!("object")) {
        root.entry("properties").or_insert_with(|| json!({}));
        root.entry("additionalProperties")
            .or_insert(Value::Bool(false));
    }
    Value::Object(root)
}

/// Why a schema cannot describe a tool's arguments, if it cannot.
pub(crate) fn root_problem(schema: &Value) -> Option<String> {
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => None,
        Some(other) => Some(format!(
            "the argument schema's root must be {{\"type\": \"object\"}}, found \"type\": {other}"
        )),
        None if schema.is_object() => Some(
            "the argument schema's root must be {\"type\": \"object\"}; it has no \"type\"".into(),
        ),
        None => Some(format!(
            "the argument schema must be a JSON object, found {schema}"
        )),
    }
}

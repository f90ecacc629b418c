//! The rule checkers: what each provider refuses, stated once, checked on any schema.
//!
//! Rendering runs these on its own output, so a rule the rewrite missed is an error
//! instead of a provider's HTTP 400; tests run them on hand-written bad schemas to show
//! each rule is enforced. The rules themselves are the tables in `vocab.rs`.

use super::Dialect;
use super::shape::{MAX_SCHEMA_DEPTH, defs_of, find_cycle, has_type, is_object, local_ref_name};
use super::vocab::{
    ANTHROPIC_MAX_OPTIONAL, ANTHROPIC_MAX_UNIONS, ANTHROPIC_STRICT_FORMATS,
    ANTHROPIC_STRICT_KEYWORDS, GEMINI_FORMATS, GEMINI_KEYWORDS, GEMINI_TYPES, OPENAI_LARGE_ENUM,
    OPENAI_LARGE_ENUM_LENGTH, OPENAI_MAX_DEPTH, OPENAI_MAX_ENUM_VALUES, OPENAI_MAX_PROPERTIES,
    OPENAI_MAX_STRING_LENGTH, OPENAI_STRICT_FORMATS, OPENAI_STRICT_KEYWORDS,
};
use serde_json::{Map, Value};
use std::fmt;

/// One broken rule: where in the schema, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// A JSON pointer to the offending schema (`""` is the root).
    pub path: String,
    /// The rule, in words.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "at the root: {}", self.message)
        } else {
            write!(f, "at `{}`: {}", self.path, self.message)
        }
    }
}

/// Every rule of `dialect` that the argument schema `schema` breaks; empty when the
/// provider will accept it.
pub fn check(dialect: Dialect, schema: &Value) -> Vec<Violation> {
    let mut checker = Checker {
        dialect,
        defs: defs_of(schema),
        violations: Vec::new(),
        properties: 0,
        strings: 0,
        enum_values: 0,
        optional: 0,
        unions: 0,
        too_deep: false,
    };
    checker.root(schema);
    checker.violations
}

/// How many optional and union-typed parameters a rendered schema has, for Anthropic
/// strict mode's per-request budget.
pub(super) fn anthropic_budget(schema: &Value) -> (usize, usize) {
    let mut checker = Checker {
        dialect: Dialect::AnthropicStrict,
        defs: defs_of(schema),
        violations: Vec::new(),
        properties: 0,
        strings: 0,
        enum_values: 0,
        optional: 0,
        unions: 0,
        too_deep: false,
    };
    checker.root(schema);
    (checker.optional, checker.unions)
}

struct Checker<'a> {
    dialect: Dialect,
    defs: Option<&'a Map<String, Value>>,
    violations: Vec<Violation>,
    properties: usize,
    strings: usize,
    enum_values: usize,
    optional: usize,
    unions: usize,
    too_deep: bool,
}

impl Checker<'_> {
    fn report(&mut self, path: &str, message: impl Into<String>) {
        self.violations.push(Violation {
            path: path.to_owned(),
            message: message.into(),
        });
    }

    fn root(&mut self, schema: &Value) {
        let d = self.dialect;
        let Some(root) = schema.as_object() else {
            self.report("", "the argument schema must be a JSON object");
            return;
        };
        if root.get("type") != Some(&Value::String("object".into())) {
            self.report(
                "",
                "the argument schema's root must be {\"type\": \"object\"}",
            );
        }
        if d == Dialect::OpenAiStrict && root.contains_key("anyOf") {
            self.report("", "OpenAI strict mode refuses `anyOf` at the root");
        }
        if d == Dialect::AnthropicStrict
            && let Some(name) = self.defs.and_then(find_cycle)
        {
            self.report(
                &format!("/$defs/{name}"),
                format!(
                    "`{name}` is recursive; Anthropic strict tool use refuses recursive schemas"
                ),
            );
        }
        self.node(schema, "", 0, 0);
        if let Some(Value::Object(defs)) = root.get("$defs") {
            for (name, def) in defs {
                self.strings += name.len();
                self.node(def, &format!("/$defs/{name}"), 1, 0);
            }
        }
        if d == Dialect::OpenAiStrict {
            self.openai_limits();
        }
        if d == Dialect::AnthropicStrict {
            if self.optional > ANTHROPIC_MAX_OPTIONAL {
                self.report(
                    "",
                    format!(
                        "{} optional parameters; Anthropic strict tool use allows {ANTHROPIC_MAX_OPTIONAL} per request",
                        self.optional
                    ),
                );
            }
            if self.unions > ANTHROPIC_MAX_UNIONS {
                self.report(
                    "",
                    format!(
                        "{} parameters with `anyOf` or type arrays; Anthropic strict tool use allows {ANTHROPIC_MAX_UNIONS} per request",
                        self.unions
                    ),
                );
            }
        }
    }

    fn openai_limits(&mut self) {
        if self.properties > OPENAI_MAX_PROPERTIES {
            self.report(
                "",
                format!(
                    "{} properties; OpenAI strict mode allows {OPENAI_MAX_PROPERTIES}",
                    self.properties
                ),
            );
        }
        if self.strings > OPENAI_MAX_STRING_LENGTH {
            self.report(
                "",
                format!(
                    "property names, definition names, enum and const values add up to {} characters; OpenAI strict mode allows {OPENAI_MAX_STRING_LENGTH}",
                    self.strings
                ),
            );
        }
        if self.enum_values > OPENAI_MAX_ENUM_VALUES {
            self.report(
                "",
                format!(
                    "{} enum values; OpenAI strict mode allows {OPENAI_MAX_ENUM_VALUES}",
                    self.enum_values
                ),
            );
        }
    }

    /// Checks one schema and its subschemas. `depth` counts schemas, for the stack
    /// bound; `objects` counts nested objects, for OpenAI's nesting limit.
    fn node(&mut self, schema: &Value, path: &str, depth: usize, objects: usize) {
        if depth > MAX_SCHEMA_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.report(
                    path,
                    format!("nested deeper than {MAX_SCHEMA_DEPTH} levels"),
                );
            }
            return;
        }
        let d = self.dialect;
        let m = match schema {
            Value::Object(m) => m,
            Value::Bool(_) if !is_restricted(d) => return,
            Value::Bool(_) => {
                self.report(path, format!("{d} needs a typed schema, not `{schema}`"));
                return;
            }
            other => {
                self.report(path, format!("{other} is not a schema"));
                return;
            }
        };
        if let Some(target) = m.get("$ref") {
            self.reference(target, path);
            if d == Dialect::OpenAiStrict && m.len() > 1 {
                self.report(path, "OpenAI strict mode refuses keywords beside `$ref`");
            }
        }
        self.types(m, path);
        self.required(m, path);
        for key in ["anyOf", "oneOf", "allOf"] {
            match m.get(key) {
                None => {}
                Some(Value::Array(members)) if !members.is_empty() => {}
                Some(_) => self.report(path, format!("`{key}` must be a non-empty array")),
            }
        }
        let objects = if is_object(m) { objects + 1 } else { objects };
        if is_restricted(d) {
            self.restricted(m, path, depth, objects);
        }
        self.children(m, path, depth, objects);
    }

    fn reference(&mut self, target: &Value, path: &str) {
        let d = self.dialect;
        if d == Dialect::Gemini {
            return; // `$ref` is reported as an unsupported keyword.
        }
        match target.as_str().and_then(local_ref_name) {
            Some(name) if self.defs.is_some_and(|d| d.contains_key(&*name)) => {}
            Some(name) => self.report(
                path,
                format!("`$ref` names `{name}`, which `$defs` does not define"),
            ),
            None => self.report(
                path,
                format!("`$ref` {target} is not a reference into this schema's `$defs`"),
            ),
        }
    }

    fn types(&mut self, m: &Map<String, Value>, path: &str) {
        const TYPES: &[&str] = &[
            "null", "boolean", "object", "array", "number", "string", "integer",
        ];
        let valid = match m.get("type") {
            None => true,
            Some(Value::String(t)) => TYPES.contains(&t.as_str()),
            Some(Value::Array(ts)) => {
                ts.iter()
                    .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t)))
                    && ts.iter().enumerate().all(|(i, t)| !ts[..i].contains(t))
            }
            Some(_) => false,
        };
        if !valid {
            self.report(
                path,
                format!("`type` {} is not a JSON Schema type", m["type"]),
            );
        }
    }

    /// `required` is a set of names (the metaschema's rule), and in the subsets, names
    /// of the object's own properties.
    fn required(&mut self, m: &Map<String, Value>, path: &str) {
        let Some(Value::Array(required)) = m.get("required") else {
            return;
        };
        let properties = m.get("properties").and_then(Value::as_object);
        for (i, name) in required.iter().enumerate() {
            let Some(text) = name.as_str() else {
                self.report(
                    path,
                    format!("`required` holds {name}, which is not a name"),
                );
                continue;
            };
            if required[..i].contains(name) {
                self.report(path, format!("`required` lists `{text}` twice"));
            }
            // Plain JSON Schema lets `required` name keys `properties` does not (a
            // map with mandatory entries); the subsets' closed objects cannot.
            if is_restricted(self.dialect) && properties.is_some_and(|p| !p.contains_key(text)) {
                self.report(
                    path,
                    format!("`required` names `{text}`, which is not a property"),
                );
            }
        }
    }

    /// The rules of the dialects that accept a subset of JSON Schema.
    fn restricted(&mut self, m: &Map<String, Value>, path: &str, depth: usize, objects: usize) {
        let d = self.dialect;
        let (keywords, formats) = match d {
            Dialect::OpenAiStrict => (OPENAI_STRICT_KEYWORDS, OPENAI_STRICT_FORMATS),
            Dialect::AnthropicStrict => (ANTHROPIC_STRICT_KEYWORDS, ANTHROPIC_STRICT_FORMATS),
            _ => (GEMINI_KEYWORDS, GEMINI_FORMATS),
        };
        for key in m.keys() {
            // `$defs` belongs at the root only.
            let allowed = keywords.contains(&key.as_str()) && (key != "$defs" || depth == 0);
            if !allowed {
                self.report(path, format!("{d} does not support `{key}`"));
            }
        }
        if let Some(format) = m.get("format")
            && !format.as_str().is_some_and(|f| formats.contains(&f))
        {
            self.report(path, format!("{d} does not support the format {format}"));
        }
        let shaped = ["type", "anyOf", "enum", "const", "$ref"]
            .iter()
            .any(|k| m.contains_key(*k));
        if !shaped {
            self.report(path, format!("{d} needs every schema to say its type"));
        }
        if has_type(m, "array") && !m.contains_key("items") {
            self.report(path, format!("{d} needs `items` on every array"));
        }
        if let Some(Value::Array(values)) = m.get("enum") {
            self.enum_values += values.len();
            let mut length = 0;
            for value in values {
                if let Value::String(s) = value {
                    length += s.len();
                }
            }
            self.strings += length;
            if d == Dialect::OpenAiStrict
                && values.len() > OPENAI_LARGE_ENUM
                && length > OPENAI_LARGE_ENUM_LENGTH
            {
                self.report(
                    path,
                    format!(
                        "an enum of more than {OPENAI_LARGE_ENUM} strings may total {OPENAI_LARGE_ENUM_LENGTH} characters in OpenAI strict mode, this one has {length}"
                    ),
                );
            }
            if d == Dialect::Gemini && !values.iter().all(Value::is_string) {
                self.report(path, "Gemini's `enum` holds strings only");
            }
        }
        if let Some(Value::String(s)) = m.get("const") {
            self.strings += s.len();
        }
        if m.contains_key("anyOf") || matches!(m.get("type"), Some(Value::Array(_))) {
            self.unions += 1;
        }
        match d {
            Dialect::Gemini => {
                if matches!(m.get("type"), Some(Value::Array(_))) {
                    self.report(
                        path,
                        "Gemini refuses type arrays; nullability is `nullable: true`",
                    );
                }
                if let Some(Value::String(t)) = m.get("type")
                    && !GEMINI_TYPES.contains(&t.as_str())
                {
                    self.report(path, format!("Gemini has no type \"{t}\""));
                }
                let empty = m
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(Map::is_empty);
                if has_type(m, "object") && empty && !path.is_empty() {
                    self.report(path, "Gemini refuses an object without properties");
                }
            }
            Dialect::AnthropicStrict => {
                if let Some(n) = m.get("minItems").and_then(Value::as_u64)
                    && n > 1
                {
                    self.report(
                        path,
                        "Anthropic strict tool use allows `minItems` of 0 or 1 only",
                    );
                }
            }
            _ => {}
        }
        if is_object(m) {
            self.object(m, path, objects);
        }
    }

    fn object(&mut self, m: &Map<String, Value>, path: &str, objects: usize) {
        let d = self.dialect;
        let properties = m.get("properties").and_then(Value::as_object);
        let names: Vec<&String> = properties.map(|p| p.keys().collect()).unwrap_or_default();
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        self.properties += names.len();
        self.strings += names.iter().map(|n| n.len()).sum::<usize>();
        self.optional += names
            .iter()
            .filter(|n| !required.contains(&n.as_str()))
            .count();
        if matches!(d, Dialect::OpenAiStrict | Dialect::AnthropicStrict)
            && m.get("additionalProperties") != Some(&Value::Bool(false))
        {
            self.report(
                path,
                format!("{d} needs `additionalProperties: false` on every object"),
            );
        }
        if d == Dialect::OpenAiStrict {
            let missing: Vec<&str> = names
                .iter()
                .map(|n| n.as_str())
                .filter(|n| !required.contains(n))
                .collect();
            if !missing.is_empty() {
                self.report(
                    path,
                    format!(
                        "OpenAI strict mode needs every property in `required`; missing: {}",
                        missing.join(", ")
                    ),
                );
            }
            if objects > OPENAI_MAX_DEPTH {
                self.report(
                    path,
                    format!("objects nest {objects} levels deep; OpenAI strict mode allows {OPENAI_MAX_DEPTH}"),
                );
            }
        }
    }

    fn children(&mut self, m: &Map<String, Value>, path: &str, depth: usize, objects: usize) {
        for (key, value) in m {
            match key.as_str() {
                "properties" | "patternProperties" | "dependentSchemas" => {
                    if let Value::Object(map) = value {
                        for (name, schema) in map {
                            let escaped = name.replace('~', "~0").replace('/', "~1");
                            self.node(
                                schema,
                                &format!("{path}/{key}/{escaped}"),
                                depth + 1,
                                objects,
                            );
                        }
                    }
                }
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                    if let Value::Array(items) = value {
                        for (i, schema) in items.iter().enumerate() {
                            self.node(schema, &format!("{path}/{key}/{i}"), depth + 1, objects);
                        }
                    }
                }
                "items"
                | "additionalProperties"
                | "not"
                | "if"
                | "then"
                | "else"
                | "propertyNames"
                | "contains"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                    // `additionalProperties: false` and `items: false` close, they
                    // do not describe a value.
                    if value.is_object() =>
                {
                    self.node(value, &format!("{path}/{key}"), depth + 1, objects);
                }
                _ => {}
            }
        }
    }
}

/// Dialects that accept a subset of JSON Schema, rather than all of it.
fn is_restricted(dialect: Dialect) -> bool {
    matches!(
        dialect,
        Dialect::OpenAiStrict | Dialect::AnthropicStrict | Dialect::Gemini
    )
}

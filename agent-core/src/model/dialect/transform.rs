//! Rewriting a tool's JSON Schema into a dialect's subset.
//!
//! One walk, parameterised by the dialect's [`Rules`]: what it cannot express is either
//! rewritten into an equivalent it can (`oneOf` → `anyOf`, a map → a list of entries,
//! a type array → `nullable`), folded into the description so the model still reads it
//! (`minLength`, `not`, ...), or reported as an error (a recursive type where references
//! must be inlined, a value of any shape where every schema needs a type).

use super::Dialect;
use super::shape::{
    MAX_SCHEMA_DEPTH, MapSchema, find_cycle, has_type, is_map, is_object, local_ref_name, map_of,
};
use super::vocab::{
    ANTHROPIC_STRICT_FORMATS, ANTHROPIC_STRICT_KEYWORDS, GEMINI_FORMATS, GEMINI_KEYWORDS,
    OPENAI_STRICT_FORMATS, OPENAI_STRICT_KEYWORDS,
};
use crate::model::args::exceeds_depth;
use serde_json::{Map, Value, json};

/// How many schema nodes inlining references may produce: a chain of types each
/// using the next twice doubles at every step.
const MAX_NODES: usize = 100_000;

/// What to do with `$ref`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Refs {
    /// Keep references and `$defs`; recursion is fine.
    Keep,
    /// Keep references and `$defs`, but a recursive type is an error.
    KeepAcyclic,
    /// Replace every reference by its definition; a recursive type is an error.
    Inline,
}

/// A dialect's constraints, as the walk needs them.
struct Rules {
    dialect: Dialect,
    /// `additionalProperties: false` on every object.
    close_objects: bool,
    /// Every property listed in `required`; optional ones become nullable.
    all_required: bool,
    refs: Refs,
    /// Nullability is `nullable: true` rather than a `null` type.
    nullable_flag: bool,
    keywords: &'static [&'static str],
    formats: &'static [&'static str],
    /// `enum` may hold strings only, and `const` becomes a one-value `enum`.
    string_enums: bool,
    /// The largest `minItems` accepted.
    max_min_items: Option<u64>,
    /// An object schema must name at least one property (below the root).
    objects_need_properties: bool,
}

impl Rules {
    fn of(dialect: Dialect) -> Option<Self> {
        Some(match dialect {
            Dialect::OpenAiStrict => Self {
                dialect,
                close_objects: true,
                all_required: true,
                refs: Refs::Keep,
                nullable_flag: false,
                keywords: OPENAI_STRICT_KEYWORDS,
                formats: OPENAI_STRICT_FORMATS,
                string_enums: false,
                max_min_items: None,
                objects_need_properties: false,
            },
            Dialect::AnthropicStrict => Self {
                dialect,
                close_objects: true,
                all_required: false,
                refs: Refs::KeepAcyclic,
                nullable_flag: false,
                keywords: ANTHROPIC_STRICT_KEYWORDS,
                formats: ANTHROPIC_STRICT_FORMATS,
                string_enums: false,
                max_min_items: Some(1),
                objects_need_properties: false,
            },
            Dialect::Gemini => Self {
                dialect,
                close_objects: false,
                all_required: false,
                refs: Refs::Inline,
                nullable_flag: true,
                keywords: GEMINI_KEYWORDS,
                formats: GEMINI_FORMATS,
                string_enums: true,
                max_min_items: None,
                objects_need_properties: true,
            },
            // These dialects take JSON Schema as it is.
            Dialect::OpenAi | Dialect::Anthropic | Dialect::Mcp => return None,
        })
    }
}

/// The argument schema `schema` in `dialect`, or why it cannot be expressed.
pub(super) fn render(dialect: Dialect, schema: &Value) -> Result<Value, String> {
    // Cloning and walking are recursive; a schema nested beyond what the walk accepts
    // is refused before either happens. Each schema level is two JSON levels
    // (`properties`, then the property).
    if exceeds_depth(schema, 2 * MAX_SCHEMA_DEPTH + 8) {
        return Err(format!(
            "the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
    }
    let Some(rules) = Rules::of(dialect) else {
        return Ok(schema.clone());
    };
    let mut root = match schema {
        Value::Object(map) => map.clone(),
        other => return Err(format!("the schema must be a JSON object, found {other}")),
    };
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = root.shift_remove(key) {
            defs.extend(found);
        }
    }
    root.shift_remove("$schema");
    if rules.refs == Refs::KeepAcyclic
        && let Some(name) = find_cycle(&defs)
    {
        return Err(format!(
            "`{name}` is a recursive type, which {dialect} cannot express"
        ));
    }
    let mut walk = Walk {
        rules,
        defs: &defs,
        stack: Vec::new(),
        nodes: 0,
    };
    let mut out = walk.node(&Value::Object(root), "", 0)?;
    if walk.rules.refs != Refs::Inline && !defs.is_empty() {
        let mut rendered = Map::new();
        for (name, def) in &defs {
            walk.stack.push(name.clone());
            let def = walk.node(def, &format!("/$defs/{name}"), 1)?;
            walk.stack.pop();
            rendered.insert(name.clone(), def);
        }
        if let Value::Object(map) = &mut out {
            map.insert("$defs".into(), Value::Object(rendered));
        }
    }
    Ok(out)
}

struct Walk<'a> {
    rules: Rules,
    defs: &'a Map<String, Value>,
    /// Definitions being inlined, innermost last: seeing one again is recursion.
    stack: Vec<String>,
    nodes: usize,
}

/// Where a problem is, for messages: a JSON pointer into the tool's schema.
fn at(path: &str) -> String {
    if path.is_empty() {
        "at the root".into()
    } else {
        format!("at `{path}`")
    }
}

impl Walk<'_> {
    fn node(&mut self, schema: &Value, path: &str, depth: usize) -> Result<Value, String> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!(
                "{}: the schema nests deeper than {MAX_SCHEMA_DEPTH} levels",
                at(path)
            ));
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(format!(
                "the schema grows beyond {MAX_NODES} nodes once references are inlined"
            ));
        }
        let dialect = self.rules.dialect;
        let mut m = match schema {
            Value::Object(map) => map.clone(),
            Value::Bool(true) => return Err(self.any_value(path)),
            Value::Bool(false) => {
                return Err(format!(
                    "{}: the schema `false` accepts nothing, which {dialect} cannot express",
                    at(path)
                ));
            }
            other => return Err(format!("{}: {other} is not a schema", at(path))),
        };
        if let Some(target) = m.shift_remove("$ref") {
            return self.reference(&target, m, path, depth);
        }
        if let Some(all) = m.shift_remove("allOf") {
            self.merge_all_of(&mut m, all, path)?;
        }
        if let Some(one) = m.shift_remove("oneOf") {
            // The variants of a Rust enum are disjoint, so "any of" them is the same
            // constraint as "exactly one of" them, and every dialect knows `anyOf`.
            if m.contains_key("anyOf") {
                return Err(format!(
                    "{}: both `oneOf` and `anyOf` on one schema cannot be rendered for {dialect}",
                    at(path)
                ));
            }
            m.insert("anyOf".into(), one);
        }
        if let Some(Value::Array(types)) = m.get_mut("type") {
            // A type array is a set; repeats are refused by the metaschema.
            let mut seen: Vec<Value> = Vec::with_capacity(types.len());
            types.retain(|t| {
                let new = !seen.contains(t);
                seen.push(t.clone());
                new
            });
            if types.len() == 1 {
                let only = types.remove(0);
                m.insert("type".into(), only);
            }
        }
        let mut notes = Vec::new();

        if let Some(prefix) = m.shift_remove("prefixItems") {
            self.tuple(&mut m, prefix, path, depth, &mut notes)?;
        }
        if is_map(&m) {
            return self.map_entries(m, path, depth);
        }
        if is_object(&m) {
            self.object(&mut m, path, depth)?;
        } else if let Some(items) = m.get("items").cloned() {
            let items = self.node(&items, &format!("{path}/items"), depth + 1)?;
            m.insert("items".into(), items);
        } else if has_type(&m, "array") {
            return Err(format!(
                "{}: an array of values of any shape cannot be expressed in {dialect}",
                at(path)
            ));
        }
        if let Some(Value::Array(branches)) = m.get("anyOf")
            && branches.is_empty()
        {
            return Err(format!(
                "{}: an empty `anyOf` accepts nothing, which no provider can express",
                at(path)
            ));
        }
        if let Some(Value::Array(branches)) = m.shift_remove("anyOf") {
            let mut out = Vec::with_capacity(branches.len());
            for (i, branch) in branches.iter().enumerate() {
                // Gemini's `nullable` replaces a `null` branch, below; the branch
                // itself has no Gemini form.
                if self.rules.nullable_flag && branch.get("type") == Some(&json!("null")) {
                    out.push(branch.clone());
                    continue;
                }
                out.push(self.node(branch, &format!("{path}/anyOf/{i}"), depth + 1)?);
            }
            m.insert("anyOf".into(), Value::Array(out));
        }
        if !has_shape(&m) {
            return Err(self.any_value(path));
        }
        if self.rules.nullable_flag {
            self.nullable_flag(&mut m, path)?;
        }
        if self.rules.string_enums {
            string_enums(&mut m, &mut notes);
        }
        self.keywords(&mut m, &mut notes);
        if !notes.is_empty() {
            let notes = notes.join("; ");
            let description = match m.get("description").and_then(Value::as_str) {
                Some(text) if !text.is_empty() => format!("{text} ({notes})"),
                _ => capitalise(&notes),
            };
            m.insert("description".into(), Value::String(description));
        }
        Ok(Value::Object(m))
    }

    fn any_value(&self, path: &str) -> String {
        format!(
            "{}: a value of any shape (such as `serde_json::Value`) cannot be expressed in {}; give it a concrete type",
            at(path),
            self.rules.dialect
        )
    }

    /// A `$ref`, with the keywords beside it (usually a `description`).
    fn reference(
        &mut self,
        target: &Value,
        siblings: Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Value, String> {
        let dialect = self.rules.dialect;
        let Some(name) = target.as_str().and_then(local_ref_name) else {
            return Err(format!(
                "{}: only references into the schema's own `$defs` can be rendered for {dialect}, found {target}",
                at(path)
            ));
        };
        let Some(def) = self.defs.get(&*name) else {
            return Err(format!(
                "{}: the reference {target} names no definition",
                at(path)
            ));
        };
        let recursive = self.stack.iter().any(|n| *n == *name);
        match self.rules.refs {
            Refs::Inline if recursive => {
                return Err(format!(
                    "{}: `{name}` is a recursive type, which {dialect} cannot express (it needs every reference inlined)",
                    at(path)
                ));
            }
            Refs::Keep | Refs::KeepAcyclic if siblings.is_empty() || recursive => {
                // A recursive reference keeps pointing at the definition; any
                // description beside it is lost rather than expanded forever.
                return Ok(json!({ "$ref": format!("#/$defs/{}", escape_pointer(&name)) }));
            }
            // Keywords beside a `$ref` are refused by OpenAI strict mode, so the
            // definition is expanded here, one level, with them merged in.
            _ => {}
        }
        let mut merged = match def {
            Value::Object(map) => map.clone(),
            Value::Bool(true) => Map::new(),
            other => return self.node(other, path, depth),
        };
        for (key, value) in siblings {
            merged.insert(key, value);
        }
        self.stack.push(name.into_owned());
        let out = self.node(&Value::Object(merged), path, depth + 1);
        self.stack.pop();
        out
    }

    /// `allOf` merged into the schema holding it: a single member (the way generators
    /// attach a description to a reference), or objects whose properties add up.
    fn merge_all_of(
        &mut self,
        m: &mut Map<String, Value>,
        all: Value,
        path: &str,
    ) -> Result<(), String> {
        let dialect = self.rules.dialect;
        let Value::Array(members) = all else {
            return Err(format!("{}: `allOf` must be an array", at(path)));
        };
        for member in members {
            let member = match member {
                Value::Object(mut map) => match map.shift_remove("$ref") {
                    Some(target) => {
                        let name = target.as_str().and_then(local_ref_name);
                        let name = name.as_deref();
                        match name.and_then(|n| self.defs.get(n)) {
                            Some(Value::Object(def))
                                if !self.stack.iter().any(|s| Some(s.as_str()) == name) =>
                            {
                                let mut def = def.clone();
                                def.extend(map);
                                def
                            }
                            _ => {
                                return Err(format!(
                                    "{}: `allOf` with the reference {target} cannot be rendered for {dialect}",
                                    at(path)
                                ));
                            }
                        }
                    }
                    None => map,
                },
                Value::Bool(true) => continue,
                other => {
                    return Err(format!(
                        "{}: `allOf` member {other} is not a schema",
                        at(path)
                    ));
                }
            };
            for (key, value) in member {
                match (key.as_str(), m.get_mut(&key)) {
                    (_, None) => {
                        m.insert(key, value);
                    }
                    ("properties", Some(Value::Object(mine))) => {
                        let Value::Object(theirs) = value else {
                            continue;
                        };
                        for (name, schema) in theirs {
                            if mine.contains_key(&name) {
                                return Err(format!(
                                    "{}: `allOf` members both define `{name}`, which cannot be merged for {dialect}",
                                    at(path)
                                ));
                            }
                            mine.insert(name, schema);
                        }
                    }
                    ("required", Some(Value::Array(mine))) => {
                        if let Value::Array(theirs) = value {
                            mine.extend(
                                theirs
                                    .into_iter()
                                    .filter(|n| !mine.contains(n))
                                    .collect::<Vec<_>>(),
                            );
                        }
                    }
                    // The outer schema's own words (its description) win.
                    ("description" | "title", Some(_)) => {}
                    (_, Some(mine)) if *mine == value => {}
                    (_, Some(_)) => {
                        return Err(format!(
                            "{}: `allOf` members disagree on `{key}`, which cannot be merged for {dialect}",
                            at(path)
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// A tuple (`prefixItems`): an array whose items may be any of the member types,
    /// with the order told in the description.
    fn tuple(
        &mut self,
        m: &mut Map<String, Value>,
        prefix: Value,
        path: &str,
        depth: usize,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        let Value::Array(members) = prefix else {
            return Err(format!("{}: `prefixItems` must be an array", at(path)));
        };
        let mut rendered = Vec::with_capacity(members.len());
        let mut names = Vec::with_capacity(members.len());
        for (i, member) in members.iter().enumerate() {
            names.push(shape_name(member));
            rendered.push(self.node(member, &format!("{path}/prefixItems/{i}"), depth + 1)?);
        }
        let mut distinct: Vec<Value> = Vec::new();
        for schema in rendered {
            if !distinct.contains(&schema) {
                distinct.push(schema);
            }
        }
        let items = match distinct.len() {
            0 => return Err(format!("{}: an empty tuple cannot be rendered", at(path))),
            1 => distinct.remove(0),
            _ => json!({ "anyOf": distinct }),
        };
        // `items: false` (nothing after the tuple) is implied by `maxItems`.
        m.insert("items".into(), items);
        // The note below says "exactly n"; bounds the dialect would only fold into
        // words again are dropped rather than said twice.
        let n = names.len() as u64;
        for key in ["minItems", "maxItems"] {
            let kept = self.rules.keywords.contains(&key)
                && !(key == "minItems" && self.rules.max_min_items.is_some_and(|max| n > max));
            if !kept && m.get(key).and_then(Value::as_u64) == Some(n) {
                m.shift_remove(key);
            }
        }
        notes.push(format!(
            "exactly {} items, in this order: {}",
            names.len(),
            names.join(", ")
        ));
        Ok(())
    }

    /// A map (an object whose keys are data): a list of `{"key", "value"}` entries,
    /// which every dialect can express. Arguments are mapped back by
    /// `normalize_arguments`.
    ///
    /// A map whose keys must match a pattern (schemars' `patternProperties` form for
    /// integer keys) keeps the pattern on the entry's key, so where the dialect knows
    /// `pattern` the model is held to keys the tool can decode (and is told it in words
    /// where it does not).
    fn map_entries(
        &mut self,
        mut m: Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<Value, String> {
        let (values, values_path, key_pattern) = match map_of(&m) {
            Some(MapSchema {
                values,
                key_pattern: None,
            }) => (values.clone(), format!("{path}/additionalProperties"), None),
            Some(MapSchema {
                values,
                key_pattern: Some(pattern),
            }) => (
                values.clone(),
                format!("{path}/patternProperties/{}", escape_pointer(pattern)),
                Some(pattern.to_owned()),
            ),
            // `node` sends maps only.
            None => return Err(format!("{}: not a map", at(path))),
        };
        let value = self.node(&values, &values_path, depth + 1)?;
        let source = match (m.shift_remove("propertyNames"), key_pattern) {
            (None, None) => None,
            (Some(names), None) => Some(names),
            (None, Some(pattern)) => Some(json!({"type": "string", "pattern": pattern})),
            // Both constrain the keys; `allOf` merges them, or says why it cannot.
            (Some(names), Some(pattern)) => Some(json!({
                "allOf": [names, {"type": "string", "pattern": pattern}],
            })),
        };
        let key = match source {
            Some(source) => {
                let mut key = self.node(&source, &format!("{path}/propertyNames"), depth + 1)?;
                if let Value::Object(map) = &mut key {
                    map.entry("type").or_insert_with(|| json!("string"));
                }
                key
            }
            None => json!({"type": "string"}),
        };
        let mut entry = json!({
            "type": "object",
            "properties": {"key": key, "value": value},
            "required": ["key", "value"],
        });
        if self.rules.close_objects {
            entry["additionalProperties"] = Value::Bool(false);
        }
        let nullable = has_type(&m, "null");
        let mut out = Map::new();
        out.insert(
            "type".into(),
            match (nullable, self.rules.nullable_flag) {
                (true, false) => json!(["array", "null"]),
                _ => json!("array"),
            },
        );
        if nullable && self.rules.nullable_flag {
            out.insert("nullable".into(), Value::Bool(true));
        }
        let note = "a map, sent as a list of {\"key\", \"value\"} entries";
        let description = match m.get("description").and_then(Value::as_str) {
            Some(text) => format!("{text} ({note})"),
            None => capitalise(note),
        };
        out.insert("description".into(), Value::String(description));
        out.insert("items".into(), entry);
        for (from, to) in [("minProperties", "minItems"), ("maxProperties", "maxItems")] {
            if let Some(n) = m.get(from) {
                out.insert(to.into(), n.clone());
            }
        }
        let mut notes = Vec::new();
        self.keywords(&mut out, &mut notes);
        if !notes.is_empty() {
            let text = out["description"].as_str().unwrap_or_default().to_owned();
            out.insert(
                "description".into(),
                Value::String(format!("{text} ({})", notes.join("; "))),
            );
        }
        Ok(Value::Object(out))
    }

    /// An object with named properties: children rendered, closed and all-required
    /// where the dialect wants it.
    fn object(
        &mut self,
        m: &mut Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Result<(), String> {
        let dialect = self.rules.dialect;
        let properties = match m.shift_remove("properties") {
            Some(Value::Object(props)) => props,
            None => Map::new(),
            Some(other) => {
                return Err(format!(
                    "{}: `properties` must be an object, found {other}",
                    at(path)
                ));
            }
        };
        match m.shift_remove("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) if !properties.is_empty() => {}
            Some(_) if !self.rules.close_objects && properties.is_empty() => {}
            Some(_) => {
                return Err(format!(
                    "{}: an object with extra properties of any name besides its named ones cannot be expressed in {dialect}",
                    at(path)
                ));
            }
        }
        // Keys of several patterns have no entry form (the entries would lose which
        // values go with which keys), and closed without properties the object would
        // only accept `{}`. (One pattern is a map, rendered as entries.)
        if properties.is_empty()
            && let Some(Value::Object(patterns)) = m.get("patternProperties")
            && patterns.len() > 1
        {
            return Err(format!(
                "{}: an object whose keys must match one of several patterns (`patternProperties`) cannot be expressed in {dialect}",
                at(path)
            ));
        }
        if properties.is_empty() && !path.is_empty() && self.rules.objects_need_properties {
            return Err(format!(
                "{}: an object without properties cannot be expressed in {dialect} (it refuses OBJECT schemas with no properties)",
                at(path)
            ));
        }
        let mut required: Vec<String> = Vec::new();
        if let Some(Value::Array(names)) = m.shift_remove("required") {
            for name in names {
                // `required` is a set; a repeated name is refused by the metaschema.
                if let Value::String(name) = name
                    && !required.contains(&name)
                {
                    required.push(name);
                }
            }
        }
        let mut rendered = Map::new();
        for (name, schema) in &properties {
            let child_path = format!("{path}/properties/{}", escape_pointer(name));
            let mut child = self.node(schema, &child_path, depth + 1)?;
            if self.rules.all_required && !required.contains(name) {
                child = make_nullable(child);
            }
            rendered.insert(name.clone(), child);
        }
        let required: Vec<Value> = if self.rules.all_required {
            properties.keys().map(|k| json!(k)).collect()
        } else {
            required
                .into_iter()
                .filter(|n| properties.contains_key(n))
                .map(Value::String)
                .collect()
        };
        m.insert("properties".into(), Value::Object(rendered));
        if !required.is_empty() || self.rules.all_required {
            m.insert("required".into(), Value::Array(required));
        }
        if self.rules.close_objects {
            m.insert("additionalProperties".into(), Value::Bool(false));
        }
        Ok(())
    }

    /// Gemini's nullability: `nullable: true` instead of a `null` type or branch.
    fn nullable_flag(&self, m: &mut Map<String, Value>, path: &str) -> Result<(), String> {
        let dialect = self.rules.dialect;
        let mut nullable = false;
        if let Some(Value::Array(types)) = m.get("type") {
            let mut rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
            nullable = rest.len() != types.len();
            match rest.len() {
                0 => {
                    return Err(format!(
                        "{}: a value that can only be null cannot be expressed in {dialect}",
                        at(path)
                    ));
                }
                1 => {
                    m.insert("type".into(), rest.remove(0));
                }
                _ => {
                    let branches: Vec<Value> =
                        rest.into_iter().map(|t| json!({"type": t})).collect();
                    m.shift_remove("type");
                    m.insert("anyOf".into(), Value::Array(branches));
                }
            }
        } else if m.get("type") == Some(&json!("null")) {
            return Err(format!(
                "{}: a value that can only be null cannot be expressed in {dialect}",
                at(path)
            ));
        }
        if let Some(Value::Array(branches)) = m.get("anyOf") {
            let mut rest: Vec<Value> = branches
                .iter()
                .filter(|b| b.get("type") != Some(&json!("null")))
                .cloned()
                .collect();
            if rest.len() != branches.len() {
                nullable = true;
            }
            if rest.is_empty() {
                return Err(format!(
                    "{}: a value that can only be null cannot be expressed in {dialect}",
                    at(path)
                ));
            } else if rest.len() == 1 {
                // `Option<T>`: T itself, marked nullable; the outer description wins.
                m.shift_remove("anyOf");
                if let Value::Object(only) = rest.remove(0) {
                    for (key, value) in only {
                        if key == "nullable" {
                            nullable |= value == Value::Bool(true);
                        } else {
                            m.entry(key).or_insert(value);
                        }
                    }
                }
            } else {
                m.insert("anyOf".into(), Value::Array(rest));
            }
        }
        if let Some(Value::Array(values)) = m.get_mut("enum")
            && values.iter().any(Value::is_null)
        {
            values.retain(|v| !v.is_null());
            nullable = true;
        }
        if nullable {
            m.insert("nullable".into(), Value::Bool(true));
        }
        Ok(())
    }

    /// Keeps the dialect's keywords; folds constraints it lacks into the description;
    /// drops annotations the model does not need.
    fn keywords(&self, m: &mut Map<String, Value>, notes: &mut Vec<String>) {
        let rules = &self.rules;
        let keys: Vec<String> = m.keys().cloned().collect();
        for key in keys {
            let supported = rules.keywords.contains(&key.as_str());
            let value = &m[&key].clone();
            let keep = match key.as_str() {
                "format" => {
                    let format = value.as_str().unwrap_or_default();
                    if supported && rules.formats.contains(&format) {
                        true
                    } else {
                        // Integer and float widths (`uint8`, `int64`, `double`) are a
                        // Rust storage detail already carried by `minimum`/`maximum`,
                        // and decoding enforces them; string formats tell the model
                        // something, so they are kept in words.
                        if !NUMERIC_FORMATS.contains(&format) {
                            notes.push(format!("format: {format}"));
                        }
                        false
                    }
                }
                "minItems" => match (supported, rules.max_min_items, value.as_u64()) {
                    (true, Some(max), Some(n)) if n > max => {
                        notes.push(fold(&key, value));
                        false
                    }
                    (supported, _, _) => {
                        if !supported {
                            notes.push(fold(&key, value));
                        }
                        supported
                    }
                },
                "const" if rules.string_enums => {
                    match value {
                        Value::String(_) => {
                            let value = value.clone();
                            m.insert("enum".into(), json!([value]));
                        }
                        other => {
                            notes.push(format!("always {other}"));
                            if !m.contains_key("type") {
                                m.insert("type".into(), json!(json_type(other)));
                            }
                        }
                    }
                    false
                }
                _ if supported => true,
                _ if SILENT.contains(&key.as_str()) => false,
                // A `null` default is what absence already means.
                "default" if value.is_null() => false,
                _ => {
                    notes.push(fold(&key, value));
                    false
                }
            };
            if !keep {
                m.shift_remove(&key);
            }
        }
    }
}

/// Formats that only say how wide a number is stored.
const NUMERIC_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int128", "int", "uint", "uint8", "uint16", "uint32",
    "uint64", "uint128", "float", "double",
];

/// Keywords dropped without a word: they annotate the schema for people and tools,
/// not for the model.
const SILENT: &[&str] = &[
    "$comment",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$schema",
    "$defs",
    "definitions",
    "title",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "nullable",
    "propertyOrdering",
];

/// An unsupported keyword in words.
fn fold(key: &str, value: &Value) -> String {
    let n = || value.to_string();
    let count = |noun: &str| match value.as_u64() {
        Some(1) => format!("1 {noun}"),
        _ => format!("{value} {noun}s"),
    };
    match key {
        "minLength" => format!("at least {}", count("character")),
        "maxLength" => format!("at most {}", count("character")),
        "pattern" => format!(
            "matches the regular expression `{}`",
            value.as_str().unwrap_or_default()
        ),
        "minimum" => format!("at least {}", n()),
        "maximum" => format!("at most {}", n()),
        "exclusiveMinimum" => format!("greater than {}", n()),
        "exclusiveMaximum" => format!("less than {}", n()),
        "multipleOf" => format!("a multiple of {}", n()),
        "minItems" => format!("at least {}", count("item")),
        "maxItems" => format!("at most {}", count("item")),
        "uniqueItems" if value == &Value::Bool(true) => "items are unique".into(),
        "minProperties" => format!("at least {}", count("entry")).replace("entrys", "entries"),
        "maxProperties" => format!("at most {}", count("entry")).replace("entrys", "entries"),
        "default" => format!("default: {}", n()),
        "const" => format!("always {}", n()),
        "examples" => match value {
            Value::Array(examples) => format!(
                "for example: {}",
                examples
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => format!("for example: {other}"),
        },
        "example" => format!("for example: {}", n()),
        "deprecated" if value == &Value::Bool(true) => "deprecated".into(),
        "not" => format!("must not match the schema {}", n()),
        _ => format!("{key}: {}", n()),
    }
}

/// Makes a rendered schema accept `null` too (strict mode's optional properties).
fn make_nullable(schema: Value) -> Value {
    let Value::Object(mut m) = schema else {
        return schema;
    };
    if accepts_null(&m) {
        return Value::Object(m);
    }
    let wrap = |mut m: Map<String, Value>| {
        // The description describes the property, so it moves to the wrapper.
        let mut outer = Map::new();
        if let Some(description) = m.shift_remove("description") {
            outer.insert("description".into(), description);
        }
        outer.insert("anyOf".into(), json!([Value::Object(m), {"type": "null"}]));
        Value::Object(outer)
    };
    // An `enum` or `const` would still refuse `null` whatever the type says.
    if m.contains_key("$ref") || m.contains_key("enum") || m.contains_key("const") {
        return wrap(m);
    }
    match m.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            m.insert("type".into(), json!([t, "null"]));
            Value::Object(m)
        }
        Some(Value::Array(types)) => {
            types.push(json!("null"));
            Value::Object(m)
        }
        _ => match m.get_mut("anyOf") {
            Some(Value::Array(branches)) => {
                branches.push(json!({"type": "null"}));
                Value::Object(m)
            }
            _ => wrap(m),
        },
    }
}

/// Whether a schema already says `null` is fine.
fn accepts_null(m: &Map<String, Value>) -> bool {
    if m.contains_key("enum") || m.contains_key("const") {
        return m
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().any(Value::is_null))
            || m.get("const") == Some(&Value::Null);
    }
    has_type(m, "null")
        || m.get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| {
                branches
                    .iter()
                    .any(|b| b.as_object().is_some_and(|b| has_type(b, "null")))
            })
}

/// Gemini's `enum` holds strings only; other values are told in words.
fn string_enums(m: &mut Map<String, Value>, notes: &mut Vec<String>) {
    let Some(Value::Array(values)) = m.get("enum") else {
        return;
    };
    if values.iter().all(Value::is_string) {
        return;
    }
    let listed: Vec<String> = values.iter().map(Value::to_string).collect();
    notes.push(format!("one of {}", listed.join(", ")));
    if !m.contains_key("type")
        && let Some(first) = values.first()
    {
        let t = json_type(first);
        m.insert("type".into(), json!(t));
    }
    m.shift_remove("enum");
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A member of a tuple, named for the description.
fn shape_name(schema: &Value) -> String {
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(local_ref_name)
    {
        return name.into_owned();
    }
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "value".into(),
    }
}

/// Whether the schema says what shape its value has; `{}` accepts anything.
fn has_shape(m: &Map<String, Value>) -> bool {
    ["type", "anyOf", "enum", "const", "properties", "items"]
        .iter()
        .any(|k| m.contains_key(*k))
}

fn escape_pointer(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

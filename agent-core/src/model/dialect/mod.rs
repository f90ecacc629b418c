//! Provider schema dialects: one tool definition rendered for each provider's subset of
//! JSON Schema, and the model's arguments mapped back to what the tool declared.
//!
//! Every provider accepts a different subset of JSON Schema, and a schema outside it is
//! an HTTP 400 at run time. A [`Dialect`] rewrites a tool's one schema into the
//! provider's subset by construction, checks the result with the dialect's rule checker
//! ([`check`]) before handing it out, and reports a schema it cannot express as a
//! [`DialectError`] naming the tool and the reason — it never returns a schema the
//! provider would refuse.
//!
//! ```
//! use toolwright_core::{schema::ArgsSchema, dialect::Dialect, toolset::ToolDefinition};
//! use serde_json::json;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Args {
//!     city: String,
//!     days: Option<u8>,
//! }
//!
//! let definition = ToolDefinition {
//!     name: "forecast".into(),
//!     description: "Weather forecast for a city.".into(),
//!     parameters: ArgsSchema::of::<Args>().schema().clone(),
//!     ..Default::default()
//! };
//! let rendered = Dialect::OpenAiStrict.render(&definition).unwrap();
//! let parameters = &rendered["function"]["parameters"];
//! // Strict mode: every property is required, optionals are nullable.
//! assert_eq!(parameters["required"], json!(["city", "days"]));
//! assert_eq!(parameters["properties"]["days"]["type"], json!(["integer", "null"]));
//!
//! // The model's `null` for the optional means "absent" again.
//! let args = Dialect::OpenAiStrict.normalize_arguments(&definition, json!({"city": "Oslo", "days": null}));
//! assert_eq!(args, json!({"city": "Oslo"}));
//! ```

mod arguments;
mod assert;
mod check;
mod example;
mod shape;
mod transform;
mod vocab;

pub use assert::{assert_dialects, assert_dialects_for, dialect_report};
pub use check::{Violation, check};

use crate::model::set::{ToolDefinition, is_valid_tool_name};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;
use std::str::FromStr;

/// A provider's flavour of tool definition and JSON Schema. Serializes as its
/// [`as_str`](Self::as_str) name, so it can sit in configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Dialect {
    /// OpenAI function calling with `strict: true` (Structured Outputs): every object
    /// closed, every property required (optionals nullable), a keyword subset, at most
    /// 10 levels of nesting and 5,000 properties.
    #[serde(rename = "openai-strict")]
    OpenAiStrict,
    /// OpenAI function calling without strict mode; also what OpenAI-compatible
    /// servers (Ollama, vLLM, llama.cpp, LM Studio) accept. The schema is sent as is.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages API tools: `input_schema` is the schema as is.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Anthropic strict tool use (`strict: true`): every object closed, no recursive
    /// types, no numeric or length constraints (they go into descriptions).
    #[serde(rename = "anthropic-strict")]
    AnthropicStrict,
    /// Gemini `functionDeclarations`: an OpenAPI 3.0 subset without `$ref`, `$defs`,
    /// `additionalProperties`, `const` or type arrays (nullability is `nullable: true`).
    #[serde(rename = "gemini")]
    Gemini,
    /// Model Context Protocol `tools/list` entries: JSON Schema 2020-12 as is.
    #[serde(rename = "mcp")]
    Mcp,
}

impl Dialect {
    /// Every dialect, in a stable order.
    pub const ALL: [Dialect; 6] = [
        Dialect::OpenAiStrict,
        Dialect::OpenAi,
        Dialect::Anthropic,
        Dialect::AnthropicStrict,
        Dialect::Gemini,
        Dialect::Mcp,
    ];

    /// The dialect's kebab-case name: `openai-strict`, `openai`, `anthropic`,
    /// `anthropic-strict`, `gemini`, `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiStrict => "openai-strict",
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::AnthropicStrict => "anthropic-strict",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }

    /// The dialect a client sending in `self` renders `definition` in: the tool's own
    /// [`strict`](ToolDefinition::strict) choice picks the strict or the plain dialect
    /// of the same provider (OpenAI and Anthropic), and the client's dialect holds for a
    /// tool that does not say. Gemini and MCP have no strict mode: `self`.
    pub fn for_tool(self, definition: &ToolDefinition) -> Dialect {
        match (self, definition.strict) {
            (Self::OpenAi | Self::OpenAiStrict, Some(true)) => Self::OpenAiStrict,
            (Self::OpenAi | Self::OpenAiStrict, Some(false)) => Self::OpenAi,
            (Self::Anthropic | Self::AnthropicStrict, Some(true)) => Self::AnthropicStrict,
            (Self::Anthropic | Self::AnthropicStrict, Some(false)) => Self::Anthropic,
            (dialect, _) => dialect,
        }
    }

    /// Whether the provider's tool definition has a field for
    /// [`input_examples`](ToolDefinition::input_examples): Anthropic's, which takes them
    /// as written. The others have none, and leave them out.
    pub fn shows_input_examples(self) -> bool {
        matches!(self, Self::Anthropic | Self::AnthropicStrict)
    }

    /// The provider's tool definition for `definition`, in the dialect
    /// [`for_tool`](Self::for_tool) picks: OpenAI's
    /// `{"type": "function", "function": {...}}`, Anthropic's
    /// `{name, description, input_schema}` (with `input_examples` when the tool has
    /// some), a Gemini `functionDeclarations` entry, or an MCP tool. Fails when the
    /// schema cannot be expressed in that dialect.
    pub fn render(self, definition: &ToolDefinition) -> Result<Value, DialectError> {
        let dialect = self.for_tool(definition);
        if dialect != self {
            return dialect.render(definition);
        }
        // MCP accepts a wider alphabet (dots); the model providers do not. `ToolSet`
        // already refuses such names, but definitions can be built by hand.
        if self != Self::Mcp && !is_valid_tool_name(&definition.name) {
            return Err(DialectError {
                tool: definition.name.clone(),
                dialect: self,
                reason: "a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$".into(),
            });
        }
        let parameters = self.render_parameters(definition)?;
        let name = json!(definition.name);
        let description = json!(definition.description);
        Ok(match self {
            Self::OpenAiStrict | Self::OpenAi => {
                let mut function = Map::new();
                function.insert("name".into(), name);
                function.insert("description".into(), description);
                function.insert("parameters".into(), parameters);
                if self == Self::OpenAiStrict {
                    function.insert("strict".into(), Value::Bool(true));
                }
                json!({"type": "function", "function": function})
            }
            Self::Anthropic | Self::AnthropicStrict => {
                let mut tool = Map::new();
                tool.insert("name".into(), name);
                tool.insert("description".into(), description);
                tool.insert("input_schema".into(), parameters);
                if self == Self::AnthropicStrict {
                    tool.insert("strict".into(), Value::Bool(true));
                }
                if !definition.input_examples.is_empty() {
                    tool.insert(
                        "input_examples".into(),
                        Value::Array(definition.input_examples.clone()),
                    );
                }
                Value::Object(tool)
            }
            Self::Gemini => {
                let mut declaration = Map::new();
                declaration.insert("name".into(), name);
                declaration.insert("description".into(), description);
                // Gemini refuses an OBJECT without properties; a tool without
                // parameters declares none.
                let empty = parameters
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_none_or(Map::is_empty);
                if !empty {
                    declaration.insert("parameters".into(), parameters);
                }
                Value::Object(declaration)
            }
            Self::Mcp => mcp_tool(definition, parameters),
        })
    }

    /// Every definition rendered, in order (for a request's `tools` list); the first
    /// that cannot be rendered is the error.
    pub fn render_all<'a>(
        self,
        definitions: impl IntoIterator<Item = &'a ToolDefinition>,
    ) -> Result<Vec<Value>, DialectError> {
        definitions.into_iter().map(|d| self.render(d)).collect()
    }

    /// Just the argument schema of `definition`, in the dialect
    /// [`for_tool`](Self::for_tool) picks. Checked with [`check`] before it is returned.
    pub fn render_parameters(self, definition: &ToolDefinition) -> Result<Value, DialectError> {
        let dialect = self.for_tool(definition);
        if dialect != self {
            return dialect.render_parameters(definition);
        }
        let error = |reason: String| DialectError {
            tool: definition.name.clone(),
            dialect: self,
            reason,
        };
        let mut rendered = transform::render(self, &definition.parameters).map_err(error)?;
        if self != Self::Mcp {
            rendered = without_header_keyword(rendered);
        }
        let violations = check(self, &rendered);
        if let Some(first) = violations.first() {
            // The transform is meant to make every rule hold; a rule it could not
            // satisfy (a limit, a construct it does not rewrite) is reported rather
            // than sent.
            let more = match violations.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            return Err(error(format!("{first}{more}")));
        }
        Ok(rendered)
    }

    /// Maps arguments a model sent for the schema rendered in this dialect back to the
    /// shape the tool's own schema declares, at every nesting level:
    /// - `null` for a property the tool's schema does not require means absent (strict
    ///   dialects make optional properties required and nullable, so models send
    ///   `null` for them);
    /// - a map the dialect sent as a list of `{"key", "value"}` entries becomes an
    ///   object again.
    ///
    /// Anything else is returned unchanged, so decoding still reports real mistakes.
    /// The dialect is the one [`for_tool`](Self::for_tool) picks, as in
    /// [`render`](Self::render).
    pub fn normalize_arguments(self, definition: &ToolDefinition, args: Value) -> Value {
        arguments::normalize(self.for_tool(definition), &definition.parameters, args)
    }

    /// Whether maps (objects with arbitrary keys) are sent as lists of
    /// `{"key", "value"}` entries, because the dialect cannot express them.
    pub fn maps_as_entries(self) -> bool {
        matches!(
            self,
            Self::OpenAiStrict | Self::AnthropicStrict | Self::Gemini
        )
    }
}

/// The schema keyword marking a property that MCP clients also send as the HTTP header
/// `Mcp-Param-{value}` (SEP-2243; `#[arg(header = "...")]`). Only the MCP dialect keeps
/// it: it means nothing to a model provider.
pub const MCP_HEADER_KEYWORD: &str = "x-mcp-header";

/// `schema` without [`MCP_HEADER_KEYWORD`] on its root's properties, where it is written.
fn without_header_keyword(mut schema: Value) -> Value {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            if let Value::Object(property) = property {
                property.shift_remove(MCP_HEADER_KEYWORD);
            }
        }
    }
    schema
}

fn mcp_tool(definition: &ToolDefinition, parameters: Value) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(definition.name));
    if let Some(title) = &definition.title {
        tool.insert("title".into(), json!(title));
    }
    tool.insert("description".into(), json!(definition.description));
    tool.insert("inputSchema".into(), parameters);
    // MCP requires an output schema's root to be an object; other result schemas
    // (a bare string, a number) are simply not advertised.
    if let Some(output) = &definition.output_schema
        && output.get("type") == Some(&json!("object"))
    {
        tool.insert("outputSchema".into(), output.clone());
    }
    let hints = &definition.annotations;
    let mut annotations = Map::new();
    if let Some(title) = &hints.title {
        annotations.insert("title".into(), json!(title));
    }
    for (key, hint) in [
        ("readOnlyHint", hints.read_only),
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ] {
        if let Some(hint) = hint {
            annotations.insert(key.into(), Value::Bool(hint));
        }
    }
    if !annotations.is_empty() {
        tool.insert("annotations".into(), Value::Object(annotations));
    }
    Value::Object(tool)
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| UnknownDialect(name.to_owned()))
    }
}

/// A dialect name [`Dialect::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
        write!(
            f,
            "unknown dialect `{}`, expected one of {}",
            self.0,
            known.join(", ")
        )
    }
}

impl std::error::Error for UnknownDialect {}

/// A tool whose schema cannot be expressed in a dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialectError {
    /// The tool's name.
    pub tool: String,
    /// The dialect it was rendered for.
    pub dialect: Dialect,
    /// Why, with the place in the schema.
    pub reason: String,
}

impl fmt::Display for DialectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tool `{}` cannot be rendered for {}: {}",
            self.tool, self.dialect, self.reason
        )
    }
}

impl std::error::Error for DialectError {}

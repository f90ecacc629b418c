//! What each provider accepts, stated once: the keywords, string formats and limits
//! of every restricted dialect. The checkers enforce them and rendering rewrites into
//! them, so both read the same tables.
//!
//! Sources: OpenAI's Structured Outputs guide ("Supported schemas": the keyword list,
//! the formats, 5,000 properties, 10 levels, 120,000 characters, 1,000 enum values,
//! no `anyOf` at the root); Anthropic's structured-outputs "JSON Schema limitations"
//! (closed objects, no recursion, no numeric or length constraints, `minItems` 0 or 1,
//! at most 24 optional and 16 union-typed parameters per request); Gemini's
//! `FunctionDeclaration` `Schema` (an OpenAPI 3.0 subset: its field list, string-only
//! `enum`, and — from provider error reports — no OBJECT without properties).

/// Keywords OpenAI strict mode accepts.
pub(super) const OPENAI_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// String formats OpenAI strict mode accepts.
pub(super) const OPENAI_STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords Anthropic strict tool use accepts.
pub(super) const ANTHROPIC_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "minItems",
    "default",
];

/// String formats Anthropic strict tool use accepts.
pub(super) const ANTHROPIC_STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The fields of Gemini's `Schema`.
pub(super) const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

/// Formats Gemini's `Schema` accepts (`enum` and `date-time` for strings, widths for
/// numbers).
pub(super) const GEMINI_FORMATS: &[&str] =
    &["enum", "date-time", "float", "double", "int32", "int64"];

pub(super) const GEMINI_TYPES: &[&str] =
    &["string", "number", "integer", "boolean", "array", "object"];

/// OpenAI strict mode's limits.
pub(super) const OPENAI_MAX_DEPTH: usize = 10;
pub(super) const OPENAI_MAX_PROPERTIES: usize = 5_000;
pub(super) const OPENAI_MAX_STRING_LENGTH: usize = 120_000;
pub(super) const OPENAI_MAX_ENUM_VALUES: usize = 1_000;
pub(super) const OPENAI_LARGE_ENUM: usize = 250;
pub(super) const OPENAI_LARGE_ENUM_LENGTH: usize = 15_000;

/// Anthropic strict tool use's limits, per request.
pub(super) const ANTHROPIC_MAX_OPTIONAL: usize = 24;
pub(super) const ANTHROPIC_MAX_UNIONS: usize = 16;
pub(super) const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;

//! Small pieces of the wire formats that more than one provider uses: an optional
//! setting put under the provider's own field name, a key header, the check that an
//! answer is a JSON object, an error object typed, nested token counts and the
//! environment variables clients read. Each provider still names its own fields.

use crate::client::malformed;
use crate::convert::count;
use crate::http::{classify, provider_message};
use serde::Serialize;
use serde_json::{Map, Value, json};
use toolwright_core::{
    AgentResult,
    dialect::Dialect,
    llm::{AssistantMessage, LlmError, OutputSchema},
};

/// Puts `value` in `body` under `key` when there is one (an unset setting is not sent,
/// so the provider's default holds).
pub(crate) fn put<T: Serialize>(body: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        body.insert(key.into(), json!(value));
    }
}

/// The header `name: value`, when there is a value (a key may be left out for local
/// servers).
pub(crate) fn key_header(name: &str, value: Option<String>) -> Vec<(String, String)> {
    value.map(|v| (name.to_owned(), v)).into_iter().collect()
}

/// The strict or the plain dialect of a provider's pair.
pub(crate) fn strictness(strict: bool, strict_dialect: Dialect, plain: Dialect) -> Dialect {
    if strict { strict_dialect } else { plain }
}

/// The `{"type": "json_schema", "name", "schema", "strict"}` object both OpenAI APIs
/// describe structured output with (each puts it in its own place): the output schema
/// rendered in `dialect`, strict in the strict dialect.
pub(crate) fn json_schema(
    dialect: Dialect,
    output: &OutputSchema,
) -> AgentResult<Map<String, Value>> {
    let schema = crate::convert::render_output(dialect, output)?;
    let mut format = Map::new();
    format.insert("type".into(), json!("json_schema"));
    format.insert("name".into(), json!(output.name));
    format.insert("schema".into(), schema);
    format.insert("strict".into(), json!(dialect == Dialect::OpenAiStrict));
    Ok(format)
}

/// `message`, unless it has neither text nor calls and the provider says `why` it was
/// withheld: then a refusal quoting that.
pub(crate) fn unless_withheld(
    provider: &str,
    message: AssistantMessage,
    why: Option<String>,
) -> Result<AssistantMessage, LlmError> {
    match why {
        Some(why) if message.text.is_none() && message.tool_calls.is_empty() => {
            Err(LlmError::Refused {
                message: format!("{provider}: {why}"),
            })
        }
        _ => Ok(message),
    }
}

/// A whole answer must be a JSON object before any field of it is read.
pub(crate) fn expect_object(provider: &str, body: &Value) -> Result<(), LlmError> {
    if body.is_object() {
        Ok(())
    } else {
        Err(malformed(provider, "the body is not a JSON object", body))
    }
}

/// The typed error for a provider's error body inside an answer or a stream (see
/// [`provider_message`] for the shapes read), or `None` when it carries no message.
pub(crate) fn provider_error(provider: &str, json: &Value) -> Option<LlmError> {
    let (kind, message) = provider_message(json)?;
    Some(classify(
        0,
        kind.as_deref(),
        format!("{provider}: {message}"),
        None,
    ))
}

/// A token count inside a details object (`prompt_tokens_details.cached_tokens`...),
/// or 0 when either is missing.
pub(crate) fn nested_count(usage: &Value, details: &str, key: &str) -> u64 {
    usage.get(details).map_or(0, |d| count(d, key))
}

/// An empty request body with room for the fields a provider sets and the escape-hatch
/// fields, so that it is not regrown (and rehashed) as it fills.
pub(crate) fn body_map() -> Map<String, Value> {
    Map::with_capacity(16)
}

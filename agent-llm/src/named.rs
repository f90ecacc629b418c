//! A client chosen by a model's name, `"provider:model"`, configured from the
//! environment like each provider's `from_env`.

use crate::anthropic::ANTHROPIC_ENV;
use crate::env::{self, EnvError};
use crate::gemini::GEMINI_ENV;
use crate::openai::OPENAI_ENV;
use crate::{AnthropicClient, GeminiClient, OpenAiClient, OpenAiResponsesClient};
use std::sync::Arc;
use toolwright_core::LlmClient;

/// The providers a model name may start with.
pub const PROVIDERS: &[&str] = &["anthropic", "openai", "openai-responses", "gemini"];

/// A client for the model `name` names: `"anthropic:claude-sonnet-4-5"`,
/// `"openai:gpt-4.1"` (Chat Completions), `"openai-responses:gpt-4.1"`,
/// `"gemini:gemini-2.5-flash"` (`google:` also works). A provider alone
/// (`"anthropic"`) takes the model from the provider's model variable, else its default.
/// The key and base URL come from the provider's variables, as its `from_env` reads
/// them (`ANTHROPIC_API_KEY`, `OPENAI_BASE_URL`...).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let llm = toolwright_llm::model("anthropic:claude-sonnet-4-5")?;
/// let agent = toolwright_core::Agent::builder(llm).build()?;
/// println!("{}", agent.prompt("Hello").await?);
/// # Ok(()) }
/// ```
///
/// # Errors
///
/// [`EnvError::UnknownProvider`] for a provider not in [`PROVIDERS`] (or an empty
/// model after the colon); [`EnvError::NotConfigured`] when the provider's key and base
/// URL variables are both unset; [`EnvError::Invalid`] when the client cannot be built.
pub fn model(name: &str) -> Result<Arc<dyn LlmClient>, EnvError> {
    let (provider, model) = match name.split_once(':') {
        Some((provider, model)) => (provider.trim(), Some(model.trim())),
        None => (name.trim(), None),
    };
    if model.is_some_and(str::is_empty) {
        return Err(unknown(name));
    }
    Ok(match provider.to_ascii_lowercase().as_str() {
        "anthropic" => Arc::new(env::from_env(
            &ANTHROPIC_ENV,
            model,
            AnthropicClient::DEFAULT_MODEL,
            AnthropicClient::builder,
        )?),
        "openai" => Arc::new(env::from_env(
            &OPENAI_ENV,
            model,
            OpenAiClient::DEFAULT_MODEL,
            OpenAiClient::builder,
        )?),
        "openai-responses" => Arc::new(env::from_env(
            &OPENAI_ENV,
            model,
            OpenAiResponsesClient::DEFAULT_MODEL,
            OpenAiResponsesClient::builder,
        )?),
        "gemini" | "google" => Arc::new(env::from_env(
            &GEMINI_ENV,
            model,
            GeminiClient::DEFAULT_MODEL,
            GeminiClient::builder,
        )?),
        _ => return Err(unknown(name)),
    })
}

fn unknown(name: &str) -> EnvError {
    EnvError::UnknownProvider {
        given: name.to_owned(),
        known: PROVIDERS,
    }
}

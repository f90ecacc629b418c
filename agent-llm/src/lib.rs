//! Real models for [`toolwright_core`]: one generic HTTP [`Client`] over a [`Provider`] for
//! each model API:
//! - [`OpenAiClient`]: the OpenAI Chat Completions API, which also serves Ollama, vLLM,
//!   llama.cpp's server and LM Studio through its base URL;
//! - [`OpenAiResponsesClient`]: the OpenAI Responses API;
//! - [`AnthropicClient`]: the Anthropic Messages API;
//! - [`GeminiClient`]: the Google Gemini API (`generateContent`).
//!
//! Each renders the tools on offer in its provider's schema
//! [`Dialect`](toolwright_core::dialect::Dialect) and maps the model's arguments back through it,
//! sends tool results and tool errors in the provider's format, takes images in user
//! messages, reports token [`Usage`](toolwright_core::llm::Usage) (cached and reasoning tokens
//! included), maps [`ModelSettings`](toolwright_core::ModelSettings) to the provider's own
//! fields, retries 408, 429 and 5xx answers with exponential backoff (honouring
//! `Retry-After`, see [`RetryPolicy`]), bounds every request with a timeout, and turns a
//! provider's error into a typed [`LlmError`](toolwright_core::llm::LlmError) that quotes the
//! provider's message. Each streams ([`LlmClient::stream`](toolwright_core::LlmClient::stream))
//! over server-sent events.
//!
//! ```no_run
//! use toolwright_core::{Agent, AgentResult, ToolSet};
//! use toolwright_llm::{AnthropicClient, OpenAiClient};
//!
//! fn openai_agent(tools: ToolSet) -> AgentResult<Agent> {
//!     // OpenAI, or any compatible server through `base_url`.
//!     let model = OpenAiClient::builder("gpt-4o-mini")
//!         .api_key(std::env::var("OPENAI_API_KEY").unwrap_or_default())
//!         .build()?;
//!     Agent::builder(model).tools(tools).build()
//! }
//!
//! fn anthropic_agent(tools: ToolSet) -> AgentResult<Agent> {
//!     let model = AnthropicClient::builder("claude-sonnet-4-5")
//!         .api_key(std::env::var("ANTHROPIC_API_KEY").unwrap_or_default())
//!         .build()?;
//!     Agent::builder(model).tools(tools).build()
//! }
//! ```
//!
//! Each also comes from the environment: [`OpenAiClient::from_env`] (`OPENAI_BASE_URL`,
//! `OPENAI_API_KEY`, `OPENAI_MODEL`), [`AnthropicClient::from_env`]
//! (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `ANTHROPIC_MODEL`) and
//! [`GeminiClient::from_env`] (`GEMINI_API_KEY` or `GOOGLE_API_KEY`, `GEMINI_BASE_URL`,
//! `GEMINI_MODEL`). Each answers [`EnvError::NotConfigured`] when the environment does
//! not select its provider, so an application can try one after another:
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolwright_core::{AgentResult, LlmClient};
//! use toolwright_llm::{AnthropicClient, OpenAiClient};
//!
//! fn model_from_env() -> AgentResult<Arc<dyn LlmClient>> {
//!     match OpenAiClient::from_env() {
//!         Ok(openai) => return Ok(Arc::new(openai)),
//!         Err(unset) if unset.is_not_configured() => {}
//!         Err(invalid) => return Err(invalid.into()),
//!     }
//!     Ok(Arc::new(AnthropicClient::from_env()?))
//! }
//! ```
//!
//! TLS is rustls with the `ring` crypto provider, configured for each client's own
//! HTTP client ([`tls_config`]): nothing is installed process-wide. An application that
//! wants its own HTTP client (a proxy, other roots, a shared pool) passes it with
//! [`Builder::http_client`].

mod anthropic;
mod client;
mod convert;
mod env;
mod gemini;
mod http;
mod lenient;
mod named;
mod openai;
mod provider;
mod responses;
mod wire;

pub use anthropic::{Anthropic, AnthropicBuilder, AnthropicClient};
pub use client::{Builder, Client};
pub use env::EnvError;
pub use gemini::{Gemini, GeminiBuilder, GeminiClient};
pub use http::{DEFAULT_TIMEOUT, tls_config};
pub use named::{PROVIDERS, model};
pub use openai::{OpenAi, OpenAiBuilder, OpenAiClient};
pub use provider::{Assembler, Provider, StreamParser};
pub use responses::{OpenAiResponses, OpenAiResponsesBuilder, OpenAiResponsesClient};
pub use toolwright_core::exec::RetryPolicy;

//! Real models for [`toolwright_core`]: one generic HTTP [`Client`] over a [`Provider`] for
//! each model API:
//! - [`OpenAiClient`]: the OpenAI Chat Completions API, which also serves Ollama, vLLM,
//!   llama.cpp's server and LM Studio through its base URL;
//! - [`OpenAiResponsesClient`]: the OpenAI Responses API;
//! - [`AnthropicClient`]: the Anthropic Messages API;
//! - [`GeminiClient`]: the Google Gemini API (`generateContent`).
//!
//! Each renders the tools on offer in its provider's schema
//! [`Dialect`](toolwright_core::Dialect) and maps the model's arguments back through it,
//! sends tool results and tool errors in the provider's format, takes images in user
//! messages, reports token [`Usage`](toolwright_core::Usage) (cached and reasoning tokens
//! included), maps [`ModelSettings`](toolwright_core::ModelSettings) to the provider's own
//! fields, retries 408, 429 and 5xx answers with exponential backoff (honouring
//! `Retry-After`, see [`RetryPolicy`]), bounds every request with a timeout, and turns a
//! provider's error into a typed [`LlmError`](toolwright_core::LlmError) that quotes the
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
//!     let key = std::env::var("ANTHROPIC_API_KEY").unwrap_or_default();
//!     let model = AnthropicClient::builder(key, "claude-sonnet-4-5").build()?;
//!     Agent::builder(model).tools(tools).build()
//! }
//! ```
//!
//! Each also comes from the environment: [`OpenAiClient::from_env`] (`OPENAI_BASE_URL`,
//! `OPENAI_API_KEY`, `OPENAI_MODEL`), [`AnthropicClient::from_env`]
//! (`ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL`, `ANTHROPIC_BASE_URL`) and
//! [`GeminiClient::from_env`] (`GEMINI_API_KEY`, `GEMINI_MODEL`, `GEMINI_BASE_URL`).
//!
//! TLS is rustls with the `ring` crypto provider, configured for each client's own
//! HTTP client ([`tls_config`]): nothing is installed process-wide. An application that
//! wants its own HTTP client (a proxy, other roots, a shared pool) passes it with
//! [`Builder::with_http_client`].

mod anthropic;
mod client;
mod convert;
mod gemini;
mod http;
mod lenient;
mod openai;
mod provider;
mod responses;
mod wire;

pub use anthropic::{Anthropic, AnthropicBuilder, AnthropicClient};
pub use client::{Builder, Client};
pub use gemini::{Gemini, GeminiBuilder, GeminiClient};
pub use http::{DEFAULT_TIMEOUT, tls_config};
pub use openai::{OpenAi, OpenAiBuilder, OpenAiClient};
pub use provider::{Assembler, Provider, StreamParser};
pub use responses::{OpenAiResponses, OpenAiResponsesBuilder, OpenAiResponsesClient};
pub use toolwright_core::RetryPolicy;

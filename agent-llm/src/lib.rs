//! Real models for [`agent_core`]: [`LlmClient`](agent_core::LlmClient)s for the OpenAI
//! Chat Completions API ([`OpenAiClient`], which also serves Ollama, vLLM, llama.cpp's
//! server and LM Studio through its base URL) and the Anthropic Messages API
//! ([`AnthropicClient`]).
//!
//! Both render the tools on offer in their provider's schema
//! [`Dialect`](agent_core::Dialect) and map the model's arguments back through it, send
//! tool results and tool errors in the provider's format, report token
//! [`Usage`](agent_core::Usage), retry 408, 429 and 5xx answers with exponential
//! backoff (honouring `Retry-After`, see [`RetryPolicy`]), bound every request with a
//! timeout, and turn a provider's error body into an
//! [`AgentError::Llm`](agent_core::AgentError::Llm) that quotes the provider's message.
//!
//! ```no_run
//! use agent_core::{Agent, AgentResult, ToolSet};
//! use agent_llm::{AnthropicClient, OpenAiClient};
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
//! Either also comes from the environment: [`OpenAiClient::from_env`] (`OPENAI_BASE_URL`,
//! `OPENAI_API_KEY`, `OPENAI_MODEL`) and [`AnthropicClient::from_env`]
//! (`ANTHROPIC_API_KEY`, `ANTHROPIC_MODEL`, `ANTHROPIC_BASE_URL`).
//!
//! TLS is rustls with the `ring` crypto provider, installed as the process default when
//! the application has not installed one.

mod anthropic;
mod convert;
mod http;
mod openai;

pub use anthropic::{AnthropicBuilder, AnthropicClient};
pub use http::{DEFAULT_TIMEOUT, RetryPolicy};
pub use openai::{OpenAiBuilder, OpenAiClient};

//! Clients from the environment: which variables select a provider, and the error that
//! tells "not asked for" from "asked for, but unusable".
//!
//! One test in its own binary, because it changes the process's environment: no other
//! thread reads it meanwhile.

#![allow(unsafe_code)]

use toolwright_llm::{
    AnthropicClient, EnvError, GeminiClient, OpenAiClient, OpenAiResponsesClient,
};

const VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "GEMINI_MODEL",
];

fn set(name: &str, value: &str) {
    // SAFETY: this binary's only test runs alone; nothing else reads the environment.
    unsafe { std::env::set_var(name, value) }
}

fn clear() {
    for name in VARS {
        // SAFETY: as in `set`.
        unsafe { std::env::remove_var(name) }
    }
}

fn not_configured<T: std::fmt::Debug>(result: Result<T, EnvError>) -> String {
    match result {
        Err(error @ EnvError::NotConfigured { .. }) => error.to_string(),
        other => panic!("expected NotConfigured, got {other:?}"),
    }
}

#[test]
fn the_environment_selects_a_provider_or_says_which_variables_would() {
    clear();
    assert_eq!(
        not_configured(OpenAiClient::from_env()),
        "no model is configured: set OPENAI_API_KEY or OPENAI_BASE_URL"
    );
    not_configured(OpenAiResponsesClient::from_env());
    assert_eq!(
        not_configured(AnthropicClient::from_env()),
        "no model is configured: set ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL"
    );
    assert_eq!(
        not_configured(GeminiClient::from_env()),
        "no model is configured: set GEMINI_API_KEY or GOOGLE_API_KEY or GEMINI_BASE_URL"
    );

    // Blank counts as unset.
    set("OPENAI_API_KEY", "  ");
    not_configured(OpenAiClient::from_env());

    // A base URL alone selects the provider: a local or compatible server needs no key.
    set("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/anthropic");
    let anthropic = AnthropicClient::from_env().expect("selected by its base URL");
    assert!(
        anthropic.url().starts_with("http://127.0.0.1:9/anthropic"),
        "{}",
        anthropic.url()
    );
    assert_eq!(anthropic.model(), AnthropicClient::DEFAULT_MODEL);

    // Google's own variable name works as well as Gemini's.
    set("GOOGLE_API_KEY", "g-key");
    set("GEMINI_MODEL", "gemini-test");
    let gemini = GeminiClient::from_env().expect("selected by GOOGLE_API_KEY");
    assert_eq!(gemini.model(), "gemini-test");
    assert!(
        gemini.url().starts_with(GeminiClient::DEFAULT_BASE_URL),
        "{}",
        gemini.url()
    );

    // Asked for, but unusable: an error that is not "not configured", and that
    // converts into the agent's error with the reason kept.
    set("OPENAI_BASE_URL", "not a url");
    let invalid = OpenAiClient::from_env().expect_err("an unusable base URL");
    assert!(!invalid.is_not_configured(), "{invalid}");
    let agent_error = toolwright_core::AgentError::from(invalid);
    assert!(
        agent_error.to_string().contains("not a url"),
        "{agent_error}"
    );

    // A model named by a string: the provider from its prefix, the model after the
    // colon over the provider's model variable, the key and base URL from the rest.
    clear();
    set("ANTHROPIC_API_KEY", "a-key");
    set("ANTHROPIC_MODEL", "from-the-variable");
    let named = toolwright_llm::model("anthropic:claude-named").expect("named");
    assert_eq!(named.provider_name(), Some("anthropic"));
    assert_eq!(named.model_name(), Some("claude-named"));
    let bare = toolwright_llm::model("anthropic").expect("the provider alone");
    assert_eq!(bare.model_name(), Some("from-the-variable"));
    set("GOOGLE_API_KEY", "g-key");
    let google = toolwright_llm::model("google:gemini-named").expect("google is gemini");
    assert_eq!(google.model_name(), Some("gemini-named"));
    set("OPENAI_BASE_URL", "http://127.0.0.1:9/v1");
    let chat = toolwright_llm::model("openai:gpt-named").expect("chat completions");
    let responses = toolwright_llm::model("openai-responses:gpt-named").expect("responses");
    assert_eq!(chat.model_name(), Some("gpt-named"));
    assert_ne!(chat.provider_name(), responses.provider_name());
    // A provider the environment does not ask for is not configured, named or not.
    clear();
    not_configured(
        toolwright_llm::model("openai:gpt-named").map(|llm| llm.model_name().map(str::to_owned)),
    );
    // A name that names no provider, or no model, says what it expected.
    for bad in ["mistral:large", "anthropic:", ":claude", ""] {
        match toolwright_llm::model(bad) {
            Err(error @ EnvError::UnknownProvider { .. }) => {
                let message = error.to_string();
                assert!(message.contains("provider:model"), "{message}");
                assert!(message.contains("openai-responses"), "{message}");
            }
            other => panic!("`{bad}`: expected UnknownProvider, got {:?}", other.err()),
        }
    }
    clear();
}

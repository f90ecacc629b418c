//! The clients never install a process-wide rustls crypto provider, and take the
//! application's own HTTP client.

mod common;

use common::{MockServer, Reply};
use serde_json::json;
use toolwright_core::{
    LlmClient, Message,
    llm::{AssistantMessage, LlmRequest},
};
use toolwright_llm::{AnthropicClient, GeminiClient, OpenAiClient, OpenAiResponsesClient};

fn completion(text: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
    })
}

// One test in this binary, so nothing else in the process installs a provider.
#[tokio::test]
async fn no_process_wide_crypto_provider_and_the_applications_http_client() {
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());

    // Building every client (each builds its TLS config) and using one.
    let server = MockServer::start([
        Reply::json(200, completion("hello")),
        Reply::json(200, completion("again")),
    ])
    .await;
    let _ = AnthropicClient::builder("m").api_key("k").build().unwrap();
    let _ = GeminiClient::builder("m").api_key("k").build().unwrap();
    let _ = OpenAiResponsesClient::builder("m").build().unwrap();
    let client = OpenAiClient::builder("m")
        .base_url(format!("{}/v1", server.url))
        .build()
        .unwrap();
    let messages = [Message::user("hi")];
    let answer = client
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(answer, AssistantMessage::text("hello"));
    assert!(
        rustls::crypto::CryptoProvider::get_default().is_none(),
        "a client installed a process-wide crypto provider"
    );

    // The application's own client carries the request (its default header shows).
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-app", reqwest::header::HeaderValue::from_static("mine"));
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(toolwright_llm::tls_config().unwrap())
        .default_headers(headers)
        .build()
        .unwrap();
    let client = OpenAiClient::builder("m")
        .base_url(format!("{}/v1", server.url))
        .http_client(http)
        .build()
        .unwrap();
    let answer = client
        .complete(LlmRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(answer, AssistantMessage::text("again"));
    let requests = server.requests();
    assert_eq!(requests[0].header("x-app"), None);
    assert_eq!(requests[1].header("x-app"), Some("mine"));
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}

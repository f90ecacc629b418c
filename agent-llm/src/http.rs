//! The transport both adapters share: one JSON POST with a timeout, retried with
//! exponential backoff on 408, 429 and 5xx answers and on connection failures, and a
//! provider's error body turned into a readable [`AgentError::Llm`].

use agent_core::{AgentError, AgentResult};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// When and how often a failed request is sent again.
///
/// A request is retried when the server answers 408, 429 or any 5xx, when the server
/// says so with `x-should-retry: true` (and never when it says `false`), or when the
/// connection fails or times out. The wait before retry `n` (1-based) is
/// `initial_backoff * 2^(n-1)`, capped at `max_backoff`, less up to a quarter of random
/// jitter; a `Retry-After` (seconds) or `retry-after-ms` header from the server is used
/// instead when it is no longer than `max_retry_after`. Each retry is logged as a
/// `tracing` warning with the error that caused it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a request is sent at most, the first time included (at least 1).
    pub max_attempts: u32,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest computed wait.
    pub max_backoff: Duration,
    /// The longest wait a server's `Retry-After` is honoured for; a longer one falls
    /// back to the computed backoff.
    pub max_retry_after: Duration,
}

impl RetryPolicy {
    /// Three attempts, backoff from 500 ms to 8 s, `Retry-After` honoured up to 60 s (the
    /// official SDKs' defaults).
    pub const DEFAULT: Self = Self {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(500),
        max_backoff: Duration::from_secs(8),
        max_retry_after: Duration::from_secs(60),
    };

    /// One attempt, no retries.
    pub const NEVER: Self = Self {
        max_attempts: 1,
        ..Self::DEFAULT
    };

    /// The computed wait before retry `retry` (1-based), jittered.
    fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .initial_backoff
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20));
        let capped = exp.min(self.max_backoff);
        // Up to 25% less, so that clients told to back off at once do not come back at
        // once. `RandomState` is a randomly seeded hasher: enough randomness for jitter.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let jitter = capped.mul_f64((random % 1000) as f64 / 4000.0);
        capped - jitter
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The request timeout when none is configured: ten minutes, as the official SDKs use,
/// because a long answer takes long to generate.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// A configured HTTP client for one provider endpoint.
#[derive(Clone)]
pub(crate) struct Transport {
    /// The provider's name for error messages: `openai`, `anthropic`.
    pub provider: &'static str,
    pub client: reqwest::Client,
    pub url: String,
    pub headers: HeaderMap,
    pub timeout: Duration,
    pub retry: RetryPolicy,
}

impl Transport {
    /// A transport posting to `url` with `headers` on every request.
    pub fn new(
        provider: &'static str,
        url: String,
        headers: HeaderMap,
        timeout: Duration,
        retry: RetryPolicy,
    ) -> AgentResult<Self> {
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .connect_timeout(timeout.min(Duration::from_secs(30)))
            .build()
            .map_err(|e| {
                AgentError::Llm(format!("{provider}: cannot build the HTTP client: {e}"))
            })?;
        Ok(Self {
            provider,
            client,
            url,
            headers,
            timeout,
            retry,
        })
    }

    /// Posts `body` and returns the parsed JSON of a 2xx answer, retrying as the
    /// policy says.
    pub async fn post_json(&self, body: &Value) -> AgentResult<Value> {
        let provider = self.provider;
        let body = serde_json::to_vec(body).map_err(|e| {
            AgentError::Llm(format!("{provider}: cannot serialize the request: {e}"))
        })?;
        let attempts = self.retry.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let outcome = self.send_once(&body).await;
            let (error, server_wait) = match outcome {
                Attempt::Done(result) => return result,
                Attempt::Retryable { error, wait } => (error, wait),
            };
            if attempt >= attempts {
                let tries = if attempts == 1 {
                    String::new()
                } else {
                    format!(" (after {attempts} attempts)")
                };
                return Err(AgentError::Llm(format!("{error}{tries}")));
            }
            let wait = server_wait
                .filter(|w| *w <= self.retry.max_retry_after)
                .unwrap_or_else(|| self.retry.backoff(attempt));
            attempt += 1;
            tracing::warn!(
                provider,
                attempt,
                max_attempts = attempts,
                wait_ms = wait.as_millis() as u64,
                "{error}; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }

    async fn send_once(&self, body: &[u8]) -> Attempt {
        let provider = self.provider;
        let sent = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .timeout(self.timeout)
            .body(body.to_vec())
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                let error = transport_error(provider, &self.url, self.timeout, &e);
                return if e.is_connect() || e.is_timeout() {
                    Attempt::Retryable { error, wait: None }
                } else {
                    Attempt::Done(Err(AgentError::Llm(error)))
                };
            }
        };
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = match response.bytes().await {
            Ok(bytes) => bytes,
            Err(e) => {
                let error = transport_error(provider, &self.url, self.timeout, &e);
                return if e.is_timeout() {
                    Attempt::Retryable { error, wait: None }
                } else {
                    Attempt::Done(Err(AgentError::Llm(error)))
                };
            }
        };
        if status.is_success() {
            return Attempt::Done(parse_body(provider, &bytes));
        }
        let error = status_error(provider, status, &headers, &bytes);
        let should_retry = match header_str(&headers, "x-should-retry") {
            Some("true") => true,
            Some("false") => false,
            _ => status.as_u16() == 408 || status.as_u16() == 429 || status.is_server_error(),
        };
        if should_retry {
            Attempt::Retryable {
                error,
                wait: retry_after(&headers),
            }
        } else {
            Attempt::Done(Err(AgentError::Llm(error)))
        }
    }
}

enum Attempt {
    Done(AgentResult<Value>),
    Retryable {
        error: String,
        wait: Option<Duration>,
    },
}

/// Installs rustls' `ring` provider as the process default, unless the application
/// installed one already: reqwest is built without a provider of its own, so that no
/// cmake-built C library is needed.
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; its provider is as good as ours.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

fn parse_body(provider: &str, bytes: &[u8]) -> AgentResult<Value> {
    serde_json::from_slice(bytes).map_err(|e| {
        AgentError::Llm(format!(
            "{provider}: the response body is not valid JSON ({e}): {}",
            excerpt(bytes)
        ))
    })
}

fn transport_error(provider: &str, url: &str, timeout: Duration, e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!(
            "{provider}: request to {url} timed out after {}",
            human(timeout)
        )
    } else if e.is_connect() {
        format!("{provider}: cannot connect to {url}: {}", chain(e))
    } else {
        format!("{provider}: request to {url} failed: {}", chain(e))
    }
}

/// An error and its sources, `a: b: c`, since reqwest's own message alone is vague.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let next = inner.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = inner.source();
    }
    text
}

fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// `openai: HTTP 400 Bad Request (invalid_request_error): <the provider's message>
/// [request id req_123]`.
fn status_error(
    provider: &str,
    status: reqwest::StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> String {
    let mut text = format!("{provider}: HTTP {status}");
    match serde_json::from_slice::<Value>(body) {
        Ok(json) => match provider_message(&json) {
            Some((kind, message)) => {
                if let Some(kind) = kind {
                    text.push_str(&format!(" ({kind})"));
                }
                text.push_str(": ");
                text.push_str(&message);
            }
            None => {
                text.push_str(": ");
                text.push_str(&excerpt(body));
            }
        },
        Err(_) if body.is_empty() => {}
        Err(_) => {
            text.push_str(": ");
            text.push_str(&excerpt(body));
        }
    }
    let request_id =
        header_str(headers, "x-request-id").or_else(|| header_str(headers, "request-id"));
    if let Some(id) = request_id {
        text.push_str(&format!(" [request id {id}]"));
    }
    text
}

/// The error type and message of a provider's error body: OpenAI's and Anthropic's
/// `{"error": {"type", "message"}}` (Anthropic wraps it in `{"type": "error"}`), and
/// the `{"error": "..."}` or `{"message": "..."}` of some compatible servers.
pub(crate) fn provider_message(json: &Value) -> Option<(Option<String>, String)> {
    let kind_of = |v: &Value| {
        ["type", "code"].iter().find_map(|key| match v.get(key) {
            Some(Value::String(s)) if s != "error" => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        })
    };
    match json.get("error") {
        Some(Value::Object(error)) => {
            let message = error.get("message").and_then(Value::as_str)?;
            let error = Value::Object(error.clone());
            Some((kind_of(&error), message.to_owned()))
        }
        Some(Value::String(message)) => Some((None, message.clone())),
        _ => {
            let message = json.get("message").and_then(Value::as_str)?;
            Some((kind_of(json), message.to_owned()))
        }
    }
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// The server's requested wait: `retry-after-ms` (OpenAI), else `Retry-After` in
/// seconds. The HTTP-date form is not understood and falls back to the backoff.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = header_str(headers, "retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let secs = header_str(headers, "retry-after")?.parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

/// The first 500 characters of a body, for error messages.
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    const MAX: usize = 500;
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text.is_empty() {
        return "(empty body)".to_owned();
    }
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// Builds a header map from `(name, value)` pairs, naming the bad one on failure.
pub(crate) fn header_map(
    provider: &str,
    pairs: impl IntoIterator<Item = (String, String)>,
) -> AgentResult<HeaderMap> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            AgentError::Llm(format!("{provider}: `{name}` is not a valid header name"))
        })?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            AgentError::Llm(format!(
                "{provider}: the value of header `{name}` is invalid"
            ))
        })?;
        if is_secret(&header) {
            value.set_sensitive(true);
        }
        map.insert(header, value);
    }
    Ok(map)
}

fn is_secret(name: &HeaderName) -> bool {
    matches!(name.as_str(), "authorization" | "x-api-key" | "api-key")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(1),
        };
        let within = |retry, full: u64| {
            let wait = policy.backoff(retry);
            let full = Duration::from_millis(full);
            assert!(wait <= full && wait >= full * 3 / 4, "{wait:?} vs {full:?}");
        };
        within(1, 100);
        within(2, 200);
        within(3, 400);
        within(5, 1000);
        within(40, 1000);
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        let mut date = HeaderMap::new();
        date.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&date), None);
    }

    #[test]
    fn provider_messages() {
        let openai = json!({"error": {"message": "bad", "type": "invalid_request_error", "param": null, "code": null}});
        assert_eq!(
            provider_message(&openai),
            Some((Some("invalid_request_error".into()), "bad".into()))
        );
        let anthropic = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(
            provider_message(&anthropic),
            Some((Some("overloaded_error".into()), "Overloaded".into()))
        );
        let ollama = json!({"error": "model \"x\" not found"});
        assert_eq!(
            provider_message(&ollama),
            Some((None, "model \"x\" not found".into()))
        );
        assert_eq!(provider_message(&json!({"detail": "x"})), None);
    }

    #[test]
    fn excerpts_are_bounded() {
        let long = "x".repeat(2000);
        let cut = excerpt(long.as_bytes());
        assert_eq!(cut.chars().count(), 501);
        assert_eq!(excerpt(b"  "), "(empty body)");
    }
}

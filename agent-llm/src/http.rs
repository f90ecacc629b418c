//! The transport every provider shares: a JSON POST with a timeout, retried as the
//! [`RetryPolicy`] says on 408, 429 and 5xx answers and on connection failures, a
//! provider's error body turned into a typed [`LlmError`], and the TLS configuration
//! the default HTTP client is built with.

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Request, Response, StatusCode, Url};
use rustls_platform_verifier::BuilderVerifierExt;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use toolwright_core::{
    exec::{RetryDecision, RetryPolicy},
    llm::LlmError,
};

/// The request timeout when none is configured: ten minutes, as the official SDKs use,
/// because a long answer takes long to generate.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest a connection may take to open (or the request timeout, when shorter).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The TLS configuration the clients' own HTTP clients use: rustls with its own `ring`
/// crypto provider and the platform's certificate verifier. Nothing is installed
/// process-wide, so an application keeps whatever default provider it chooses (or
/// none). Build an HTTP client of your own on it for
/// [`http_client`](crate::Builder::http_client):
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let http = reqwest::Client::builder()
///     .tls_backend_preconfigured(toolwright_llm::tls_config()?)
///     .pool_max_idle_per_host(4)
///     .build()?;
/// let model = toolwright_llm::OpenAiClient::builder("gpt-4o-mini").http_client(http).build()?;
/// # Ok(()) }
/// ```
pub fn tls_config() -> Result<rustls::ClientConfig, LlmError> {
    let cannot = |e: rustls::Error| LlmError::other(format!("cannot configure TLS: {e}"));
    // ring, not aws-lc-rs: no C build beyond ring's. Newer rustls deprecates it for
    // lacking post-quantum key exchange; classical key exchange is what ring offers.
    #[allow(deprecated)]
    let crypto = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(crypto)
        .with_safe_default_protocol_versions()
        .map_err(cannot)?
        .with_platform_verifier()
        .map_err(cannot)?
        .with_no_client_auth())
}

/// An HTTP client on [`tls_config`] whose requests each take at most `timeout`.
pub(crate) fn default_http_client(
    provider: &str,
    timeout: Duration,
    connect_timeout: Duration,
) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config()?)
        .timeout(timeout)
        .connect_timeout(connect_timeout)
        .build()
        .map_err(|e| {
            LlmError::other(format!(
                "{provider}: cannot build the HTTP client: {}",
                chain(&e)
            ))
        })
}

/// A URL requests are posted to: the text as configured (for accessors and error
/// messages) and, parsed once, the URL each request clones, since reqwest would parse
/// the text again for every request.
#[derive(Clone)]
pub(crate) struct Endpoint {
    text: String,
    /// `None` when the text is no URL: each request then fails as reqwest says.
    parsed: Option<Url>,
}

impl Endpoint {
    pub fn new(text: String) -> Self {
        let parsed = Url::parse(&text).ok();
        Self { text, parsed }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A configured HTTP client for one provider.
#[derive(Clone)]
pub(crate) struct Transport {
    /// The provider's name for error messages: `openai`, `anthropic`, `gemini`.
    pub provider: &'static str,
    pub client: reqwest::Client,
    /// Every request's headers, `content-type` included: built once, cloned per
    /// request.
    headers: HeaderMap,
    pub timeout: Duration,
    /// Whether each request carries the timeout: a caller's HTTP client does not have
    /// it, while the client's own has it built in (the same deadline, without a
    /// per-request setting allocated for every request).
    timeout_per_request: bool,
    pub retry: RetryPolicy,
}

impl Transport {
    /// A transport sending `headers` (the key's and the caller's) with every request,
    /// then `content-type: application/json`, each request bounded by `timeout`, on
    /// `client` if given, else on an HTTP client of its own.
    pub fn new(
        provider: &'static str,
        client: Option<reqwest::Client>,
        mut headers: HeaderMap,
        timeout: Duration,
        retry: RetryPolicy,
    ) -> Result<Self, LlmError> {
        headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let timeout_per_request = client.is_some();
        let client = match client {
            Some(client) => client,
            None => default_http_client(provider, timeout, timeout.min(CONNECT_TIMEOUT))?,
        };
        Ok(Self {
            provider,
            client,
            headers,
            timeout,
            timeout_per_request,
            retry,
        })
    }

    /// Posts `body` to `url` and returns the parsed JSON of a 2xx answer, retrying as
    /// the policy says (a body that times out is retried too).
    pub async fn post_json(
        &self,
        url: &Endpoint,
        body: Bytes,
        headers: Option<&HeaderMap>,
    ) -> Result<Value, LlmError> {
        self.with_retries(|| async {
            let response = match self.send_once(url, &body, headers).await {
                Ok(response) => response,
                Err(decision) => return decision,
            };
            match response.bytes().await {
                Ok(bytes) => RetryDecision::Done(parse_body(self.provider, &bytes)),
                Err(e) => {
                    let error = self.transport_error(url, &e);
                    if e.is_timeout() {
                        RetryDecision::Retry { error, wait: None }
                    } else {
                        RetryDecision::Done(Err(error))
                    }
                }
            }
        })
        .await
    }

    /// Posts `body` to `url` and returns the response of a 2xx answer, its body unread
    /// (a stream), retrying as the policy says until the answer starts.
    pub async fn post_for_stream(
        &self,
        url: &Endpoint,
        body: Bytes,
        headers: Option<&HeaderMap>,
    ) -> Result<Response, LlmError> {
        self.with_retries(|| async {
            match self.send_once(url, &body, headers).await {
                Ok(response) => RetryDecision::Done(Ok(response)),
                Err(decision) => decision,
            }
        })
        .await
    }

    async fn with_retries<T, F, Fut>(&self, mut attempt: F) -> Result<T, LlmError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = RetryDecision<T, LlmError>>,
    {
        let provider = self.provider;
        let attempts = self.retry.max_attempts.max(1);
        let result = self
            .retry
            .run(
                |_| attempt(),
                |attempt, error, wait| {
                    tracing::warn!(
                        provider,
                        attempt,
                        max_attempts = attempts,
                        wait_ms = wait.as_millis() as u64,
                        "{error}; retrying"
                    );
                },
            )
            .await;
        result.map_err(|mut error| {
            // Only a retryable error can have used every attempt.
            if attempts > 1 && error.is_retryable() {
                error
                    .message_mut()
                    .push_str(&format!(" (after {attempts} attempts)"));
            }
            error
        })
    }

    /// Every request's headers, with `value` added to header `name`: appended to the
    /// value the caller set (comma-separated, as betas are listed) unless it holds it.
    pub fn headers_with(&self, name: &'static str, value: &'static str) -> HeaderMap {
        let mut headers = self.headers.clone();
        let merged = match headers.get(name).and_then(|v| v.to_str().ok()) {
            Some(set) if set.split(',').any(|item| item.trim() == value) => return headers,
            Some(set) => HeaderValue::from_str(&format!("{set},{value}")).ok(),
            None => Some(HeaderValue::from_static(value)),
        };
        if let Some(merged) = merged {
            headers.insert(name, merged);
        }
        headers
    }

    /// One POST, with `headers` instead of every request's when given: the response
    /// when it is a 2xx, else what to do about the failure.
    async fn send_once<T>(
        &self,
        url: &Endpoint,
        body: &Bytes,
        headers: Option<&HeaderMap>,
    ) -> Result<Response, RetryDecision<T, LlmError>> {
        let headers = headers.unwrap_or(&self.headers);
        let sent = match &url.parsed {
            Some(parsed) => {
                // What the request builder would make, less its URL parse and
                // header-by-header merge.
                let mut request = Request::new(Method::POST, parsed.clone());
                *request.headers_mut() = headers.clone();
                if self.timeout_per_request {
                    *request.timeout_mut() = Some(self.timeout);
                }
                // A count bump, not a copy, for each attempt.
                *request.body_mut() = Some(body.clone().into());
                self.client.execute(request).await
            }
            None => {
                self.client
                    .post(url.as_str())
                    .headers(headers.clone())
                    .timeout(self.timeout)
                    .body(body.clone())
                    .send()
                    .await
            }
        };
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                let error = self.transport_error(url, &e);
                return Err(if e.is_connect() || e.is_timeout() {
                    RetryDecision::Retry { error, wait: None }
                } else {
                    RetryDecision::Done(Err(error))
                });
            }
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let bytes = response.bytes().await.unwrap_or_default();
        let wait = retry_after(&headers);
        let error = status_error(self.provider, status, &headers, &bytes, wait);
        let should_retry = match header_str(&headers, "x-should-retry") {
            Some("true") => true,
            Some("false") => false,
            _ => status.as_u16() == 408 || status.as_u16() == 429 || status.is_server_error(),
        };
        Err(if should_retry {
            RetryDecision::Retry { error, wait }
        } else {
            RetryDecision::Done(Err(error))
        })
    }

    /// A failure to send or to read, typed: a timeout, a connection failure, or other.
    pub fn transport_error(&self, url: &Endpoint, e: &reqwest::Error) -> LlmError {
        let provider = self.provider;
        if e.is_timeout() {
            LlmError::Timeout {
                message: format!(
                    "{provider}: request to {url} timed out after {}",
                    human(self.timeout)
                ),
            }
        } else if e.is_connect() {
            LlmError::Connection {
                message: format!("{provider}: cannot connect to {url}: {}", chain(e)),
            }
        } else {
            LlmError::Connection {
                message: format!("{provider}: request to {url} failed: {}", chain(e)),
            }
        }
    }
}

fn parse_body(provider: &str, bytes: &[u8]) -> Result<Value, LlmError> {
    serde_json::from_slice(bytes).map_err(|e| LlmError::InvalidResponse {
        message: format!(
            "{provider}: the response body is not valid JSON ({e}): {}",
            excerpt(bytes)
        ),
    })
}

/// An error and its sources, `a: b: c`, since reqwest's own message alone is vague.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
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

/// A non-2xx answer as a typed error whose message reads `openai: HTTP 400 Bad Request
/// (invalid_request_error): <the provider's message> [request id req_123]`.
pub(crate) fn status_error(
    provider: &str,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
    retry_after: Option<Duration>,
) -> LlmError {
    let mut message = format!("{provider}: HTTP {status}");
    let mut kind = None;
    match serde_json::from_slice::<Value>(body) {
        Ok(json) => match provider_message(&json) {
            Some((found, text)) => {
                if let Some(found) = &found {
                    message.push_str(&format!(" ({found})"));
                }
                message.push_str(": ");
                message.push_str(&text);
                kind = found;
            }
            None => {
                message.push_str(": ");
                message.push_str(&excerpt(body));
            }
        },
        Err(_) if body.is_empty() => {}
        Err(_) => {
            message.push_str(": ");
            message.push_str(&excerpt(body));
        }
    }
    let request_id =
        header_str(headers, "x-request-id").or_else(|| header_str(headers, "request-id"));
    if let Some(id) = request_id {
        message.push_str(&format!(" [request id {id}]"));
    }
    classify(status.as_u16(), kind.as_deref(), message, retry_after)
}

/// The typed error for an HTTP `status` (0 for an error inside a stream) with the
/// provider's error `kind` and the whole `message`.
pub(crate) fn classify(
    status: u16,
    kind: Option<&str>,
    message: String,
    retry_after: Option<Duration>,
) -> LlmError {
    let kind = kind.unwrap_or_default();
    if is_context_too_long(kind, &message) {
        return LlmError::ContextTooLong { message };
    }
    match (status, kind) {
        (429, _) | (_, "rate_limit_error" | "rate_limit_exceeded" | "RESOURCE_EXHAUSTED") => {
            LlmError::RateLimited {
                message,
                retry_after,
            }
        }
        (401 | 403, _)
        | (_, "authentication_error" | "permission_error" | "UNAUTHENTICATED")
        | (_, "PERMISSION_DENIED" | "invalid_api_key") => LlmError::Authentication { message },
        (408, _) => LlmError::Timeout { message },
        (500..=599, _)
        | (_, "overloaded_error" | "api_error" | "server_error")
        | (_, "UNAVAILABLE" | "INTERNAL") => LlmError::Server { status, message },
        (400..=499, _) | (_, "invalid_request_error" | "INVALID_ARGUMENT" | "NOT_FOUND") => {
            LlmError::BadRequest { message }
        }
        _ => LlmError::Other { message },
    }
}

/// Whether an error says the conversation does not fit the model's context: OpenAI's
/// `context_length_exceeded`, Anthropic's "prompt is too long", Gemini's "input token
/// count ... exceeds", and the wording of compatible servers.
fn is_context_too_long(kind: &str, message: &str) -> bool {
    if kind == "context_length_exceeded" {
        return true;
    }
    let message = message.to_ascii_lowercase();
    [
        "context length",
        "context_length",
        "context window",
        "prompt is too long",
        "input token count",
        "exceeds the available context",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

/// The error type and message of a provider's error body: OpenAI's and Anthropic's
/// `{"error": {"type", "message"}}` (Anthropic wraps it in `{"type": "error"}`),
/// Gemini's `{"error": {"code", "message", "status"}}`, and the `{"error": "..."}` or
/// `{"message": "..."}` of some compatible servers.
pub(crate) fn provider_message(json: &Value) -> Option<(Option<String>, String)> {
    let kind_of = |v: &Value| {
        ["type", "status", "code"]
            .iter()
            .find_map(|key| match v.get(key) {
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
/// seconds or as an HTTP-date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    if let Some(ms) = header_str(headers, "retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    RetryPolicy::parse_retry_after(header_str(headers, "retry-after")?, SystemTime::now())
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
) -> Result<HeaderMap, LlmError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| LlmError::Other {
            message: format!("{provider}: `{name}` is not a valid header name"),
        })?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| LlmError::Other {
            message: format!("{provider}: the value of header `{name}` is invalid"),
        })?;
        if is_secret(&header) {
            value.set_sensitive(true);
        }
        map.insert(header, value);
    }
    Ok(map)
}

fn is_secret(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "authorization" | "x-api-key" | "api-key" | "x-goog-api-key"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        let mut date = HeaderMap::new();
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(30));
        date.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        let wait = retry_after(&date).unwrap();
        assert!(
            wait > Duration::from_secs(27) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
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
        let gemini =
            json!({"error": {"code": 400, "message": "bad key", "status": "INVALID_ARGUMENT"}});
        assert_eq!(
            provider_message(&gemini),
            Some((Some("INVALID_ARGUMENT".into()), "bad key".into()))
        );
        let ollama = json!({"error": "model \"x\" not found"});
        assert_eq!(
            provider_message(&ollama),
            Some((None, "model \"x\" not found".into()))
        );
        assert_eq!(provider_message(&json!({"detail": "x"})), None);
    }

    #[test]
    fn errors_are_classified() {
        let kind = |status, kind: Option<&str>, message: &str| {
            classify(status, kind, message.to_owned(), None)
                .kind()
                .to_owned()
        };
        assert_eq!(kind(429, None, "slow down"), "rate_limited");
        assert_eq!(kind(401, None, "bad key"), "authentication");
        assert_eq!(kind(403, None, "no"), "authentication");
        assert_eq!(kind(500, None, "oops"), "server");
        assert_eq!(kind(529, Some("overloaded_error"), "busy"), "server");
        assert_eq!(kind(408, None, "slow"), "timeout");
        assert_eq!(
            kind(400, Some("invalid_request_error"), "bad"),
            "bad_request"
        );
        assert_eq!(
            kind(400, Some("context_length_exceeded"), "too long"),
            "context_too_long"
        );
        assert_eq!(
            kind(
                400,
                None,
                "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            "context_too_long"
        );
        assert_eq!(
            kind(
                400,
                Some("INVALID_ARGUMENT"),
                "The input token count (1200000) exceeds the maximum number of tokens allowed"
            ),
            "context_too_long"
        );
        assert_eq!(kind(0, Some("overloaded_error"), "busy"), "server");
    }

    #[test]
    fn excerpts_are_bounded() {
        let long = "x".repeat(2000);
        let cut = excerpt(long.as_bytes());
        assert_eq!(cut.chars().count(), 501);
        assert_eq!(excerpt(b"  "), "(empty body)");
    }
}

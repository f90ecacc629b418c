//! How [`McpClient`](crate::McpClient) reaches a Streamable HTTP server: extra headers,
//! a bearer token (fixed, or asked of a provider before every request, or obtained by
//! OAuth with the `oauth` feature), and TLS set up for this client alone.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde_json::{Map, Value};
use sse_stream::Sse;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use toolwright_core::exec::RetryPolicy;

type Provide = dyn Fn() -> BoxFuture<'static, Result<String, String>> + Send + Sync;

/// Answers a server's form elicitation: the message and the requested schema in, the
/// content to send out (`None` declines).
pub(crate) type Elicit =
    dyn Fn(String, Value) -> BoxFuture<'static, Option<Map<String, Value>>> + Send + Sync;

/// How [`McpClient::connect_http_with`](crate::McpClient::connect_http_with) talks to
/// the server: headers sent with every request, and the bearer token.
#[derive(Clone, Default)]
pub struct HttpClientOptions {
    headers: Vec<(String, String)>,
    token: Option<Token>,
    pub(crate) elicit: Option<Arc<Elicit>>,
    retry: Option<RetryPolicy>,
    http: Option<reqwest::Client>,
    /// The one protocol version to speak, when the application pins one.
    pub(crate) protocol: Option<String>,
    #[cfg(feature = "oauth")]
    oauth: Option<crate::OAuthOptions>,
}

/// How a response stream that breaks mid-call is resumed when the options name no
/// policy: five more tries over about six seconds, then the call fails rather than
/// waiting forever for a server that is gone.
const STREAM_RETRY: RetryPolicy = RetryPolicy {
    max_attempts: 6,
    initial_backoff: Duration::from_millis(250),
    max_backoff: Duration::from_secs(2),
    ..RetryPolicy::DEFAULT
};

/// The workspace's [`RetryPolicy`] as rmcp's policy for resuming a broken stream.
#[derive(Debug)]
struct StreamRetry(RetryPolicy);

impl SseRetryPolicy for StreamRetry {
    /// `done` is how many times the stream was resumed already.
    fn retry(&self, done: usize) -> Option<Duration> {
        let retry = u32::try_from(done).ok()?.checked_add(1)?;
        (retry < self.0.max_attempts).then(|| self.0.backoff(retry))
    }
}

#[derive(Clone)]
enum Token {
    Fixed(String),
    Provided(Arc<Provide>),
}

impl HttpClientOptions {
    /// No extra headers, no token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Send `name: value` with every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Send `Authorization: Bearer <token>` with every request.
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(Token::Fixed(token.into()));
        self
    }

    /// Ask `provider` for the bearer token before every request, so a token that
    /// expires can be refreshed (the provider caches it as it sees fit). A provider
    /// that fails sends the request without a token, and the server's refusal fails
    /// it; the provider's error is logged.
    pub fn with_token_provider<F, Fut>(mut self, provider: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        self.token = Some(Token::Provided(Arc::new(move || Box::pin(provider()))));
        self
    }

    /// Answer the server's form elicitations (a tool asking the user for input) with
    /// `answer`: it gets the message and the requested JSON schema, and returns the
    /// content to send, or `None` to decline. Without it the client declares no
    /// elicitation support, and servers do not ask.
    pub fn with_elicitation<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Option<Map<String, Value>>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |message, schema| {
            Box::pin(answer(message, schema))
        }));
        self
    }

    /// Resume a response stream that breaks mid-call by `policy` (the same
    /// [`RetryPolicy`] the model clients use). By default a stream is resumed five times
    /// over about six seconds, then the call fails.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Speak protocol `version` only, such as `"2025-11-25"`, instead of the newest the
    /// server offers: `2026-07-28` and later by `server/discover`, older versions by
    /// the `initialize` handshake. By default the client discovers and falls back to
    /// `initialize` (2025-11-25) for servers that predate discovery. A server that
    /// does not speak `version` fails the connection, naming the versions it speaks.
    /// For servers whose features differ by version, and for tests of one version.
    pub fn with_protocol_version(mut self, version: &str) -> Self {
        self.protocol = Some(version.to_owned());
        self
    }

    /// Send requests through the application's own `client` (its proxy, timeouts, TLS
    /// roots) instead of one built for this connection. Configure it as a bearer token
    /// needs: without following redirects to other servers, which reqwest does by
    /// default.
    pub fn with_http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Obtain access tokens by OAuth 2.1 as `oauth` says, when the server asks for
    /// one (a `401`), in place of a fixed or provided bearer token (which this
    /// overrides). MCP requests still go through [`with_http_client`](Self::with_http_client)'s
    /// client when one is given; the OAuth requests (metadata, registration, token) go
    /// through clients of their own.
    #[cfg(feature = "oauth")]
    pub fn with_oauth(mut self, oauth: crate::OAuthOptions) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The transport for `config`, with these options applied.
    pub(crate) fn transport(
        &self,
        mut config: StreamableHttpClientTransportConfig,
    ) -> Result<StreamableHttpClientTransport<AuthorizedClient>, String> {
        for (name, value) in &self.headers {
            let header = HeaderName::try_from(name.as_str())
                .map_err(|e| format!("invalid header name `{name}`: {e}"))?;
            let value = HeaderValue::try_from(value.as_str())
                .map_err(|e| format!("invalid value for header `{name}`: {e}"))?;
            config.custom_headers.insert(header, value);
        }
        config.retry_config = Arc::new(StreamRetry(self.retry.unwrap_or(STREAM_RETRY)));
        let http = match &self.http {
            Some(http) => http.clone(),
            None => crate::tls::http_client_builder()?
                // A bearer token must not follow a redirect to another server.
                .redirect(reqwest::redirect::Policy::none())
                .pool_max_idle_per_host(0)
                .build()
                .map_err(|e| format!("the HTTP client could not be built: {e}"))?,
        };
        #[cfg(feature = "oauth")]
        let oauth = match &self.oauth {
            Some(oauth) => Some(Arc::new(super::oauth::OAuthSession::new(
                oauth.clone(),
                &config.uri,
                http.clone(),
            )?)),
            None => None,
        };
        let client = AuthorizedClient {
            http,
            token: self.token.clone(),
            #[cfg(feature = "oauth")]
            oauth,
        };
        Ok(StreamableHttpClientTransport::with_client(client, config))
    }
}

impl fmt::Debug for HttpClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header values and tokens may be secrets: names only.
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        let token = match &self.token {
            None => "none",
            Some(Token::Fixed(_)) => "fixed",
            Some(Token::Provided(_)) => "provider",
        };
        let mut debug = f.debug_struct("HttpClientOptions");
        debug
            .field("headers", &names)
            .field("token", &token)
            .field("elicitation", &self.elicit.is_some())
            .field("retry", &self.retry)
            .field("protocol", &self.protocol)
            .field("own_http_client", &self.http.is_some());
        #[cfg(feature = "oauth")]
        debug.field("oauth", &self.oauth);
        debug.finish()
    }
}

/// reqwest, with the bearer token of each request from [`HttpClientOptions`].
#[derive(Clone)]
pub(crate) struct AuthorizedClient {
    http: reqwest::Client,
    token: Option<Token>,
    /// OAuth in place of `token`, when the options ask for it.
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<super::oauth::OAuthSession>>,
}

impl AuthorizedClient {
    async fn token(&self, given: Option<String>) -> Option<String> {
        match &self.token {
            None => given,
            Some(Token::Fixed(token)) => Some(token.clone()),
            Some(Token::Provided(provide)) => match provide().await {
                Ok(token) => Some(token),
                Err(error) => {
                    tracing::warn!(%error, "the MCP bearer-token provider failed");
                    None
                }
            },
        }
    }
}

type Headers = HashMap<HeaderName, HeaderValue>;
type PostResult = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;
type StreamResult =
    Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for AuthorizedClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
    ) -> PostResult {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth
                .send(|c| {
                    let (uri, message) = (uri.clone(), message.clone());
                    let (session_id, headers) = (session_id.clone(), headers.clone());
                    async move {
                        c.post_message(uri, message, session_id, None, headers)
                            .await
                    }
                })
                .await;
        }
        let auth = self.token(auth).await;
        self.http
            .post_message(uri, message, session_id, auth, headers)
            .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> PostResult {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth
                .send(|c| {
                    let (uri, message) = (uri.clone(), message.clone());
                    let (session_id, headers) = (session_id.clone(), headers.clone());
                    async move {
                        c.post_message_with_max_sse_event_size(
                            uri,
                            message,
                            session_id,
                            None,
                            headers,
                            max_sse_event_size,
                        )
                        .await
                    }
                })
                .await;
        }
        let auth = self.token(auth).await;
        self.http
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth,
                headers,
                max_sse_event_size,
            )
            .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> PostResult {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth
                .send(|c| {
                    let (uri, message) = (uri.clone(), message.clone());
                    let (session_id, headers) = (session_id.clone(), headers.clone());
                    async move {
                        c.post_message_with_response_limits(
                            uri, message, session_id, None, headers, limits,
                        )
                        .await
                    }
                })
                .await;
        }
        let auth = self.token(auth).await;
        self.http
            .post_message_with_response_limits(uri, message, session_id, auth, headers, limits)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth
                .send(|c| {
                    let (uri, session_id, headers) =
                        (uri.clone(), session_id.clone(), headers.clone());
                    async move { c.delete_session(uri, session_id, None, headers).await }
                })
                .await;
        }
        let auth = self.token(auth).await;
        self.http
            .delete_session(uri, session_id, auth, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
    ) -> StreamResult {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth
                .send(|c| {
                    let (uri, session_id) = (uri.clone(), session_id.clone());
                    let (last_event_id, headers) = (last_event_id.clone(), headers.clone());
                    async move {
                        c.get_stream(uri, session_id, last_event_id, None, headers)
                            .await
                    }
                })
                .await;
        }
        let auth = self.token(auth).await;
        self.http
            .get_stream(uri, session_id, last_event_id, auth, headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: Headers,
        max_sse_event_size: usize,
    ) -> StreamResult {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return oauth
                .send(|c| {
                    let (uri, session_id) = (uri.clone(), session_id.clone());
                    let (last_event_id, headers) = (last_event_id.clone(), headers.clone());
                    async move {
                        c.get_stream_with_max_sse_event_size(
                            uri,
                            session_id,
                            last_event_id,
                            None,
                            headers,
                            max_sse_event_size,
                        )
                        .await
                    }
                })
                .await;
        }
        let auth = self.token(auth).await;
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth,
                headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_stream_is_resumed_as_the_retry_policy_says_then_given_up() {
        let policy = RetryPolicy {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(300),
            ..RetryPolicy::DEFAULT
        };
        let retry = StreamRetry(policy);
        let waits: Vec<Option<Duration>> = (0..5).map(|done| retry.retry(done)).collect();
        // Three resumptions (four attempts in all), each jittered down by at most a
        // quarter of its backoff: 100, 200, then 300 ms (capped).
        for (wait, full) in waits.iter().zip([100, 200, 300]) {
            let wait = wait.expect("a resumption left").as_millis();
            assert!(
                (full * 3 / 4..=full).contains(&wait),
                "{wait} ms for {full}"
            );
        }
        assert_eq!(waits[3..], [None, None]);
        assert_eq!(StreamRetry(RetryPolicy::NEVER).retry(0), None);
        assert_eq!(retry.retry(usize::MAX), None);
    }

    #[test]
    fn the_default_resumes_five_times_within_about_six_seconds() {
        let retry = StreamRetry(STREAM_RETRY);
        let waits: Vec<Duration> = (0..).map_while(|done| retry.retry(done)).collect();
        assert_eq!(waits.len(), 5);
        assert!(waits.iter().sum::<Duration>() <= Duration::from_millis(5_750));
    }
}

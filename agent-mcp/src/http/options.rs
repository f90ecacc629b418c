//! [`HttpOptions`]: who may reach the HTTP endpoint, the limits that keep one client
//! from exhausting it, and authentication.

use super::auth::HttpAuth;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How the HTTP endpoint is served: who may reach it, the limits that keep one client
/// from exhausting it, and authentication. The defaults are safe for a server on
/// loopback; a public deployment names its own hosts and origins.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The endpoint's path within the router (`/mcp`).
    pub path: String,
    /// Accepted `Host` headers, with or without a port (DNS-rebinding protection).
    /// Default: `localhost`, `127.0.0.1`, `::1`. Empty accepts any host.
    pub allowed_hosts: Vec<String>,
    /// Accepted browser `Origin`s, as `scheme://host:port` (`:*` for any port).
    /// Default: loopback origins on any port. A request with another `Origin`,
    /// `null` included, is refused with 403; requests without one (non-browser
    /// clients) pass.
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted (413 beyond it). Default 4 MiB.
    pub max_body_bytes: usize,
    /// The most JSON values (arrays, objects, members, items) a request body may hold
    /// (413 beyond it). A parsed value costs tens of bytes however short its text, so
    /// this bounds what a body becomes in memory. Default 32,768.
    pub max_json_values: usize,
    /// Requests answered at once; more get 503 with `Retry-After`. A request counts
    /// until its response (a streamed one included) has been sent. Default 256.
    pub max_concurrent_requests: usize,
    /// Live sessions at once; a new client beyond them gets 503 with `Retry-After`.
    /// Default 1,024.
    pub max_sessions: usize,
    /// A session unused this long is closed. Default 5 minutes.
    pub session_idle_timeout: Duration,
    /// The longest a request may take, its streamed response included; its response
    /// then ends (503 if nothing was sent yet) and its call is cancelled. Default 10
    /// minutes.
    pub request_timeout: Duration,
    /// The time a connection has to send a request's headers, and the longest an idle
    /// connection is kept between requests: slow and idle connections are closed, so
    /// they cannot hold the server's connections. Default 10 seconds.
    pub header_read_timeout: Duration,
    /// The `Retry-After` sent with a 503. Default 1 second.
    pub retry_after: Duration,
    /// Serve without sessions: every request stands alone, so any instance behind a
    /// load balancer can answer it. Default off.
    pub stateless: bool,
    /// Bearer-token authentication; `None` (the default) serves everyone.
    pub auth: Option<HttpAuth>,
    /// Cancelling this ends every session at once; the standalone server does it after
    /// its grace period.
    pub cancel: CancellationToken,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            allowed_hosts: ["localhost", "127.0.0.1", "::1"]
                .map(str::to_owned)
                .to_vec(),
            allowed_origins: ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .flat_map(|host| ["http", "https"].map(|scheme| format!("{scheme}://{host}:*")))
                .collect(),
            max_body_bytes: crate::server::MAX_MESSAGE_BYTES,
            max_json_values: 32 * 1024,
            max_concurrent_requests: 256,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(300),
            request_timeout: Duration::from_secs(600),
            header_read_timeout: Duration::from_secs(10),
            retry_after: Duration::from_secs(1),
            stateless: false,
            auth: None,
            cancel: CancellationToken::new(),
        }
    }
}

impl HttpOptions {
    /// Accept requests whose `Host` is one of `hosts` (with or without a port).
    pub fn with_allowed_hosts(
        mut self,
        hosts: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Accept browser requests from `origins` (`https://app.example.com`, or with
    /// `:*` for any port) instead of loopback origins.
    pub fn with_allowed_origins(
        mut self,
        origins: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Refuse request bodies over `bytes`.
    pub fn with_max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Refuse request bodies of more than `values` JSON values.
    pub fn with_max_json_values(mut self, values: usize) -> Self {
        self.max_json_values = values;
        self
    }

    /// Answer at most `requests` requests at once.
    pub fn with_max_concurrent_requests(mut self, requests: usize) -> Self {
        self.max_concurrent_requests = requests;
        self
    }

    /// Keep at most `sessions` sessions alive at once.
    pub fn with_max_sessions(mut self, sessions: usize) -> Self {
        self.max_sessions = sessions;
        self
    }

    /// Close a session unused for `idle`.
    pub fn with_session_idle_timeout(mut self, idle: Duration) -> Self {
        self.session_idle_timeout = idle;
        self
    }

    /// End a request that takes longer than `timeout`.
    pub fn with_request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Close a connection that takes longer than `timeout` to send a request's headers,
    /// or stays idle that long between requests.
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Serve without sessions (see [`stateless`](Self::stateless)).
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Require a bearer token every request, checked by `auth`.
    pub fn with_auth(mut self, auth: HttpAuth) -> Self {
        self.auth = Some(auth);
        self
    }
}

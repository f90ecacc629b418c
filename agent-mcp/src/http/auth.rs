//! The HTTP endpoint as an OAuth 2.1 resource server: bearer tokens checked by a
//! [`TokenValidator`], the caller's [`Principal`] handed to tools, tools that need
//! scopes hidden from callers without them, sessions bound to the principal that
//! opened them.

use crate::server::access::ToolScopes;
use axum::extract::{OriginalUri, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};
use toolwright_core::{Principal, ToolSet, async_trait};

/// Why a bearer token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthError {
    /// The token is not one this server accepts: unknown, malformed, badly signed,
    /// expired, or issued for another audience or by another issuer. Answered with 401.
    InvalidToken(String),
    /// The token could not be checked now (the issuer's keys could not be fetched).
    /// Answered with 503, so the client retries later.
    Unavailable(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidToken(why) => write!(f, "invalid token: {why}"),
            Self::Unavailable(why) => write!(f, "the token cannot be checked now: {why}"),
        }
    }
}

impl std::error::Error for AuthError {}

/// Checks a bearer token and says who presented it.
///
/// Implement it to accept tokens your own way (introspection, a database); the crate
/// has [`StaticTokens`] and [`JwtValidator`].
#[async_trait]
pub trait TokenValidator: Send + Sync + 'static {
    /// The principal `token` stands for, or why it is not accepted.
    async fn validate(&self, token: &str) -> Result<Principal, AuthError>;
}

/// Fixed bearer tokens, each standing for a principal: for development, tests, and
/// services called by a few known clients.
#[derive(Clone, Default)]
pub struct StaticTokens {
    tokens: Vec<(String, Principal)>,
}

impl StaticTokens {
    /// No token accepted yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `token` as `principal`.
    pub fn with_token(mut self, token: impl Into<String>, principal: Principal) -> Self {
        self.tokens.push((token.into(), principal));
        self
    }
}

impl fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the tokens themselves.
        f.debug_struct("StaticTokens")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

#[async_trait]
impl TokenValidator for StaticTokens {
    async fn validate(&self, token: &str) -> Result<Principal, AuthError> {
        // Every token is compared in full, so the time taken does not tell how much of
        // a guess was right.
        let mut found = None;
        for (known, principal) in &self.tokens {
            if constant_time_eq(known.as_bytes(), token.as_bytes()) {
                found = Some(principal);
            }
        }
        found
            .cloned()
            .ok_or_else(|| AuthError::InvalidToken("unknown token".to_owned()))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// JWT access tokens signed by an authorization server: checked against the keys it
/// publishes (a JWKS URL, fetched and cached), and for issuer, audience and expiry.
///
/// Only asymmetric signatures are accepted (RS*, PS*, ES*, EdDSA): a resource server
/// holds no secret to check an HMAC with. The principal's subject is the `sub` claim,
/// its scopes the `scope` (space-separated) or `scp` claim.
pub struct JwtValidator {
    jwks_url: String,
    issuer: String,
    audience: String,
    refresh_after: Duration,
    http: Result<reqwest::Client, String>,
    cache: tokio::sync::Mutex<Option<CachedKeys>>,
}

struct CachedKeys {
    keys: JwkSet,
    fetched: Instant,
}

/// How soon the keys may be fetched again for a token whose key id is not among them:
/// an attacker sending made-up key ids must not turn each request into a fetch.
const MIN_REFETCH: Duration = Duration::from_secs(30);

impl JwtValidator {
    /// Tokens issued by `issuer` for `audience` (this server's resource URL, as the
    /// authorization server puts it in `aud`), signed with a key from `jwks_url`.
    pub fn new(
        jwks_url: impl Into<String>,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Self {
        Self {
            jwks_url: jwks_url.into(),
            issuer: issuer.into(),
            audience: audience.into(),
            refresh_after: Duration::from_secs(600),
            http: crate::tls::http_client(),
            cache: tokio::sync::Mutex::new(None),
        }
    }

    /// Fetch the keys again after `ttl` (10 minutes by default), so rotated keys are
    /// picked up.
    pub fn with_cache_ttl(mut self, ttl: Duration) -> Self {
        self.refresh_after = ttl;
        self
    }

    async fn key_for(&self, kid: Option<&str>) -> Result<DecodingKey, AuthError> {
        let mut cache = self.cache.lock().await;
        let stale = cache
            .as_ref()
            .is_none_or(|c| c.fetched.elapsed() >= self.refresh_after);
        let missing = cache.as_ref().is_some_and(|c| find(&c.keys, kid).is_none())
            && cache
                .as_ref()
                .is_some_and(|c| c.fetched.elapsed() >= MIN_REFETCH);
        if stale || missing {
            let keys = self.fetch().await?;
            *cache = Some(CachedKeys {
                keys,
                fetched: Instant::now(),
            });
        }
        let keys = &cache.as_ref().expect("filled above").keys;
        let jwk = find(keys, kid).ok_or_else(|| {
            AuthError::InvalidToken(match kid {
                Some(kid) => format!("no key `{kid}` among the issuer's keys"),
                None => "the token names no key (`kid`) and the issuer has several".to_owned(),
            })
        })?;
        DecodingKey::from_jwk(jwk)
            .map_err(|e| AuthError::InvalidToken(format!("the issuer's key is unusable: {e}")))
    }

    async fn fetch(&self) -> Result<JwkSet, AuthError> {
        let unavailable =
            |e: &dyn fmt::Display| AuthError::Unavailable(format!("{}: {e}", self.jwks_url));
        let http = self
            .http
            .as_ref()
            .map_err(|e| AuthError::Unavailable(e.clone()))?;
        let response = http
            .get(&self.jwks_url)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| unavailable(&e))?;
        if !response.status().is_success() {
            return Err(unavailable(&response.status()));
        }
        let body = response.bytes().await.map_err(|e| unavailable(&e))?;
        serde_json::from_slice(&body).map_err(|e| unavailable(&e))
    }
}

fn find<'a>(keys: &'a JwkSet, kid: Option<&str>) -> Option<&'a jsonwebtoken::jwk::Jwk> {
    match kid {
        Some(kid) => keys.find(kid),
        None if keys.keys.len() == 1 => keys.keys.first(),
        None => None,
    }
}

impl fmt::Debug for JwtValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtValidator")
            .field("jwks_url", &self.jwks_url)
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl TokenValidator for JwtValidator {
    async fn validate(&self, token: &str) -> Result<Principal, AuthError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| AuthError::InvalidToken(format!("not a JWT: {e}")))?;
        if matches!(
            header.alg,
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
        ) {
            return Err(AuthError::InvalidToken(
                "HMAC-signed tokens are not accepted; expected an asymmetric signature".to_owned(),
            ));
        }
        let key = self.key_for(header.kid.as_deref()).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_audience(&[&self.audience]);
        validation.set_issuer(&[&self.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| AuthError::InvalidToken(jwt_error(&e)))?;
        Ok(principal_from_claims(data.claims))
    }
}

fn jwt_error(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
        ErrorKind::ImmatureSignature => "the token is not valid yet".to_owned(),
        ErrorKind::InvalidAudience => "the token was issued for another audience".to_owned(),
        ErrorKind::InvalidIssuer => "the token was issued by another issuer".to_owned(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        _ => error.to_string(),
    }
}

fn principal_from_claims(claims: Map<String, Value>) -> Principal {
    let subject = claims
        .get("sub")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let scopes: BTreeSet<String> = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(scopes)) => scopes.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(scopes)) => scopes
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    };
    Principal {
        subject,
        scopes,
        claims,
    }
}

/// How the HTTP endpoint authenticates: the validator, what the protected-resource
/// metadata says, and which tools need which scopes.
#[derive(Clone)]
pub struct HttpAuth {
    validator: Arc<dyn TokenValidator>,
    authorization_servers: Vec<String>,
    resource: Option<String>,
    /// Whether the proxy's `Forwarded` / `X-Forwarded-*` headers say how clients reach
    /// this server.
    trust_forwarded: bool,
    scopes: Arc<ToolScopes>,
    /// Tools given scopes before they are served, exempt from the check that the
    /// server serves every tool named.
    added_later: BTreeSet<String>,
}

impl HttpAuth {
    /// Every request must carry a bearer token that `validator` accepts.
    pub fn new(validator: impl TokenValidator) -> Self {
        Self {
            validator: Arc::new(validator),
            authorization_servers: Vec::new(),
            resource: None,
            trust_forwarded: false,
            scopes: Arc::default(),
            added_later: BTreeSet::new(),
        }
    }

    /// The authorization server that issues tokens for this resource, listed in the
    /// protected-resource metadata (RFC 9728) so clients know where to get a token.
    pub fn with_authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// This endpoint's public URL (for example `https://api.example.com/mcp`), as the
    /// metadata names the resource and as the `401` challenge points at the metadata.
    /// By default it is worked out from each request: `http://`, its `Host` and path,
    /// which is wrong behind TLS termination or a proxy that rewrites the host, unless
    /// [`trust_forwarded_headers`](Self::trust_forwarded_headers) is set. A public
    /// deployment should set it: the URL is also the audience clients ask tokens for.
    pub fn with_resource(mut self, url: impl Into<String>) -> Self {
        self.resource = Some(url.into());
        self
    }

    /// Work out the URL clients reach this server at (when
    /// [`with_resource`](Self::with_resource) does not give it) from the headers a
    /// reverse proxy adds: the first element of `Forwarded` (RFC 7239, its `proto` and
    /// `host`), else `X-Forwarded-Proto` and `X-Forwarded-Host`. A scheme other than
    /// `http` or `https`, or a host that is not a plain `name[:port]`, is ignored.
    ///
    /// Only behind a proxy that sets these headers itself, replacing what clients
    /// send: otherwise a client chooses where the `401` challenge sends other clients.
    pub fn trust_forwarded_headers(mut self) -> Self {
        self.trust_forwarded = true;
        self
    }

    /// The tool named `tool` is listed and callable only for principals granted every
    /// one of `scopes`; for the others it does not exist (as a Hidden tool).
    ///
    /// `tool` must be a tool the server serves when its router is built: a name it
    /// does not serve (a typo, which would leave the real tool open to everyone) makes
    /// [`McpServer::try_router_with`](crate::McpServer::try_router_with) an
    /// [`UnknownScopedTool`] error and [`McpHttpServer::run`](crate::McpHttpServer::run)
    /// an `InvalidInput` error. For a tool added while the server runs, use
    /// [`require_scopes_for_tool_added_later`](Self::require_scopes_for_tool_added_later).
    pub fn require_scopes(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let tool = tool.into();
        self.added_later.remove(&tool);
        Arc::make_mut(&mut self.scopes).require(tool, scopes.into_iter().map(Into::into).collect());
        self
    }

    /// As [`require_scopes`](Self::require_scopes), for a tool the server does not
    /// serve yet and will be given later ([`McpServer::add_tool`](crate::McpServer::add_tool)):
    /// the name is not checked against the tools served when the router is built, so
    /// spell it with care.
    pub fn require_scopes_for_tool_added_later(
        self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let tool = tool.into();
        let mut auth = self.require_scopes(tool.clone(), scopes);
        auth.added_later.insert(tool);
        auth
    }

    /// Every tool given scopes by [`require_scopes`](Self::require_scopes) is one of
    /// `served`.
    pub(crate) fn check_scoped_tools(&self, served: &ToolSet) -> Result<(), UnknownScopedTool> {
        let names: BTreeSet<&str> = served.iter().map(|tool| tool.name()).collect();
        let mut unknown: Vec<String> = self
            .scopes
            .tools()
            .filter(|tool| !names.contains(tool) && !self.added_later.contains(*tool))
            .map(str::to_owned)
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        unknown.sort_unstable();
        Err(UnknownScopedTool {
            unknown,
            served: names.into_iter().map(str::to_owned).collect(),
        })
    }
}

/// [`HttpAuth::require_scopes`] named tools the server does not serve. Serving anyway
/// would leave the tool the name was meant for open to every caller, so the router is
/// not built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScopedTool {
    /// The names given scopes that no served tool has, in order.
    pub unknown: Vec<String>,
    /// The names of the tools the server serves, in order.
    pub served: Vec<String>,
}

impl fmt::Display for UnknownScopedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = |names: &[String]| {
            names
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        write!(
            f,
            "scopes are required for {}, which this server does not serve; expected the name \
             of a served tool ({}), or `require_scopes_for_tool_added_later` for a tool added \
             while the server runs",
            quoted(&self.unknown),
            if self.served.is_empty() {
                "it serves none".to_owned()
            } else {
                quoted(&self.served)
            }
        )
    }
}

impl std::error::Error for UnknownScopedTool {}

impl fmt::Debug for HttpAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpAuth")
            .field("authorization_servers", &self.authorization_servers)
            .field("resource", &self.resource)
            .field("trust_forwarded", &self.trust_forwarded)
            .field("scopes", &self.scopes)
            .field("added_later", &self.added_later)
            .finish_non_exhaustive()
    }
}

/// The authentication middleware's state. Who opened each session is recorded on the
/// session's own entry in the session table, so it lives and ends with the session.
pub(crate) struct AuthState {
    pub(crate) auth: HttpAuth,
}

impl AuthState {
    pub(crate) fn new(auth: HttpAuth) -> Self {
        Self { auth }
    }

    /// Admits a request whose bearer token is valid, with its principal (and the
    /// tools' scope rules) in the request's extensions, and returns the principal's
    /// subject (the owner of a session the request opens). A session is usable only by
    /// the principal that opened it: `owner` is the subject that opened the live
    /// session the request names, if any. Otherwise the 401 (or 503) to answer.
    pub(crate) async fn check(
        &self,
        request: &mut Request,
        owner: Option<&str>,
    ) -> Result<String, Response> {
        let auth = &self.auth;
        let token = match bearer(request.headers()) {
            Ok(token) => token,
            Err(why) => return Err(unauthorized(request, auth, why, false)),
        };
        let principal = match self.auth.validator.validate(token).await {
            Ok(principal) => principal,
            Err(AuthError::InvalidToken(why)) => {
                return Err(unauthorized(request, auth, &why, true));
            }
            Err(error @ AuthError::Unavailable(_)) => {
                let mut response =
                    (StatusCode::SERVICE_UNAVAILABLE, error.to_string()).into_response();
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                return Err(response);
            }
        };
        if owner.is_some_and(|owner| owner != principal.subject) {
            return Err(unauthorized(
                request,
                auth,
                "the session was opened by another principal",
                true,
            ));
        }
        let subject = principal.subject.clone();
        request.extensions_mut().insert(principal);
        request.extensions_mut().insert(self.auth.scopes.clone());
        Ok(subject)
    }
}

fn bearer(headers: &HeaderMap) -> Result<&str, &'static str> {
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or("no bearer token: send `Authorization: Bearer <token>`")?;
    let value = value
        .to_str()
        .map_err(|_| "the Authorization header is not text")?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or("expected `Authorization: Bearer <token>`")?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err("expected `Authorization: Bearer <token>`");
    }
    Ok(token.trim())
}

/// 401 with the challenge MCP clients follow to find the authorization server.
fn unauthorized(request: &Request, auth: &HttpAuth, why: &str, invalid: bool) -> Response {
    let metadata = metadata_url(request, auth);
    let mut challenge = format!("Bearer resource_metadata=\"{metadata}\"");
    if invalid {
        let why = why.replace(['"', '\\'], "'");
        challenge.push_str(&format!(
            ", error=\"invalid_token\", error_description=\"{why}\""
        ));
    }
    let mut response = (StatusCode::UNAUTHORIZED, format!("Unauthorized: {why}")).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// Where this endpoint's protected-resource metadata is served: beside the endpoint,
/// under the prefix the application mounted the router at.
fn metadata_url(request: &Request, auth: &HttpAuth) -> String {
    let path = request.uri().path();
    let original = request
        .extensions()
        .get::<OriginalUri>()
        .map_or(path, |uri| uri.0.path());
    let prefix = original.strip_suffix(path).unwrap_or("");
    format!(
        "{}{prefix}{WELL_KNOWN}{path}",
        origin_of(request.headers(), auth)
    )
}

/// `scheme://host[:port]` of this server as clients reach it: the configured resource
/// URL's, else what a trusted proxy's headers say, else plain HTTP at the request's
/// `Host`.
fn origin_of(headers: &HeaderMap, auth: &HttpAuth) -> String {
    if let Some(resource) = &auth.resource
        && let Some((scheme, rest)) = resource.split_once("://")
    {
        let authority = rest.split('/').next().unwrap_or(rest);
        return format!("{scheme}://{authority}");
    }
    let (mut scheme, mut host) = (None, None);
    if auth.trust_forwarded {
        (scheme, host) = forwarded(headers);
    }
    let host = host.unwrap_or_else(|| {
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost")
    });
    format!("{}://{host}", scheme.unwrap_or("http"))
}

/// The scheme and host a reverse proxy says the client used: `Forwarded`'s first
/// element, else `X-Forwarded-Proto` / `X-Forwarded-Host` (their first values). Values
/// that are not a scheme this endpoint speaks, or not a plain authority, are ignored.
fn forwarded(headers: &HeaderMap) -> (Option<&'static str>, Option<&str>) {
    let text = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let (mut proto, mut host) = (None, None);
    if let Some(value) = text("forwarded") {
        // Elements are comma-separated, one per proxy; the first is the client's side.
        let element = value.split(',').next().unwrap_or("");
        for pair in element.split(';') {
            let Some((key, value)) = pair.trim().split_once('=') else {
                continue;
            };
            let value = value.trim().trim_matches('"');
            if key.trim().eq_ignore_ascii_case("proto") {
                proto = proto.or(Some(value));
            } else if key.trim().eq_ignore_ascii_case("host") {
                host = host.or(Some(value));
            }
        }
    }
    let first_of = |name: &str| text(name).and_then(|v| v.split(',').next()).map(str::trim);
    let proto = proto.or_else(|| first_of("x-forwarded-proto"));
    let host = host.or_else(|| first_of("x-forwarded-host"));
    let scheme = proto.and_then(|proto| {
        if proto.eq_ignore_ascii_case("https") {
            Some("https")
        } else if proto.eq_ignore_ascii_case("http") {
            Some("http")
        } else {
            None
        }
    });
    (scheme, host.filter(|host| plain_authority(host)))
}

/// `name[:port]` or `[v6][:port]`: nothing that would change a URL's meaning (paths,
/// user info, quotes, spaces).
fn plain_authority(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 255
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}

/// The RFC 9728 well-known path.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The protected-resource metadata document (RFC 9728).
pub(crate) async fn resource_metadata(
    State((auth, endpoint)): State<(HttpAuth, String)>,
    headers: HeaderMap,
    OriginalUri(original): OriginalUri,
) -> Response {
    let resource = auth.resource.clone().unwrap_or_else(|| {
        // The endpoint sits where this document does, less the well-known part.
        let here = original.path();
        let prefix = here
            .find(WELL_KNOWN)
            .map_or("", |at| &here[..at])
            .trim_end_matches('/');
        format!("{}{prefix}{endpoint}", origin_of(&headers, &auth))
    });
    let scopes: BTreeSet<&String> = auth.scopes.all().collect();
    let document = json!({
        "resource": resource,
        "authorization_servers": auth.authorization_servers,
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        document.to_string(),
    )
        .into_response()
}

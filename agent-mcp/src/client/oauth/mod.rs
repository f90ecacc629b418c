//! OAuth 2.1 for [`McpClient::connect_http_with`](crate::McpClient::connect_http_with),
//! as the MCP authorization spec asks of a client, on rmcp's `auth` module: the first
//! `401` starts discovery (protected-resource metadata, then authorization-server or
//! OpenID metadata, with the 2025-03-26 fallbacks), scope selection, client
//! registration (pre-registered, a client ID metadata document, or dynamic
//! registration), the authorization-code grant with PKCE, the client-credentials
//! grant (with a secret or a signed JWT assertion), enterprise-managed authorization,
//! or a workload identity token (JWT bearer grant), and the token endpoint's
//! authentication method; DPoP-bound tokens when asked ([`OAuthOptions::with_dpop`]);
//! a `403 insufficient_scope`
//! asks for the larger scope, a bounded number of times. The URLs the MCP server hands
//! out are followed only to public addresses, unless the application allows more
//! ([`OAuthOptions::allow_loopback`], [`OAuthOptions::allow_private_networks`]).

mod dpop;
mod reach;
mod resource;

use self::dpop::{Dpop, DpopKey, NONCE_HEADER, PROOF_HEADER, demands_nonce};
use self::reach::{Allowed, GuardedResolver, ReachGuard};
use self::resource::ResourceHttp;
use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, InMemoryCredentialStore,
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest, ScopeUpgradeConfig, StoredCredentials,
};
use rmcp::transport::streamable_http_client::{InsufficientScopeError, StreamableHttpError};
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Opens an authorization URL and returns the URL the authorization server redirected
/// back to (the redirect URI with `code` and `state`).
type Visit = dyn Fn(String) -> BoxFuture<'static, Result<String, String>> + Send + Sync;

/// How long one OAuth request (metadata, registration, token) may take.
const OAUTH_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed while fetching metadata.
const MAX_REDIRECTS: usize = 10;
/// Largest OAuth response read: metadata and tokens are small.
const MAX_BODY_BYTES: usize = 1024 * 1024;

/// How the client obtains its access tokens: the grant, the client's identity, the
/// scopes. Give it to [`HttpClientOptions::with_oauth`](crate::HttpClientOptions::with_oauth).
///
/// Authorization code, the user's flow: `visit` gets the authorization URL (to open in
/// a browser, say) and answers with the URL the authorization server redirected back
/// to; the client checks its `state` and exchanges its `code`, with PKCE (S256).
///
/// ```no_run
/// # async fn demo() -> toolwright_core::AgentResult<()> {
/// use toolwright_mcp::{HttpClientOptions, McpClient, OAuthOptions};
/// let oauth = OAuthOptions::authorization_code("http://127.0.0.1:8400/callback", |url| async move {
///     println!("open {url} and paste the address you were sent back to");
///     let mut line = String::new();
///     std::io::stdin().read_line(&mut line).map_err(|e| e.to_string())?;
///     Ok(line.trim().to_owned())
/// })
/// .with_client_name("my agent");
/// let options = HttpClientOptions::new().with_oauth(oauth);
/// let client = McpClient::connect_http_with("https://tools.example.com/mcp", &options).await?;
/// # Ok(()) }
/// ```
///
/// Client credentials, for a service acting as itself:
/// `OAuthOptions::client_credentials("my-service", "its-secret")`, or without a secret,
/// authenticating with a JWT signed by its private key:
/// `OAuthOptions::client_credentials_jwt("my-service", &key_pem, "ES256")?`.
///
/// A workload whose platform issues it an identity token (Kubernetes, a cloud's
/// workload identity federation) exchanges that by the JWT bearer grant:
/// `OAuthOptions::workload_identity(WorkloadToken::File(path), None)`.
///
/// Any of these can bind its tokens to a key the client holds (DPoP), so that a stolen
/// token is useless without the key: `.with_dpop()?`.
#[derive(Clone)]
pub struct OAuthOptions {
    grant: Grant,
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    client_name: Option<String>,
    scopes: Vec<String>,
    max_scope_upgrades: u32,
    reach: Allowed,
    /// The key DPoP proofs are signed with, when the client proves possession.
    dpop: Option<Arc<DpopKey>>,
}

#[derive(Clone)]
enum Grant {
    AuthorizationCode {
        redirect_uri: String,
        visit: Arc<Visit>,
    },
    ClientCredentials,
    /// Client credentials, the client authenticated by a JWT it signs (RFC 7523).
    ClientCredentialsJwt(Arc<AssertionKey>),
    EnterpriseManaged(EnterpriseIdentity),
    /// The JWT bearer grant (RFC 7523) with a workload identity token.
    WorkloadIdentity(WorkloadToken),
}

/// Where a workload's identity token comes from, for
/// [`OAuthOptions::workload_identity`]: the token itself, a file the platform keeps
/// fresh (read at each authorization), or a function that fetches it.
#[derive(Clone)]
pub enum WorkloadToken {
    /// The token, as issued.
    Token(String),
    /// A file holding the token (surrounding whitespace ignored), such as the projected
    /// service-account token of a Kubernetes pod.
    File(std::path::PathBuf),
    /// A function that fetches a current token.
    Provider(Arc<dyn Fn() -> BoxFuture<'static, Result<String, String>> + Send + Sync>),
}

impl WorkloadToken {
    /// A token from `fetch`, called at each authorization.
    pub fn provider<F, Fut>(fetch: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        Self::Provider(Arc::new(move || Box::pin(fetch())))
    }

    async fn get(&self) -> Result<String, String> {
        let token = match self {
            Self::Token(token) => token.clone(),
            Self::File(path) => tokio::fs::read_to_string(path).await.map_err(|e| {
                format!(
                    "reading the workload identity token {}: {e}",
                    path.display()
                )
            })?,
            Self::Provider(fetch) => fetch()
                .await
                .map_err(|e| format!("fetching the workload identity token: {e}"))?,
        };
        let token = token.trim();
        if token.is_empty() {
            return Err("the workload identity token is empty".to_owned());
        }
        Ok(token.to_owned())
    }
}

impl fmt::Debug for WorkloadToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token is a credential: it stays out of logs.
        match self {
            Self::Token(_) => f.write_str("Token(<redacted>)"),
            Self::File(path) => f.debug_tuple("File").field(path).finish(),
            Self::Provider(_) => f.write_str("Provider"),
        }
    }
}

/// The key a client signs its assertions with, and the algorithm it signs by.
struct AssertionKey {
    key: jsonwebtoken::EncodingKey,
    algorithm: jsonwebtoken::Algorithm,
}

/// The JWT bearer grant's type (RFC 7523).
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How long a client assertion is good for: long enough for one token request.
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// The user's sign-in at their organisation's identity provider, for
/// [`OAuthOptions::enterprise_managed`]: the provider's issuer and token endpoint, this
/// client's ID there, and the OpenID Connect ID token it issued to the user.
#[derive(Clone)]
pub struct EnterpriseIdentity {
    /// The identity provider's issuer identifier.
    pub issuer: String,
    /// Its token endpoint.
    pub token_endpoint: String,
    /// This client's ID at the identity provider (a public client there).
    pub client_id: String,
    /// The ID token the identity provider issued to the user for this client.
    pub id_token: String,
}

impl OAuthOptions {
    /// The authorization-code grant: `visit` is given each authorization URL and
    /// returns the URL the user was redirected to, which starts with `redirect_uri`.
    ///
    /// The client identifies itself with a pre-registered ID
    /// ([`with_client`](Self::with_client)) when it has one; else with its client ID
    /// metadata document ([`with_client_metadata_url`](Self::with_client_metadata_url))
    /// when the authorization server accepts those; else it registers dynamically.
    pub fn authorization_code<F, Fut>(redirect_uri: impl Into<String>, visit: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let visit: Arc<Visit> = Arc::new(move |url| Box::pin(visit(url)));
        Self::new(Grant::AuthorizationCode {
            redirect_uri: redirect_uri.into(),
            visit,
        })
    }

    /// The client-credentials grant, for a client acting on its own behalf with the
    /// ID and secret its authorization server issued. The secret goes in the request
    /// body (`client_secret_post`), or as HTTP Basic when that is all the server
    /// supports.
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        let mut options = Self::new(Grant::ClientCredentials);
        options.client_id = Some(client_id.into());
        options.client_secret = Some(secret.into());
        options
    }

    /// The client-credentials grant, the client authenticating with a JWT it signs
    /// with its private key (`private_key_jwt`, RFC 7523) instead of a secret: `iss`
    /// and `sub` are `client_id`, `aud` the authorization server's issuer, with a
    /// fresh `jti` and a five-minute `exp`. `signing_key_pem` is the private key in
    /// PEM (PKCS#8 for EC and Ed25519 keys, PKCS#1 or PKCS#8 for RSA), and `algorithm`
    /// one of `ES256`, `ES384`, `RS256`, `RS384`, `RS512`, `PS256`, `PS384`, `PS512`,
    /// `EdDSA`.
    ///
    /// Fails when the algorithm is not one of those or the key is not a private key
    /// of its kind.
    pub fn client_credentials_jwt(
        client_id: impl Into<String>,
        signing_key_pem: &str,
        algorithm: &str,
    ) -> Result<Self, String> {
        use jsonwebtoken::{Algorithm, EncodingKey};
        let parsed: Algorithm = algorithm.parse().map_err(|_| {
            format!(
                "unknown signing algorithm `{algorithm}`: expected ES256, ES384, RS256, RS384, \
                 RS512, PS256, PS384, PS512 or EdDSA"
            )
        })?;
        let key = match parsed {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem,
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem,
            Algorithm::EdDSA => EncodingKey::from_ed_pem,
            _ => {
                return Err(format!(
                    "`{algorithm}` is not a private-key algorithm: a client assertion is signed \
                     with ES256, ES384, RS256, RS384, RS512, PS256, PS384, PS512 or EdDSA"
                ));
            }
        }(signing_key_pem.as_bytes())
        .map_err(|e| format!("the signing key is not a PEM private key for {algorithm}: {e}"))?;
        let mut options = Self::new(Grant::ClientCredentialsJwt(Arc::new(AssertionKey {
            key,
            algorithm: parsed,
        })));
        options.client_id = Some(client_id.into());
        Ok(options)
    }

    /// Enterprise-managed authorization (cross-app access): the user's ID token from
    /// their organisation's identity provider is exchanged there for an identity
    /// assertion grant bound to the MCP server, which the server's authorization server
    /// takes (JWT bearer grant) for an access token. No browser is involved. `client_id`
    /// and `secret` are this client's registration at the MCP server's authorization
    /// server (sent as HTTP Basic).
    pub fn enterprise_managed(
        identity: EnterpriseIdentity,
        client_id: impl Into<String>,
        secret: impl Into<String>,
    ) -> Self {
        let mut options = Self::new(Grant::EnterpriseManaged(identity));
        options.client_id = Some(client_id.into());
        options.client_secret = Some(secret.into());
        options
    }

    /// The JWT bearer grant (RFC 7523) for a workload with a federated identity: the
    /// platform's identity token for the workload (a JWT whose audience is the
    /// authorization server) is posted as the `assertion`
    /// (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`) with `client_id`
    /// when given. A refusal (`invalid_grant`, `invalid_scope`, `unauthorized_client`)
    /// fails the connection with the server's reason; the client neither retries the
    /// assertion nor falls back to another grant.
    pub fn workload_identity(token: WorkloadToken, client_id: Option<String>) -> Self {
        let mut options = Self::new(Grant::WorkloadIdentity(token));
        options.client_id = client_id;
        options
    }

    /// Prove possession of a key with each token (DPoP, RFC 9449), with an ES256 key
    /// pair generated now and kept by these options (and their clones). Tokens the
    /// authorization server binds to the key are useless to anyone who steals them
    /// without it.
    ///
    /// Fails only when the operating system gives no randomness.
    pub fn with_dpop(mut self) -> Result<Self, String> {
        self.dpop = Some(Arc::new(DpopKey::generate()?));
        Ok(self)
    }

    /// Prove possession (DPoP) with this key: a P-256 private key (ES256) in PKCS#8
    /// PEM. Fails when `pem` is not one.
    pub fn with_dpop_key(mut self, pem: &str) -> Result<Self, String> {
        self.dpop = Some(Arc::new(DpopKey::from_pem(pem)?));
        Ok(self)
    }

    /// The RFC 7638 SHA-256 thumbprint of the DPoP key (what a bound token's `cnf.jkt`
    /// names), when the client proves possession.
    pub fn dpop_thumbprint(&self) -> Option<&str> {
        self.dpop.as_deref().map(DpopKey::thumbprint)
    }

    fn new(grant: Grant) -> Self {
        Self {
            grant,
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: None,
            scopes: Vec::new(),
            max_scope_upgrades: 2,
            reach: Allowed::default(),
            dpop: None,
        }
    }

    /// Use a client registered with the authorization server beforehand: its ID, and
    /// its secret for a confidential client (sent as the server's metadata asks:
    /// HTTP Basic, or in the body when the server supports only that).
    pub fn with_client(mut self, client_id: impl Into<String>, secret: Option<String>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = secret;
        self
    }

    /// The HTTPS URL of the client's metadata document, used as its client ID by
    /// authorization servers that advertise `client_id_metadata_document_supported`.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// The name the client registers under dynamically.
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = Some(name.into());
        self
    }

    /// Ask for these scopes. Without them the client asks for the scope the server's
    /// `401` challenge names, else the protected resource's `scopes_supported`, else
    /// none (the `scope` parameter is then left out).
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// How many times a `403 insufficient_scope` answer to one request may send the
    /// user back to authorize a larger scope before the request fails (2 by default:
    /// with the first authorization, at most three; 0 fails such a request at once).
    pub fn with_max_scope_upgrades(mut self, upgrades: u32) -> Self {
        self.max_scope_upgrades = upgrades;
        self
    }

    /// Lets OAuth requests go to loopback addresses (this machine), for development
    /// and tests. By default the URLs an MCP server hands out (resource metadata,
    /// authorization servers, their endpoints, redirects) are followed only to public
    /// addresses, checked as names resolve: a server cannot make the client request its
    /// own machine, its private network or a cloud metadata service.
    pub fn allow_loopback(mut self) -> Self {
        self.reach.loopback = true;
        self
    }

    /// Lets OAuth requests go to private networks (RFC 1918, 100.64.0.0/10, IPv6 unique
    /// local): for an authorization server on your own network. Name it by a host name
    /// (`https://sso.corp`): discovery skips authorization servers the metadata names
    /// by a literal private address.
    pub fn allow_private_networks(mut self) -> Self {
        self.reach.private = true;
        self
    }

    /// Lets OAuth requests go to any address, link-local and other special-purpose ones
    /// (where cloud metadata services live) included. Only for MCP servers you trust
    /// completely.
    pub fn allow_any_address(mut self) -> Self {
        self.reach.any = true;
        self
    }
}

impl fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The secret stays out of logs.
        let grant = match &self.grant {
            Grant::AuthorizationCode { redirect_uri, .. } => {
                format!("authorization_code ({redirect_uri})")
            }
            Grant::ClientCredentials => "client_credentials".to_owned(),
            Grant::ClientCredentialsJwt(assertion) => {
                format!(
                    "client_credentials (private_key_jwt, {:?})",
                    assertion.algorithm
                )
            }
            Grant::EnterpriseManaged(identity) => {
                format!("enterprise_managed ({})", identity.issuer)
            }
            Grant::WorkloadIdentity(token) => format!("workload_identity ({token:?})"),
        };
        f.debug_struct("OAuthOptions")
            .field("grant", &grant)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("client_name", &self.client_name)
            .field("scopes", &self.scopes)
            .field("max_scope_upgrades", &self.max_scope_upgrades)
            .field("reach", &self.reach)
            .field("dpop", &self.dpop_thumbprint())
            .finish()
    }
}

type HttpError = StreamableHttpError<reqwest::Error>;

/// One connection's OAuth: rmcp's [`AuthClient`] sends each request with the current
/// access token (refreshing it when it can), and this authorizes when the server says
/// the client must.
pub(crate) struct OAuthSession {
    /// Made at the first request (rmcp builds its manager asynchronously).
    client: tokio::sync::OnceCell<AuthClient<ResourceHttp>>,
    http: ResourceHttp,
    options: OAuthOptions,
    server: String,
    oauth_http: Arc<OAuthHttp>,
    /// Serialises authorizations, so that requests refused together authorize once.
    authorizing: tokio::sync::Mutex<()>,
    /// Bumped by every authorization and scope upgrade: a request refused under an
    /// older one retries with the new token instead of authorizing again.
    generation: AtomicU64,
}

impl OAuthSession {
    /// A session for the MCP server at `server`, sending MCP requests through `http`.
    pub(crate) fn new(
        options: OAuthOptions,
        server: &str,
        http: reqwest::Client,
    ) -> Result<Self, String> {
        let dpop = options
            .dpop
            .as_ref()
            .map(|key| Arc::new(Dpop::new(Arc::clone(key))));
        let oauth_http = Arc::new(OAuthHttp::new(
            ReachGuard::new(options.reach),
            dpop.clone(),
        )?);
        Ok(Self {
            client: tokio::sync::OnceCell::new(),
            http: ResourceHttp { http, dpop },
            options,
            server: server.to_owned(),
            oauth_http,
            authorizing: tokio::sync::Mutex::new(()),
            generation: AtomicU64::new(0),
        })
    }

    async fn client(&self) -> Result<&AuthClient<ResourceHttp>, AuthError> {
        self.client
            .get_or_try_init(|| async {
                let manager = manager(&self.server, &self.oauth_http, &self.options).await?;
                Ok(AuthClient::new(self.http.clone(), manager))
            })
            .await
    }

    /// Runs `call` (a request through rmcp's [`AuthClient`], which adds the token),
    /// authorizing when the server answers 401 (once per request) and upgrading the
    /// scope when it answers 403 `insufficient_scope` (within the configured limit),
    /// then sending it again.
    pub(crate) async fn send<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn(AuthClient<ResourceHttp>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let client = self.client().await?;
        let mut authorized = false;
        // rmcp's own count restarts with every token it gets, so a server that keeps
        // refusing would be authorized against forever: the bound is per request.
        let mut upgrades = 0;
        loop {
            let seen = self.generation.load(Ordering::Acquire);
            match call(client.clone()).await {
                Err(StreamableHttpError::AuthRequired(refusal)) if !authorized => {
                    self.authorize(client, seen, &refusal.www_authenticate_header)
                        .await
                        .map_err(|e| self.failed(e))?;
                    authorized = true;
                }
                Err(StreamableHttpError::AuthRequired(refusal)) => {
                    let error = AuthError::AuthorizationFailed(format!(
                        "the server refused the access token just obtained ({})",
                        refusal.www_authenticate_header
                    ));
                    return Err(self.failed(error));
                }
                Err(StreamableHttpError::InsufficientScope(refusal)) => {
                    if upgrades >= self.options.max_scope_upgrades {
                        let error = AuthError::InvalidScope(format!(
                            "the server still refuses the token for its scope after {upgrades} \
                             upgrade(s), the most allowed ({})",
                            refusal.www_authenticate_header
                        ));
                        return Err(self.failed(error));
                    }
                    upgrades += 1;
                    self.upgrade_scope(client, seen, &refusal)
                        .await
                        .map_err(|e| self.failed(e))?;
                }
                other => return other,
            }
        }
    }

    /// `error` as the connection's failure, with the reason of an OAuth request the
    /// address guard refused on the way, if one was.
    fn failed(&self, error: AuthError) -> HttpError {
        let guard = &self.oauth_http.guard;
        // rmcp skips authorization servers at literal inside addresses without asking
        // the guard, and reports only that none was usable: say why.
        let skipped = || match &error {
            AuthError::AuthorizationServersUnavailable {
                authorization_servers,
                ..
            } => authorization_servers
                .iter()
                .find_map(|candidate| guard.would_refuse(&reqwest::Url::parse(candidate).ok()?)),
            _ => None,
        };
        let error = match guard.take_refusal().or_else(skipped) {
            Some(refusal) => AuthError::AuthorizationFailed(format!("{error} ({refusal})")),
            None => error,
        };
        authorization_failed(&self.server, error)
    }

    async fn authorize(
        &self,
        client: &AuthClient<ResourceHttp>,
        seen: u64,
        challenge: &str,
    ) -> Result<(), AuthError> {
        let _one_at_a_time = self.authorizing.lock().await;
        if self.generation.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        let mut manager = manager(&self.server, &self.oauth_http, &self.options).await?;
        let metadata = match manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
        {
            Ok(discovered) => discovered.metadata,
            Err(AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }) => self.same_origin_metadata(&received_issuer).await?.ok_or(
                AuthError::AuthorizationServerMismatch {
                    expected_issuer,
                    received_issuer,
                },
            )?,
            Err(error) => return Err(error),
        };
        manager.set_metadata(metadata.clone());
        let options = &self.options;
        let manager = match &options.grant {
            Grant::ClientCredentials => {
                let scopes = if options.scopes.is_empty() {
                    manager.select_initial_scopes(&[]).await
                } else {
                    options.scopes.clone()
                };
                let config = ClientCredentialsConfig::ClientSecret {
                    client_id: options.client_id.clone().unwrap_or_default(),
                    client_secret: options.client_secret.clone().unwrap_or_default(),
                    scopes,
                    resource: Some(self.server.clone()),
                };
                manager.validate_client_credentials_metadata(&config)?;
                manager.configure_client_credentials(&config)?;
                manager.exchange_client_credentials(&config).await?;
                manager
            }
            Grant::ClientCredentialsJwt(assertion) => {
                let scopes = if options.scopes.is_empty() {
                    manager.select_initial_scopes(&[]).await
                } else {
                    options.scopes.clone()
                };
                self.exchange_assertion(manager, &metadata, assertion, scopes)
                    .await?
            }
            Grant::EnterpriseManaged(identity) => {
                self.exchange_identity(manager, &metadata, identity).await?
            }
            Grant::WorkloadIdentity(token) => {
                self.exchange_workload_token(manager, &metadata, token)
                    .await?
            }
            Grant::AuthorizationCode {
                redirect_uri,
                visit,
            } => {
                let mut request = AuthorizationRequest::new(redirect_uri.clone());
                request = if options.scopes.is_empty() {
                    request.with_initial_scope_selection()
                } else {
                    request.with_scopes(options.scopes.clone())
                };
                if let Some(name) = &options.client_name {
                    request = request.with_client_name(name.clone());
                }
                if let Some(url) = &options.client_metadata_url {
                    request = request.with_client_metadata_url(url.clone());
                }
                if let Some(id) = &options.client_id {
                    request = request.with_preregistered_client(id.clone());
                }
                if let Some(secret) = &options.client_secret {
                    request = request.with_client_secret(secret.clone());
                }
                let session = AuthorizationSession::new(manager, request)
                    .await
                    .map_err(|(_, e)| e)?;
                let returned = visit(session.auth_url.clone()).await.map_err(|e| {
                    AuthError::AuthorizationFailed(format!("visiting the authorization URL: {e}"))
                })?;
                session.handle_callback_url(&returned).await?;
                session.auth_manager
            }
        };
        *client.auth_manager.lock().await = manager;
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Enterprise-managed authorization with `manager`'s discovered metadata: the ID
    /// token for an identity assertion at the identity provider, that for an access
    /// token at the MCP server's authorization server, kept in `manager`.
    async fn exchange_identity(
        &self,
        mut manager: AuthorizationManager,
        metadata: &AuthorizationMetadata,
        identity: &EnterpriseIdentity,
    ) -> Result<AuthorizationManager, AuthError> {
        use rmcp::transport::auth::enterprise::{
            EmaAuthorizationServer, EmaClientAuthentication, EmaExchangeRequest,
        };
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            AuthError::AuthorizationFailed(
                "the authorization server's metadata names no issuer, which the identity assertion must be bound to".to_owned(),
            )
        })?;
        let client_id = self.options.client_id.clone().unwrap_or_default();
        let secret =
            oauth2::ClientSecret::new(self.options.client_secret.clone().unwrap_or_default());
        let idp = EmaAuthorizationServer::new(
            identity.issuer.clone(),
            identity.token_endpoint.clone(),
            identity.client_id.clone(),
        );
        let resource_server =
            EmaAuthorizationServer::new(issuer, metadata.token_endpoint.clone(), client_id.clone())
                .with_client_authentication(EmaClientAuthentication::ClientSecretBasic(secret));
        let mut request = EmaExchangeRequest::new_with_id_token(
            idp,
            resource_server,
            &self.server,
            &identity.id_token,
        );
        if !self.options.scopes.is_empty() {
            request = request.with_scopes(self.options.scopes.clone());
        }
        let http: &dyn OAuthHttpClient = self.oauth_http.as_ref();
        let token = request.exchange(http, http).await.map_err(|e| {
            AuthError::AuthorizationFailed(format!("enterprise-managed authorization: {e}"))
        })?;
        let response = serde_json::json!({
            "access_token": token.access_token.secret(),
            "token_type": "Bearer",
            "expires_in": token.expires_in.map(|d| d.as_secs()),
        });
        let response = serde_json::from_value(response).map_err(|e| {
            AuthError::InternalError(format!("the exchanged token could not be kept: {e}"))
        })?;
        keep_token(
            &mut manager,
            client_id,
            response,
            token.scopes.into_iter().collect(),
        )
        .await?;
        Ok(manager)
    }

    /// The client-credentials grant with a signed client assertion: the JWT is made
    /// for `metadata`'s issuer (its token endpoint when it names none) and posted with
    /// `scopes` and this server as the resource; the token is kept in `manager`.
    async fn exchange_assertion(
        &self,
        manager: AuthorizationManager,
        metadata: &AuthorizationMetadata,
        assertion: &AssertionKey,
        scopes: Vec<String>,
    ) -> Result<AuthorizationManager, AuthError> {
        let client_id = self.options.client_id.clone().unwrap_or_default();
        let audience = metadata
            .issuer
            .clone()
            .unwrap_or_else(|| metadata.token_endpoint.clone());
        let now = unix_now()
            .ok_or_else(|| AuthError::InternalError("the system clock is before 1970".into()))?;
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
            "jti": oauth2::CsrfToken::new_random().secret(),
        });
        let header = jsonwebtoken::Header::new(assertion.algorithm);
        let signed = jsonwebtoken::encode(&header, &claims, &assertion.key).map_err(|e| {
            AuthError::InternalError(format!("the client assertion could not be signed: {e}"))
        })?;
        let form = [
            ("grant_type", "client_credentials"),
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            ),
            ("client_assertion", &signed),
        ];
        self.redeem(manager, metadata, &form, scopes, "the client assertion")
            .await
    }

    /// The JWT bearer grant with the workload's identity token, the token kept in
    /// `manager`. Tried once: a refusal is the connection's failure.
    async fn exchange_workload_token(
        &self,
        manager: AuthorizationManager,
        metadata: &AuthorizationMetadata,
        token: &WorkloadToken,
    ) -> Result<AuthorizationManager, AuthError> {
        let assertion = token.get().await.map_err(AuthError::AuthorizationFailed)?;
        let scopes = if self.options.scopes.is_empty() {
            manager.select_initial_scopes(&[]).await
        } else {
            self.options.scopes.clone()
        };
        let client_id = self.options.client_id.as_deref();
        let mut form = vec![("grant_type", JWT_BEARER_GRANT), ("assertion", &assertion)];
        form.extend(client_id.map(|id| ("client_id", id)));
        self.redeem(
            manager,
            metadata,
            &form,
            scopes,
            "the workload identity token",
        )
        .await
    }

    /// Posts `form` (with this server as the resource, and `scopes`) to `metadata`'s
    /// token endpoint and keeps the token it answers in `manager`.
    async fn redeem(
        &self,
        mut manager: AuthorizationManager,
        metadata: &AuthorizationMetadata,
        form: &[(&str, &str)],
        scopes: Vec<String>,
        what: &str,
    ) -> Result<AuthorizationManager, AuthError> {
        // The serializer is not `Sync`: it must be gone before the request is awaited.
        let body = {
            let mut body = form_urlencoded::Serializer::new(String::new());
            body.extend_pairs(form)
                .append_pair("resource", &self.server);
            if !scopes.is_empty() {
                body.append_pair("scope", &scopes.join(" "));
            }
            body.finish()
        };
        let response = self.token_request(metadata, body, what).await?;
        let granted = oauth2::TokenResponse::scopes(&response)
            .map(|granted| granted.iter().map(|s| s.to_string()).collect())
            .unwrap_or(scopes);
        let client_id = self.options.client_id.clone().unwrap_or_default();
        keep_token(&mut manager, client_id, response, granted).await?;
        Ok(manager)
    }

    /// Posts the form `body` to `metadata`'s token endpoint (with a DPoP proof when the
    /// client proves possession) and reads the token it answers; a refusal is an error
    /// naming `what` was refused and the server's reason.
    async fn token_request(
        &self,
        metadata: &AuthorizationMetadata,
        body: String,
        what: &str,
    ) -> Result<rmcp::transport::auth::OAuthTokenResponse, AuthError> {
        let request = axum::http::Request::post(&metadata.token_endpoint)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(body.into_bytes())
            .map_err(|e| {
                AuthError::TokenExchangeFailed(format!(
                    "the token endpoint `{}` cannot be requested: {e}",
                    metadata.token_endpoint
                ))
            })?;
        let response = self
            .oauth_http
            .send_http(request, false, OAUTH_TIMEOUT)
            .await
            .map_err(|e| AuthError::TokenExchangeFailed(format!("the token request: {e}")))?;
        let status = response.status();
        let body = response.into_body();
        if !status.is_success() {
            let reason: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let field = |name: &str| reason.get(name).and_then(|v| v.as_str()).unwrap_or("");
            return Err(AuthError::TokenExchangeFailed(format!(
                "the authorization server refused {what} ({status}): {} {}",
                field("error"),
                field("error_description"),
            )));
        }
        serde_json::from_slice(&body).map_err(|e| {
            AuthError::TokenExchangeFailed(format!("the token response is not valid: {e}"))
        })
    }

    /// The authorization-server metadata at the MCP server's origin, for a server of
    /// the 2025-03-26 revision, where that origin is the authorization base: such a
    /// server may name as issuer a path on its origin (`http://mcp.example/oauth`),
    /// which RFC 8414's exact issuer check refuses. The same origin is the same party,
    /// so this metadata is used when its issuer and every endpoint it names are on the
    /// MCP server's origin; `None` otherwise.
    async fn same_origin_metadata(
        &self,
        issuer: &str,
    ) -> Result<Option<AuthorizationMetadata>, AuthError> {
        let server = reqwest::Url::parse(&self.server)?;
        let origin = server.origin();
        let on_origin =
            |url: &str| reqwest::Url::parse(url).is_ok_and(|url| url.origin() == origin);
        if !on_origin(issuer) {
            return Ok(None);
        }
        let url = server.join("/.well-known/oauth-authorization-server")?;
        let body = self.oauth_http.get(url).await.map_err(|e| {
            AuthError::AuthorizationFailed(format!("fetching authorization server metadata: {e}"))
        })?;
        let metadata: AuthorizationMetadata = serde_json::from_slice(&body).map_err(|e| {
            AuthError::AuthorizationFailed(format!("invalid authorization server metadata: {e}"))
        })?;
        let endpoints = [
            Some(&metadata.authorization_endpoint),
            Some(&metadata.token_endpoint),
            metadata.registration_endpoint.as_ref(),
        ];
        let same_party = metadata.issuer.as_deref() == Some(issuer)
            && endpoints.into_iter().flatten().all(|url| on_origin(url));
        Ok(same_party.then_some(metadata))
    }

    async fn upgrade_scope(
        &self,
        client: &AuthClient<ResourceHttp>,
        seen: u64,
        refusal: &InsufficientScopeError,
    ) -> Result<(), AuthError> {
        let _one_at_a_time = self.authorizing.lock().await;
        if self.generation.load(Ordering::Acquire) != seen {
            return Ok(());
        }
        let Grant::AuthorizationCode { visit, .. } = &self.options.grant else {
            return Err(AuthError::InvalidScope(format!(
                "the server needs a scope the client-credentials token lacks ({})",
                refusal.www_authenticate_header
            )));
        };
        let Some(scope) = refusal.get_required_scope() else {
            return Err(AuthError::InvalidScope(format!(
                "the server refused the token for its scope without naming the scope it needs ({})",
                refusal.www_authenticate_header
            )));
        };
        // rmcp counts the upgrades and refuses beyond the configured number.
        let manager = client.auth_manager.lock().await;
        let url = manager.request_scope_upgrade(scope).await?;
        let returned = visit(url).await.map_err(|e| {
            AuthError::AuthorizationFailed(format!("visiting the authorization URL: {e}"))
        })?;
        let callback = rmcp::transport::auth::AuthorizationCallback::from_redirect_url(&returned)?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await?;
        drop(manager);
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }
}

/// Seconds since the Unix epoch, `None` if the clock is before it.
fn unix_now() -> Option<u64> {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .ok()
}

/// Keeps a token obtained outside rmcp's own flows in `manager`, which hands out what
/// its credential store holds.
async fn keep_token(
    manager: &mut AuthorizationManager,
    client_id: String,
    response: rmcp::transport::auth::OAuthTokenResponse,
    scopes: Vec<String>,
) -> Result<(), AuthError> {
    let store = InMemoryCredentialStore::new();
    store
        .save(StoredCredentials::new(
            client_id,
            Some(response),
            scopes,
            unix_now(),
        ))
        .await?;
    manager.set_credential_store(store);
    Ok(())
}

/// A fresh authorization manager for `server`, its OAuth requests made by `http`.
async fn manager(
    server: &str,
    http: &Arc<OAuthHttp>,
    options: &OAuthOptions,
) -> Result<AuthorizationManager, AuthError> {
    let http: Arc<dyn OAuthHttpClient> = Arc::clone(http) as _;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(server, http).await?;
    let mut upgrades = ScopeUpgradeConfig::default();
    upgrades.max_upgrade_attempts = options.max_scope_upgrades;
    upgrades.auto_upgrade = options.max_scope_upgrades > 0;
    manager.set_scope_upgrade_config(upgrades);
    Ok(manager)
}

fn authorization_failed(server: &str, error: AuthError) -> HttpError {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(format!(
        "{server} needs OAuth authorization, which failed: {error}"
    )))
}

/// rmcp's OAuth requests over this crate's reqwest clients (TLS set up for them alone),
/// following redirects or not as each request asks, with a timeout and a bounded body,
/// and only as far inside the network as `guard` allows; with a DPoP proof on each
/// token request when the client proves possession.
struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    guard: Arc<ReachGuard>,
    dpop: Option<Arc<Dpop>>,
}

type Response = axum::http::Response<Vec<u8>>;

impl OAuthHttp {
    fn new(guard: Arc<ReachGuard>, dpop: Option<Arc<Dpop>>) -> Result<Self, String> {
        let build = |redirect| {
            crate::tls::http_client_builder()?
                .redirect(redirect)
                .dns_resolver(GuardedResolver(Arc::clone(&guard)))
                .build()
                .map_err(|e| format!("the OAuth HTTP client could not be built: {e}"))
        };
        Ok(Self {
            follow: build(guard.redirects(MAX_REDIRECTS))?,
            stop: build(reqwest::redirect::Policy::none())?,
            guard,
            dpop,
        })
    }

    /// Refuses `url` when it is a literal address the guard does not allow (names are
    /// checked as they resolve).
    fn check(&self, url: &reqwest::Url) -> Result<(), OAuthHttpClientError> {
        Ok(self.guard.check_literal(url)?)
    }

    async fn send(&self, request: OAuthHttpRequest) -> Result<Response, OAuthHttpClientError> {
        let follow = !matches!(request.redirect_policy, OAuthHttpRedirectPolicy::Stop);
        let timeout = request.timeout.unwrap_or(OAUTH_TIMEOUT).min(OAUTH_TIMEOUT);
        self.send_http(request.request, follow, timeout).await
    }

    /// Sends `request`; a token request (a form with a `grant_type`) carries a DPoP
    /// proof when the client proves possession, and is sent once more with the
    /// server's nonce when the server asks for one (`use_dpop_nonce`).
    async fn send_http(
        &self,
        request: axum::http::Request<Vec<u8>>,
        follow: bool,
        timeout: Duration,
    ) -> Result<Response, OAuthHttpClientError> {
        let dpop = match &self.dpop {
            Some(dpop) if is_token_request(&request) => dpop,
            _ => return self.send_once(request, follow, timeout).await,
        };
        let (parts, body) = request.into_parts();
        let url = parts.uri.to_string();
        let mut retried = false;
        loop {
            let proof = dpop
                .key
                .proof("POST", &url, None, dpop.token_nonce().as_deref())?;
            let mut attempt = axum::http::Request::from_parts(parts.clone(), body.clone());
            attempt.headers_mut().insert(PROOF_HEADER, proof.parse()?);
            let response = self.send_once(attempt, follow, timeout).await?;
            let nonce = response
                .headers()
                .get(NONCE_HEADER)
                .and_then(|nonce| nonce.to_str().ok())
                .filter(|nonce| !nonce.is_empty());
            // A nonce may come with any answer; the next proof carries the latest.
            if let Some(nonce) = nonce {
                dpop.set_token_nonce(nonce.to_owned());
            }
            let wants_nonce = response.status() == axum::http::StatusCode::BAD_REQUEST
                && demands_nonce(&String::from_utf8_lossy(response.body()));
            if wants_nonce && nonce.is_some() && !retried {
                retried = true;
                continue;
            }
            if response.status().is_success() {
                dpop.note_token_response(response.body());
            }
            return Ok(response);
        }
    }

    async fn send_once(
        &self,
        request: axum::http::Request<Vec<u8>>,
        follow: bool,
        timeout: Duration,
    ) -> Result<Response, OAuthHttpClientError> {
        let client = if follow { &self.follow } else { &self.stop };
        let mut outgoing = reqwest::Request::try_from(request)?;
        self.check(outgoing.url())?;
        *outgoing.timeout_mut() = Some(timeout);
        let response = client.execute(outgoing).await?;
        let mut answer = axum::http::Response::builder()
            .status(response.status())
            .version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        Ok(answer.body(read_body(response).await?)?)
    }

    /// The body of a successful GET of `url`, without following redirects.
    async fn get(&self, url: reqwest::Url) -> Result<Vec<u8>, OAuthHttpClientError> {
        self.check(&url)?;
        let response = self.stop.get(url).timeout(OAUTH_TIMEOUT).send().await?;
        read_body(response.error_for_status()?).await
    }
}

/// Whether `request` asks a token endpoint for a token: a form POST with a
/// `grant_type`.
fn is_token_request(request: &axum::http::Request<Vec<u8>>) -> bool {
    request.method() == axum::http::Method::POST
        && form_urlencoded::parse(request.body()).any(|(name, _)| name == "grant_type")
}

/// A response's body, refused beyond [`MAX_BODY_BYTES`].
async fn read_body(mut response: reqwest::Response) -> Result<Vec<u8>, OAuthHttpClientError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(format!("an OAuth response exceeded {MAX_BODY_BYTES} bytes").into());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(self.send(request))
    }
}

//! The HTTP client's OAuth against a small authorization server on loopback and our
//! own authenticated MCP server: the client is refused (401), discovers the
//! authorization server from the protected-resource metadata, gets a token by the
//! client-credentials grant or the authorization-code grant (dynamic registration,
//! PKCE), and calls a tool as the principal the token names. A wrong secret fails the
//! connection with the authorization server's reason. A client authenticating with a
//! signed JWT (`private_key_jwt`) has its assertion's signature and claims checked by
//! the token endpoint, and one signed by another key is refused.
//!
//! Every test here allows OAuth requests to loopback, where its servers are; by default
//! the URLs a server hands out are followed only to public addresses, and the attacks
//! at the end point them at loopback, private and link-local addresses.

#[path = "support/oauth.rs"]
mod oauth_support;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Validation};
use oauth_support::json_response;
use p256::elliptic_curve::Generate;
use p256::elliptic_curve::pkcs8::{EncodePrivateKey, LineEnding};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use toolwright_core::{Principal, ToolContext, tool, tools};
use toolwright_mcp::{
    HttpAuth, HttpClientOptions, McpClient, McpHttpServer, McpServer, OAuthOptions, StaticTokens,
};

/// Answers who is calling.
#[tool]
async fn whoami(ctx: &ToolContext) -> String {
    ctx.principal()
        .map_or("nobody", |principal| principal.subject.as_str())
        .to_owned()
}

const SERVICE_ID: &str = "reporting-service";
const SERVICE_SECRET: &str = "s3cret-of-the-service";
const SERVICE_TOKEN: &str = "token-for-the-service";
/// A client the authorization server knows, whose tokens the MCP server does not take.
const STRANGER_ID: &str = "stranger";
const STRANGER_TOKEN: &str = "token-the-mcp-server-does-not-know";
const USER_TOKEN: &str = "token-for-alice";
const AUTH_CODE: &str = "code-for-alice";

/// What the authorization server saw: each token request's form fields, and each
/// authorization request's query.
#[derive(Default)]
struct Seen {
    token_requests: Vec<HashMap<String, String>>,
    authorizations: Vec<HashMap<String, String>>,
    registrations: usize,
}

#[derive(Clone)]
struct AuthServer {
    issuer: String,
    /// The issuer its metadata names: `issuer`, unless the test makes it lie.
    claimed_issuer: String,
    /// The public key of [`SERVICE_ID`]'s client assertions, when it has one.
    assertion_key: Option<Arc<DecodingKey>>,
    seen: Arc<Mutex<Seen>>,
}

/// `a=1&b=2` as a map, decoding what the test's values hold: URLs and spaces.
fn form(body: &str) -> HashMap<String, String> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| {
            (
                k.to_owned(),
                v.replace('+', " ").replace("%3A", ":").replace("%2F", "/"),
            )
        })
        .collect()
}

async fn metadata(State(server): State<AuthServer>) -> Response {
    let issuer = &server.issuer;
    json_response(
        StatusCode::OK,
        json!({
            "issuer": server.claimed_issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
        }),
    )
}

async fn register(State(server): State<AuthServer>, body: String) -> Response {
    server.seen.lock().unwrap().registrations += 1;
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    json_response(
        StatusCode::CREATED,
        json!({ "client_id": "registered-client", "redirect_uris": request["redirect_uris"] }),
    )
}

/// Grants at once, as if the user consented: back to the redirect URI with the code.
async fn authorize(State(server): State<AuthServer>, uri: Uri) -> Response {
    let query = form(uri.query().unwrap_or_default());
    let redirect = format!(
        "{}?code={AUTH_CODE}&state={}",
        query["redirect_uri"], query["state"]
    );
    server.seen.lock().unwrap().authorizations.push(query);
    (StatusCode::FOUND, [(header::LOCATION, redirect)]).into_response()
}

async fn token(State(server): State<AuthServer>, body: String) -> Response {
    let fields = form(&body);
    server
        .seen
        .lock()
        .unwrap()
        .token_requests
        .push(fields.clone());
    let field = |name: &str| fields.get(name).map(String::as_str);
    if field("client_assertion_type") == Some(JWT_BEARER) {
        return assertion_token(&server, field("grant_type"), field("client_assertion"));
    }
    let token = match field("grant_type") {
        Some("client_credentials")
            if field("client_id") == Some(SERVICE_ID)
                && field("client_secret") == Some(SERVICE_SECRET) =>
        {
            SERVICE_TOKEN
        }
        Some("client_credentials")
            if field("client_id") == Some(STRANGER_ID)
                && field("client_secret") == Some(SERVICE_SECRET) =>
        {
            STRANGER_TOKEN
        }
        Some("authorization_code")
            if field("code") == Some(AUTH_CODE)
                && field("client_id") == Some("registered-client")
                && field("code_verifier").is_some_and(|v| v.len() >= 43) =>
        {
            USER_TOKEN
        }
        _ => {
            return json_response(
                StatusCode::UNAUTHORIZED,
                json!({ "error": "invalid_client", "error_description": "unknown client or wrong secret" }),
            );
        }
    };
    json_response(
        StatusCode::OK,
        json!({ "access_token": token, "token_type": "Bearer", "expires_in": 3600 }),
    )
}

const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The client-credentials grant authenticated by a client assertion (RFC 7523): its
/// signature by the client's key, `iss` and `sub` the client, `aud` this server, a
/// `jti`, an `exp` in the future and at most five minutes after `iat`.
fn assertion_token(server: &AuthServer, grant: Option<&str>, assertion: Option<&str>) -> Response {
    let refuse = |reason: String| {
        json_response(
            StatusCode::UNAUTHORIZED,
            json!({ "error": "invalid_client", "error_description": reason }),
        )
    };
    let (Some("client_credentials"), Some(assertion), Some(key)) =
        (grant, assertion, &server.assertion_key)
    else {
        return refuse(
            "a client assertion with the client_credentials grant and a known client".into(),
        );
    };
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[&server.issuer]);
    validation.set_issuer(&[SERVICE_ID]);
    validation.sub = Some(SERVICE_ID.to_owned());
    validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
    let claims = match jsonwebtoken::decode::<Value>(assertion, key, &validation) {
        Ok(data) => data.claims,
        Err(e) => return refuse(format!("the client assertion is not valid: {e:?}")),
    };
    let lifetime = claims["exp"]
        .as_u64()
        .unwrap_or(0)
        .saturating_sub(claims["iat"].as_u64().unwrap_or(0));
    if claims["jti"].as_str().is_none_or(|jti| jti.len() < 16) || lifetime > 300 {
        return refuse(format!(
            "the client assertion's jti or lifetime is wrong: {claims}"
        ));
    }
    json_response(
        StatusCode::OK,
        json!({ "access_token": SERVICE_TOKEN, "token_type": "Bearer", "expires_in": 3600 }),
    )
}

/// A new P-256 key pair: the private key in PKCS#8 PEM, and the public key.
fn es256_key_pair() -> (String, DecodingKey) {
    let secret = p256::SecretKey::generate();
    let der = secret.to_pkcs8_der().unwrap();
    let public =
        Jwk::from_encoding_key(&EncodingKey::from_ec_der(der.as_bytes()), Algorithm::ES256)
            .unwrap();
    let pem = secret.to_pkcs8_pem(LineEnding::LF).unwrap().to_string();
    (pem, DecodingKey::from_jwk(&public).unwrap())
}

struct Running {
    mcp_url: String,
    seen: Arc<Mutex<Seen>>,
    stop: CancellationToken,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The authorization server and, trusting its tokens, the MCP server.
async fn start() -> Running {
    start_claiming(None).await
}

/// [`start`], the authorization server's metadata naming `claimed_issuer` if given.
async fn start_claiming(claimed_issuer: Option<&str>) -> Running {
    start_with(claimed_issuer, None).await
}

/// [`start_claiming`], the authorization server taking [`SERVICE_ID`]'s client
/// assertions signed by the private half of `assertion_key`.
async fn start_with(claimed_issuer: Option<&str>, assertion_key: Option<DecodingKey>) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let auth_server = AuthServer {
        issuer: issuer.clone(),
        claimed_issuer: claimed_issuer.map_or_else(|| issuer.clone(), str::to_owned),
        seen: Arc::clone(&seen),
        assertion_key: assertion_key.map(Arc::new),
    };
    let app = Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(auth_server);
    let stop = CancellationToken::new();
    let until = stop.clone().cancelled_owned();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(until)
            .await
    });

    let validator = StaticTokens::new()
        .with_token(SERVICE_TOKEN, Principal::new("reporting-service"))
        .with_token(USER_TOKEN, Principal::new("alice"));
    let auth = HttpAuth::new(validator).with_authorization_server(issuer);
    let http = McpHttpServer::bind(McpServer::new(tools![whoami]), "127.0.0.1:0")
        .await
        .unwrap()
        .with_options(toolwright_mcp::HttpOptions::default().with_auth(auth));
    let mcp_url = http.url();
    let server_stop = http.shutdown_token();
    let stop_both = stop.clone();
    tokio::spawn(async move {
        stop_both.cancelled().await;
        server_stop.cancel();
    });
    tokio::spawn(http.run());
    Running {
        mcp_url,
        seen,
        stop,
    }
}

async fn whoami_over(client: &McpClient) -> String {
    let tools = client.toolset().unwrap();
    let output = tools
        .call("whoami", &json!({}), &ToolContext::default())
        .await
        .unwrap();
    output.iter().filter_map(|c| c.as_text()).collect()
}

/// Connects as the service with `oauth`, checks it calls as itself, and answers the
/// one token request the whole connection made.
async fn call_as_service(running: &Running, oauth: OAuthOptions) -> HashMap<String, String> {
    let options = HttpClientOptions::new().with_oauth(oauth.allow_loopback());
    let client = McpClient::connect_http_with(&running.mcp_url, &options)
        .await
        .unwrap();
    assert_eq!(whoami_over(&client).await, "reporting-service");
    client.close().await;

    let seen = running.seen.lock().unwrap();
    // One token for the whole connection, asked for the MCP server as the resource.
    assert_eq!(seen.token_requests.len(), 1, "{:?}", seen.token_requests);
    assert_eq!(
        seen.token_requests[0].get("resource"),
        Some(&running.mcp_url)
    );
    assert_eq!(seen.registrations, 0);
    seen.token_requests[0].clone()
}

/// The error connecting with `oauth`, which the authorization server refuses.
async fn refusal(running: &Running, oauth: OAuthOptions) -> String {
    let options = HttpClientOptions::new().with_oauth(oauth.allow_loopback());
    let error = McpClient::connect_http_with(&running.mcp_url, &options)
        .await
        .expect_err("the connection is refused")
        .to_string();
    assert!(error.contains("needs OAuth authorization"), "{error}");
    assert!(error.contains("invalid_client"), "{error}");
    assert!(error.contains(&running.mcp_url), "{error}");
    error
}

#[tokio::test]
async fn a_service_gets_a_token_by_client_credentials_and_calls_as_itself() {
    let running = start().await;
    let oauth = OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET);
    call_as_service(&running, oauth).await;
}

#[tokio::test]
async fn a_wrong_secret_fails_the_connection_with_the_authorization_servers_reason() {
    let running = start().await;
    let oauth = OAuthOptions::client_credentials(SERVICE_ID, "not-the-secret");
    refusal(&running, oauth).await;
}

#[tokio::test]
async fn a_service_authenticates_with_a_signed_jwt_and_calls_as_itself() {
    let (pem, public) = es256_key_pair();
    let running = start_with(None, Some(public)).await;
    let oauth = OAuthOptions::client_credentials_jwt(SERVICE_ID, &pem, "ES256").unwrap();
    let request = call_as_service(&running, oauth).await;
    assert_eq!(
        request.get("grant_type").map(String::as_str),
        Some("client_credentials")
    );
    // The key authenticates the client: no secret travels.
    assert_eq!(request.get("client_secret"), None);
}

#[tokio::test]
async fn an_assertion_signed_by_another_key_is_refused_with_the_reason() {
    let (_, trusted) = es256_key_pair();
    let (other_pem, _) = es256_key_pair();
    let running = start_with(None, Some(trusted)).await;
    let oauth = OAuthOptions::client_credentials_jwt(SERVICE_ID, &other_pem, "ES256").unwrap();
    let error = refusal(&running, oauth).await;
    assert!(error.contains("refused the client assertion"), "{error}");
    assert!(error.contains("InvalidSignature"), "{error}");
    assert_eq!(running.seen.lock().unwrap().token_requests.len(), 1);
}

#[test]
fn a_signing_key_or_algorithm_that_cannot_sign_is_refused_at_once() {
    let (pem, _) = es256_key_pair();
    let error = OAuthOptions::client_credentials_jwt(SERVICE_ID, "not a key", "ES256").unwrap_err();
    assert!(error.contains("not a PEM private key for ES256"), "{error}");
    let error = OAuthOptions::client_credentials_jwt(SERVICE_ID, &pem, "HS256").unwrap_err();
    assert!(error.contains("not a private-key algorithm"), "{error}");
    let error = OAuthOptions::client_credentials_jwt(SERVICE_ID, &pem, "ES257").unwrap_err();
    assert!(
        error.contains("unknown signing algorithm `ES257`"),
        "{error}"
    );
    // An EC key given for an RSA algorithm is not an RSA key.
    assert!(OAuthOptions::client_credentials_jwt(SERVICE_ID, &pem, "RS256").is_err());
}

#[tokio::test]
async fn a_user_authorizes_by_code_with_pkce_after_registering() {
    // The test's own request (the browser's) needs a TLS provider to build its client.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let running = start().await;
    let visited = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&visited);
    let oauth = OAuthOptions::authorization_code("http://127.0.0.1:1/callback", move |url| {
        record.lock().unwrap().push(url.clone());
        async move {
            // A browser's request, which the authorization server redirects back.
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| e.to_string())?;
            let response = http.get(url).send().await.map_err(|e| e.to_string())?;
            let location = response
                .headers()
                .get(header::LOCATION)
                .ok_or("no redirect")?;
            Ok(location.to_str().map_err(|e| e.to_string())?.to_owned())
        }
    });
    let options = HttpClientOptions::new().with_oauth(oauth.allow_loopback());
    let client = McpClient::connect_http_with(&running.mcp_url, &options)
        .await
        .unwrap();
    assert_eq!(whoami_over(&client).await, "alice");
    client.close().await;

    assert_eq!(visited.lock().unwrap().len(), 1);
    let seen = running.seen.lock().unwrap();
    assert_eq!(seen.registrations, 1);
    let authorization = &seen.authorizations[0];
    assert_eq!(authorization["client_id"], "registered-client");
    assert_eq!(authorization["code_challenge_method"], "S256");
    assert_eq!(authorization["resource"], running.mcp_url);
    let exchange = &seen.token_requests[0];
    assert_eq!(exchange["grant_type"], "authorization_code");
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_refused_before_any_token_request() {
    // A mix-up: the authorization server the resource names publishes metadata that
    // claims to be another issuer's.
    let running = start_claiming(Some("https://auth.attacker.example")).await;
    let oauth = OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET);
    let options = HttpClientOptions::new().with_oauth(oauth.allow_loopback());
    let error = McpClient::connect_http_with(&running.mcp_url, &options)
        .await
        .expect_err("the metadata is refused")
        .to_string();
    assert!(error.contains("issuer mismatch"), "{error}");
    assert!(error.contains("auth.attacker.example"), "{error}");
    assert!(running.seen.lock().unwrap().token_requests.is_empty());
}

#[tokio::test]
async fn a_token_the_server_refuses_fails_the_connection_after_one_authorization() {
    let running = start().await;
    let oauth = OAuthOptions::client_credentials(STRANGER_ID, SERVICE_SECRET);
    let options = HttpClientOptions::new().with_oauth(oauth.allow_loopback());
    let error = McpClient::connect_http_with(&running.mcp_url, &options)
        .await
        .expect_err("the token is refused")
        .to_string();
    assert!(
        error.contains("refused the access token just obtained"),
        "{error}"
    );
    // No loop of authorizations against a server that will never accept.
    assert_eq!(running.seen.lock().unwrap().token_requests.len(), 1);
}

#[tokio::test]
async fn without_oauth_the_refusal_is_reported() {
    let running = start().await;
    let error = McpClient::connect_http(&running.mcp_url)
        .await
        .expect_err("refused without a token")
        .to_string();
    assert!(error.to_lowercase().contains("auth"), "{error}");
}

#[test]
fn the_secret_stays_out_of_debug_output() {
    let options = OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET);
    let shown = format!("{:?}", HttpClientOptions::new().with_oauth(options));
    assert!(shown.contains(SERVICE_ID), "{shown}");
    assert!(!shown.contains(SERVICE_SECRET), "{shown}");
}

/// An MCP server on loopback requiring tokens from the authorization server at
/// `authorization_server`; its URL.
async fn mcp_server_naming(authorization_server: &str) -> String {
    let auth = HttpAuth::new(StaticTokens::new().with_token(SERVICE_TOKEN, Principal::new("x")))
        .with_authorization_server(authorization_server);
    let http = McpHttpServer::bind(McpServer::new(tools![whoami]), "127.0.0.1:0")
        .await
        .unwrap()
        .with_options(toolwright_mcp::HttpOptions::default().with_auth(auth));
    let url = http.url();
    tokio::spawn(http.run());
    url
}

/// The error connecting to `mcp_url` with `oauth` as given (loopback not allowed
/// unless it says so).
async fn connect_error(mcp_url: &str, oauth: OAuthOptions) -> String {
    let options = HttpClientOptions::new().with_oauth(oauth);
    McpClient::connect_http_with(mcp_url, &options)
        .await
        .expect_err("the connection is refused")
        .to_string()
}

#[tokio::test]
async fn a_server_naming_a_cloud_metadata_address_cannot_send_the_client_there() {
    let mcp_url = mcp_server_naming("http://169.254.169.254/latest/meta-data").await;
    let oauth = OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET).allow_loopback();
    let error = connect_error(&mcp_url, oauth).await;
    assert!(error.contains("169.254.169.254"), "{error}");
    assert!(error.contains("none published usable metadata"), "{error}");
    assert!(
        error.contains("169.254.169.254 is a link-local or other special-purpose address"),
        "not refused for its address: {error}"
    );
}

#[tokio::test]
async fn a_token_endpoint_at_a_cloud_metadata_address_is_not_sent_the_secret() {
    // An authorization server on loopback, as the MCP server is, whose metadata points
    // its token endpoint (where the client sends its secret) at a link-local address.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": "http://169.254.169.254/latest/api/token",
        "response_types_supported": ["code"],
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
    });
    let app = Router::new().route(
        "/.well-known/oauth-authorization-server",
        get(move || async move { json_response(StatusCode::OK, metadata) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mcp_url = mcp_server_naming(&issuer).await;
    let error = connect_error(
        &mcp_url,
        OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET).allow_loopback(),
    )
    .await;
    assert!(error.contains("needs OAuth authorization"), "{error}");
    assert!(
        error.contains("http://169.254.169.254/latest/api/token refused"),
        "{error}"
    );
    // Refused by the address guard, before the secret was sent anywhere.
    assert!(
        error.contains("is a link-local or other special-purpose address"),
        "not refused for its address: {error}"
    );
}

#[tokio::test]
async fn by_default_no_oauth_request_goes_to_loopback() {
    // The MCP server and its authorization server are on loopback, as a server inside
    // the client's machine would be; the client did not allow loopback.
    let running = start().await;
    let oauth = OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET);
    let error = connect_error(&running.mcp_url, oauth).await;
    assert!(error.contains("127.0.0.1 is a loopback address"), "{error}");
    assert!(error.contains("OAuthOptions::allow_loopback"), "{error}");
    let seen = running.seen.lock().unwrap();
    assert!(seen.token_requests.is_empty(), "{:?}", seen.token_requests);
}

#[tokio::test]
async fn a_server_naming_a_private_or_loopback_authorization_server_is_refused() {
    for (authorization_server, allowed, place) in [
        // Loopback allowed (the MCP server is there), a private network not.
        (
            "http://10.0.0.1",
            OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET).allow_loopback(),
            "10.0.0.1 is a private-network address",
        ),
        (
            "http://[fd00::1]",
            OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET).allow_loopback(),
            "fd00::1 is a private-network address",
        ),
        // Link-local stays refused with private networks and loopback allowed.
        (
            "http://169.254.169.254",
            OAuthOptions::client_credentials(SERVICE_ID, SERVICE_SECRET)
                .allow_loopback()
                .allow_private_networks(),
            "169.254.169.254 is a link-local or other special-purpose address",
        ),
    ] {
        let mcp_url = mcp_server_naming(authorization_server).await;
        let error = connect_error(&mcp_url, allowed).await;
        assert!(error.contains(place), "{authorization_server}: {error}");
    }
}

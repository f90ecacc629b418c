//! DPoP-bound tokens (RFC 9449) and the workload identity JWT bearer grant (RFC 7523)
//! of the HTTP client's OAuth, against an authorization server and an MCP server on
//! loopback that check every proof: its signature against the key in its `jwk` header,
//! `typ`, `htm`, `htu`, `ath`, a `jti` never seen before, and that the token it goes
//! with is bound to that key. Nonces demanded by either server are retried once, and a
//! server that keeps demanding new ones fails the connection instead of looping.

#[path = "support/events.rs"]
mod events;
#[path = "support/oauth.rs"]
mod oauth_support;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Validation};
use oauth_support::json_response;
use p256::elliptic_curve::Generate;
use p256::elliptic_curve::pkcs8::{EncodePrivateKey, LineEnding};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use toolwright_core::{ToolContext, tool, tools};
use toolwright_mcp::{HttpClientOptions, McpClient, McpServer, OAuthOptions, WorkloadToken};

/// Answers a fixed word, so that a call is seen to go through.
#[tool]
async fn hello() -> String {
    "hello".to_owned()
}

const CLIENT_ID: &str = "dpop-service";
const SECRET: &str = "dpop-secret";
const WORKLOAD_JWT: &str = "eyJ.workload.jwt";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How the servers behave.
#[derive(Clone, Copy, Default)]
struct Behaviour {
    /// The token endpoint wants a nonce; `rotate`: a new one at every request.
    token_nonce: Option<Rotation>,
    /// The MCP server wants a nonce; likewise.
    resource_nonce: Option<Rotation>,
    /// The token endpoint answers `token_type: Bearer`, binding nothing.
    unbound: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Rotation {
    Fixed,
    Every,
}

/// What the servers saw.
#[derive(Default)]
struct Seen {
    /// Each token request's form.
    token_requests: Vec<HashMap<String, String>>,
    /// Token requests refused for want of a nonce.
    token_nonce_challenges: usize,
    /// The key thumbprint each issued token is bound to.
    bound: HashMap<String, String>,
    /// Every proof's `jti`, in order.
    jtis: Vec<String>,
    /// The `Authorization` scheme of each MCP request with a token.
    schemes: Vec<String>,
    /// The JSON-RPC methods of MCP requests refused for want of a nonce.
    resource_nonce_challenges: Vec<String>,
    /// MCP requests let through.
    passed: Vec<String>,
    /// What was wrong with proofs, if anything.
    bad_proofs: Vec<String>,
    nonce_counter: usize,
}

#[derive(Clone)]
struct Servers {
    issuer: String,
    mcp_url: String,
    behaviour: Behaviour,
    seen: Arc<Mutex<Seen>>,
}

/// A proof's key thumbprint, if the proof is valid for a `method` request to `url`
/// (and, with a token, carries its hash); else what is wrong with it.
fn check_proof(
    headers: &HeaderMap,
    method: &str,
    url: &str,
    token: Option<&str>,
    seen: &mut Seen,
) -> Result<(String, Value), String> {
    let proofs: Vec<_> = headers.get_all("dpop").iter().collect();
    let [proof] = proofs[..] else {
        return Err(format!("{} DPoP headers", proofs.len()));
    };
    let proof = proof.to_str().map_err(|e| e.to_string())?;
    let header = jsonwebtoken::decode_header(proof).map_err(|e| e.to_string())?;
    if header.typ.as_deref() != Some("dpop+jwt") || header.alg != Algorithm::ES256 {
        return Err(format!("typ {:?}, alg {:?}", header.typ, header.alg));
    }
    let jwk: Jwk = header.jwk.ok_or("no jwk header")?;
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| e.to_string())?;
    let mut validation = Validation::new(Algorithm::ES256);
    validation.validate_exp = false;
    validation.required_spec_claims.clear();
    let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .map_err(|e| format!("signature: {e}"))?
        .claims;
    if claims["htm"] != method || claims["htu"] != url {
        return Err(format!("htm {} htu {}", claims["htm"], claims["htu"]));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    if claims["iat"]
        .as_u64()
        .is_none_or(|iat| iat.abs_diff(now) > 60)
    {
        return Err(format!("iat {}", claims["iat"]));
    }
    let jti = claims["jti"].as_str().ok_or("no jti")?.to_owned();
    if seen.jtis.contains(&jti) {
        return Err(format!("jti {jti} used again"));
    }
    seen.jtis.push(jti);
    if let Some(token) = token {
        use sha2::Digest as _;
        let ath = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(sha2::Sha256::digest(token.as_bytes()));
        if claims["ath"] != ath.as_str() {
            return Err(format!("ath {} for {ath}", claims["ath"]));
        }
    } else if claims.get("ath").is_some() {
        return Err("ath on a token request".into());
    }
    let thumbprint = jwk.thumbprint(ThumbprintHash::SHA256).unwrap();
    Ok((thumbprint, claims))
}

/// The nonce a request must carry now, if the server wants one.
fn wanted_nonce(rotation: Option<Rotation>, seen: &mut Seen, prefix: &str) -> Option<String> {
    match rotation? {
        Rotation::Fixed => Some(format!("{prefix}-nonce")),
        Rotation::Every => {
            seen.nonce_counter += 1;
            Some(format!("{prefix}-nonce-{}", seen.nonce_counter))
        }
    }
}

async fn as_metadata(State(servers): State<Servers>) -> Response {
    let issuer = &servers.issuer;
    json_response(
        StatusCode::OK,
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["client_credentials", JWT_BEARER],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
            "dpop_signing_alg_values_supported": ["ES256"],
        }),
    )
}

async fn resource_metadata(State(servers): State<Servers>) -> Response {
    json_response(
        StatusCode::OK,
        json!({ "resource": servers.mcp_url, "authorization_servers": [servers.issuer] }),
    )
}

async fn token(State(servers): State<Servers>, headers: HeaderMap, body: String) -> Response {
    let fields: HashMap<String, String> = form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let mut seen = servers.seen.lock().unwrap();
    seen.token_requests.push(fields.clone());
    let refuse = |error: &str, reason: String| {
        json_response(
            StatusCode::BAD_REQUEST,
            json!({ "error": error, "error_description": reason }),
        )
    };
    let grant_ok = match fields.get("grant_type").map(String::as_str) {
        Some("client_credentials") => {
            fields.get("client_id").map(String::as_str) == Some(CLIENT_ID)
                && fields.get("client_secret").map(String::as_str) == Some(SECRET)
        }
        Some(JWT_BEARER) => {
            if fields.get("scope").is_some_and(|s| s.contains("rejected")) {
                return refuse("invalid_scope", "not for this grant".into());
            }
            fields.get("assertion").map(String::as_str) == Some(WORKLOAD_JWT)
        }
        _ => false,
    };
    if !grant_ok {
        return refuse("invalid_grant", "unknown client or assertion".into());
    }
    let url = format!("{}/token", servers.issuer);
    let bound_to = if headers.contains_key("dpop") {
        match check_proof(&headers, "POST", &url, None, &mut seen) {
            Ok((thumbprint, claims)) => {
                let wanted = wanted_nonce(servers.behaviour.token_nonce, &mut seen, "as");
                if let Some(wanted) = wanted
                    && claims["nonce"] != wanted.as_str()
                {
                    seen.token_nonce_challenges += 1;
                    let mut answer = refuse("use_dpop_nonce", "a nonce, please".into());
                    answer
                        .headers_mut()
                        .insert("dpop-nonce", wanted.parse().unwrap());
                    return answer;
                }
                Some(thumbprint)
            }
            Err(wrong) => {
                seen.bad_proofs.push(format!("token: {wrong}"));
                return refuse("invalid_dpop_proof", wrong);
            }
        }
    } else {
        None
    };
    let access_token = format!("token-{}", seen.token_requests.len());
    let token_type = match bound_to {
        Some(thumbprint) if !servers.behaviour.unbound => {
            seen.bound.insert(access_token.clone(), thumbprint);
            "DPoP"
        }
        _ => "Bearer",
    };
    json_response(
        StatusCode::OK,
        json!({ "access_token": access_token, "token_type": token_type, "expires_in": 3600 }),
    )
}

/// The MCP server's gate: a token, bound tokens with a valid proof by their key, and
/// the nonce when one is wanted.
async fn gate(State(servers): State<Servers>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    let method_name = serde_json::from_slice::<Value>(&bytes).unwrap_or_default()["method"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    if let Err(refusal) = admit(&servers, &parts, method_name) {
        return *refusal;
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether the request with `parts` passes the gate; the refusal if not.
fn admit(
    servers: &Servers,
    parts: &axum::http::request::Parts,
    method_name: String,
) -> Result<(), Box<Response>> {
    let challenge = |error: Option<&str>, nonce: Option<String>| {
        let metadata = format!("{}/.well-known/oauth-protected-resource", servers.issuer);
        let value = match error {
            Some(error) => format!(r#"DPoP error="{error}", resource_metadata="{metadata}""#),
            None => format!(r#"DPoP resource_metadata="{metadata}""#),
        };
        let mut answer = StatusCode::UNAUTHORIZED.into_response();
        answer
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value.parse().unwrap());
        if let Some(nonce) = nonce {
            answer
                .headers_mut()
                .insert("dpop-nonce", nonce.parse().unwrap());
        }
        answer
    };
    let Some(authorization) = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return Err(Box::new(challenge(None, None)));
    };
    let (scheme, token) = authorization.split_once(' ').unwrap_or((authorization, ""));
    let mut seen = servers.seen.lock().unwrap();
    seen.schemes.push(scheme.to_owned());
    let bound = seen.bound.get(token).cloned();
    match (scheme, bound) {
        ("DPoP", Some(jkt)) => {
            let checked = check_proof(
                &parts.headers,
                parts.method.as_str(),
                &servers.mcp_url,
                Some(token),
                &mut seen,
            );
            let claims = match checked {
                Ok((thumbprint, _)) if thumbprint != jkt => {
                    seen.bad_proofs
                        .push("a proof by another key than the token's".into());
                    return Err(Box::new(challenge(Some("invalid_token"), None)));
                }
                Ok((_, claims)) => claims,
                Err(wrong) => {
                    seen.bad_proofs.push(format!("mcp: {wrong}"));
                    return Err(Box::new(challenge(Some("invalid_dpop_proof"), None)));
                }
            };
            let wanted = wanted_nonce(servers.behaviour.resource_nonce, &mut seen, "rs");
            if let Some(wanted) = wanted
                && claims["nonce"] != wanted.as_str()
            {
                seen.resource_nonce_challenges.push(method_name);
                return Err(Box::new(challenge(Some("use_dpop_nonce"), Some(wanted))));
            }
        }
        ("Bearer", None) if !seen.token_requests.is_empty() => {
            if parts.headers.contains_key("dpop") {
                seen.bad_proofs.push("a proof with a bearer token".into());
            }
        }
        _ => {
            seen.bad_proofs
                .push(format!("scheme {scheme} for token {token}"));
            return Err(Box::new(challenge(Some("invalid_token"), None)));
        }
    }
    seen.passed.push(method_name);
    Ok(())
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

/// The authorization server and the MCP server, on one loopback listener.
async fn start(behaviour: Behaviour) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let servers = Servers {
        mcp_url: format!("{issuer}/mcp"),
        issuer,
        behaviour,
        seen: Arc::default(),
    };
    let mcp = McpServer::new(tools![hello])
        .router()
        .layer(middleware::from_fn_with_state(servers.clone(), gate));
    let app = Router::new()
        .route("/.well-known/oauth-authorization-server", get(as_metadata))
        .route(
            "/.well-known/oauth-protected-resource",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route("/token", post(token))
        .with_state(servers.clone())
        .merge(mcp);
    let stop = CancellationToken::new();
    let until = stop.clone().cancelled_owned();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(until)
            .await
    });
    Running {
        mcp_url: servers.mcp_url,
        seen: servers.seen,
        stop,
    }
}

fn dpop_options() -> OAuthOptions {
    OAuthOptions::client_credentials(CLIENT_ID, SECRET)
        .allow_loopback()
        .with_dpop()
        .unwrap()
}

/// Connects with `oauth`, calls the tool twice, and closes.
async fn call_twice(running: &Running, oauth: OAuthOptions) {
    let options = HttpClientOptions::new().with_oauth(oauth);
    let client = McpClient::connect_http_with(&running.mcp_url, &options)
        .await
        .unwrap();
    let tools = client.toolset().unwrap();
    for _ in 0..2 {
        let output = tools
            .call("hello", &json!({}), &ToolContext::default())
            .await
            .unwrap();
        assert_eq!(output[0].as_text(), Some("hello"));
    }
    client.close().await;
}

/// The error connecting with `oauth`; a client that never gives up (retrying nonces
/// forever, say) fails the test after [`events::PATIENCE`].
async fn connect_error(running: &Running, oauth: OAuthOptions) -> String {
    let options = HttpClientOptions::new().with_oauth(oauth);
    let connecting = McpClient::connect_http_with(&running.mcp_url, &options);
    events::within("the connection gives up", connecting)
        .await
        .expect_err("the connection fails")
        .to_string()
}

/// A new P-256 private key in PKCS#8 PEM, and its JWK thumbprint.
fn p256_key() -> (String, String) {
    let secret = p256::SecretKey::generate();
    let der = secret.to_pkcs8_der().unwrap();
    let jwk = Jwk::from_encoding_key(&EncodingKey::from_ec_der(der.as_bytes()), Algorithm::ES256)
        .unwrap();
    let pem = secret.to_pkcs8_pem(LineEnding::LF).unwrap().to_string();
    (pem, jwk.thumbprint(ThumbprintHash::SHA256).unwrap())
}

#[tokio::test]
async fn every_request_carries_a_fresh_proof_by_the_key_the_token_is_bound_to() {
    let running = start(Behaviour::default()).await;
    let oauth = dpop_options();
    let thumbprint = oauth.dpop_thumbprint().unwrap().to_owned();
    call_twice(&running, oauth).await;

    let seen = running.seen.lock().unwrap();
    assert!(seen.bad_proofs.is_empty(), "{:?}", seen.bad_proofs);
    assert_eq!(seen.token_requests.len(), 1);
    assert_eq!(seen.bound.values().collect::<Vec<_>>(), [&thumbprint]);
    // discover (or initialize), list, two calls, at the least; all DPoP.
    assert!(seen.passed.len() >= 4, "{:?}", seen.passed);
    assert!(
        seen.schemes.iter().all(|s| s == "DPoP"),
        "{:?}",
        seen.schemes
    );
    // One proof for the token request and one per MCP request, each with its own jti
    // (a repeated one is a bad proof above).
    assert_eq!(seen.jtis.len(), 1 + seen.schemes.len());
}

#[tokio::test]
async fn a_supplied_key_is_the_one_tokens_are_bound_to() {
    let running = start(Behaviour::default()).await;
    let (pem, thumbprint) = p256_key();
    let oauth = OAuthOptions::client_credentials(CLIENT_ID, SECRET)
        .allow_loopback()
        .with_dpop_key(&pem)
        .unwrap();
    assert_eq!(oauth.dpop_thumbprint(), Some(thumbprint.as_str()));
    call_twice(&running, oauth).await;
    let seen = running.seen.lock().unwrap();
    assert!(seen.bad_proofs.is_empty(), "{:?}", seen.bad_proofs);
    assert_eq!(seen.bound.values().collect::<Vec<_>>(), [&thumbprint]);
}

#[tokio::test]
async fn two_clients_prove_each_with_its_own_key() {
    let running = start(Behaviour::default()).await;
    let (first, second) = (dpop_options(), dpop_options());
    assert_ne!(first.dpop_thumbprint(), second.dpop_thumbprint());
    call_twice(&running, first.clone()).await;
    call_twice(&running, second.clone()).await;
    let seen = running.seen.lock().unwrap();
    // The gate refuses a proof by a key other than the token's and notes it.
    assert!(seen.bad_proofs.is_empty(), "{:?}", seen.bad_proofs);
    let mut bound: Vec<_> = seen.bound.values().map(String::as_str).collect();
    bound.sort();
    let mut keys = [
        first.dpop_thumbprint().unwrap(),
        second.dpop_thumbprint().unwrap(),
    ];
    keys.sort();
    assert_eq!(bound, keys);
}

#[tokio::test]
async fn both_servers_nonces_are_retried_once_and_then_carried() {
    let running = start(Behaviour {
        token_nonce: Some(Rotation::Fixed),
        resource_nonce: Some(Rotation::Fixed),
        unbound: false,
    })
    .await;
    call_twice(&running, dpop_options()).await;
    let seen = running.seen.lock().unwrap();
    assert!(seen.bad_proofs.is_empty(), "{:?}", seen.bad_proofs);
    // Refused once for the nonce, then granted with it.
    assert_eq!(seen.token_requests.len(), 2);
    assert_eq!(seen.token_nonce_challenges, 1);
    // The first request with the token is refused for the nonce, and so is the ping
    // that reads it; every later request carries it and passes.
    let (pings, requests): (Vec<_>, Vec<_>) = seen
        .resource_nonce_challenges
        .iter()
        .partition(|method| *method == "ping");
    assert_eq!(pings.len(), 1, "{:?}", seen.resource_nonce_challenges);
    assert_eq!(requests.len(), 1, "{:?}", seen.resource_nonce_challenges);
    assert!(seen.passed.contains(requests[0]), "{:?}", seen.passed);
    assert_eq!(seen.passed.iter().filter(|m| *m == "tools/call").count(), 2);
}

#[tokio::test]
async fn an_authorization_server_that_always_wants_a_new_nonce_is_asked_twice() {
    let running = start(Behaviour {
        token_nonce: Some(Rotation::Every),
        ..Behaviour::default()
    })
    .await;
    let error = connect_error(&running, dpop_options()).await;
    assert!(error.contains("use_dpop_nonce"), "{error}");
    let seen = running.seen.lock().unwrap();
    assert_eq!(seen.token_requests.len(), 2, "{:?}", seen.token_requests);
}

#[tokio::test]
async fn an_mcp_server_that_always_wants_a_new_nonce_fails_the_request_after_one_retry() {
    let running = start(Behaviour {
        resource_nonce: Some(Rotation::Every),
        ..Behaviour::default()
    })
    .await;
    let error = connect_error(&running, dpop_options()).await;
    assert!(error.contains("DPoP"), "{error}");
    assert!(error.contains("nonce"), "{error}");
    let seen = running.seen.lock().unwrap();
    // The request, the ping that reads the nonce, the retry with it: then the error.
    // (The client may try a second protocol revision, which fails alike.)
    let requests = seen
        .resource_nonce_challenges
        .iter()
        .filter(|m| *m != "ping")
        .count();
    assert!(
        (1..=4).contains(&requests),
        "{:?}",
        seen.resource_nonce_challenges
    );
    assert!(seen.passed.is_empty(), "{:?}", seen.passed);
}

#[tokio::test]
async fn a_token_the_server_does_not_bind_goes_as_bearer_without_a_proof() {
    let running = start(Behaviour {
        unbound: true,
        ..Behaviour::default()
    })
    .await;
    call_twice(&running, dpop_options()).await;
    let seen = running.seen.lock().unwrap();
    assert!(seen.bad_proofs.is_empty(), "{:?}", seen.bad_proofs);
    assert!(!seen.schemes.is_empty());
    assert!(
        seen.schemes.iter().all(|s| s == "Bearer"),
        "{:?}",
        seen.schemes
    );
}

#[test]
fn a_dpop_key_that_is_not_p256_is_refused_at_once() {
    let error = dpop_options().with_dpop_key("not a key").unwrap_err();
    assert!(error.contains("P-256"), "{error}");
}

#[tokio::test]
async fn a_workload_token_is_exchanged_by_the_jwt_bearer_grant() {
    let running = start(Behaviour::default()).await;
    let oauth = OAuthOptions::workload_identity(
        WorkloadToken::Token(WORKLOAD_JWT.to_owned()),
        Some("workload-client".to_owned()),
    )
    .allow_loopback();
    call_twice(&running, oauth).await;
    let seen = running.seen.lock().unwrap();
    assert_eq!(seen.token_requests.len(), 1);
    let request = &seen.token_requests[0];
    assert_eq!(request["grant_type"], JWT_BEARER);
    assert_eq!(request["assertion"], WORKLOAD_JWT);
    assert_eq!(request["client_id"], "workload-client");
    assert_eq!(request["resource"], running.mcp_url);
}

#[tokio::test]
async fn a_workload_token_file_is_read_and_trimmed_and_can_go_with_dpop() {
    let running = start(Behaviour::default()).await;
    let path = std::env::temp_dir().join(format!("workload-token-{}", std::process::id()));
    std::fs::write(&path, format!("{WORKLOAD_JWT}\n")).unwrap();
    let oauth = OAuthOptions::workload_identity(WorkloadToken::File(path.clone()), None)
        .allow_loopback()
        .with_dpop()
        .unwrap();
    call_twice(&running, oauth).await;
    std::fs::remove_file(&path).unwrap();
    let seen = running.seen.lock().unwrap();
    assert!(seen.bad_proofs.is_empty(), "{:?}", seen.bad_proofs);
    assert_eq!(seen.token_requests[0]["assertion"], WORKLOAD_JWT);
    assert!(!seen.token_requests[0].contains_key("client_id"));
    assert!(
        seen.schemes.iter().all(|s| s == "DPoP"),
        "{:?}",
        seen.schemes
    );
}

#[tokio::test]
async fn a_refused_workload_token_fails_once_without_retry_or_another_grant() {
    let running = start(Behaviour::default()).await;
    let oauth = OAuthOptions::workload_identity(
        WorkloadToken::provider(|| async { Ok("eyJ.someone-else".to_owned()) }),
        None,
    )
    .allow_loopback();
    let error = connect_error(&running, oauth).await;
    assert!(error.contains("invalid_grant"), "{error}");
    assert!(error.contains("workload identity token"), "{error}");
    let seen = running.seen.lock().unwrap();
    // Each attempt of the connection (a protocol revision each at most) asks once, by
    // this grant only.
    assert!((1..=2).contains(&seen.token_requests.len()));
    assert!(
        seen.token_requests
            .iter()
            .all(|r| r["grant_type"] == JWT_BEARER)
    );
}

#[tokio::test]
async fn an_empty_or_unreadable_workload_token_is_a_clear_error() {
    let running = start(Behaviour::default()).await;
    let empty =
        OAuthOptions::workload_identity(WorkloadToken::Token("  \n".into()), None).allow_loopback();
    let error = connect_error(&running, empty).await;
    assert!(
        error.contains("workload identity token is empty"),
        "{error}"
    );
    let missing = OAuthOptions::workload_identity(
        WorkloadToken::File("/nonexistent/workload-token".into()),
        None,
    )
    .allow_loopback();
    let error = connect_error(&running, missing).await;
    assert!(error.contains("/nonexistent/workload-token"), "{error}");
    assert!(running.seen.lock().unwrap().token_requests.is_empty());
}

#[test]
fn the_workload_token_stays_out_of_debug_output() {
    let oauth =
        OAuthOptions::workload_identity(WorkloadToken::Token(WORKLOAD_JWT.to_owned()), None);
    let shown = format!("{oauth:?}");
    assert!(!shown.contains(WORKLOAD_JWT), "{shown}");
    assert!(shown.contains("workload_identity"), "{shown}");
}

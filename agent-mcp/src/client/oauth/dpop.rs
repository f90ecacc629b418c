//! DPoP (RFC 9449), proof of possession for access tokens: the client holds an ES256
//! key pair and signs a fresh proof JWT (`typ: dpop+jwt`, its public key in the `jwk`
//! header; `htm`, `htu`, `iat`, `jti`, and `ath` beside a token) for every token
//! request and every request to the MCP server. A token the authorization server binds
//! to the key (`token_type: DPoP`) is sent as `Authorization: DPoP <token>`, with a
//! proof, and never with any other key's proof; a token it does not bind goes as
//! `Bearer`, as before. A server that demands a nonce (`use_dpop_nonce`, the nonce in
//! `DPoP-Nonce`) gets one retry carrying it.

use base64::Engine as _;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use std::collections::VecDeque;
use std::sync::Mutex;

/// The request header that carries a proof.
pub(crate) const PROOF_HEADER: &str = "dpop";
/// The response header a server hands its nonce in.
pub(crate) const NONCE_HEADER: &str = "dpop-nonce";
/// The error code of a server that wants a proof with its nonce.
pub(crate) const USE_NONCE: &str = "use_dpop_nonce";
/// Tokens remembered as bound to the key: the current one and a few it replaced, for
/// requests still in flight with them.
const BOUND_TOKENS_KEPT: usize = 8;

/// An ES256 key pair that DPoP proofs are signed with.
pub(crate) struct DpopKey {
    key: EncodingKey,
    /// The public half, as the proofs' `jwk` header carries it.
    jwk: Jwk,
    /// Its RFC 7638 SHA-256 thumbprint: what a bound token's `cnf.jkt` names.
    thumbprint: String,
}

impl DpopKey {
    /// A new key pair from the operating system's randomness.
    pub(crate) fn generate() -> Result<Self, String> {
        use p256::pkcs8::EncodePrivateKey as _;
        // A P-256 scalar is 32 random bytes below the group order, which almost every
        // draw is; the rare one that is not is drawn again.
        let secret = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes)
                .map_err(|e| format!("no randomness for a DPoP key: {e}"))?;
            if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
                break secret;
            }
        };
        let der = secret
            .to_pkcs8_der()
            .map_err(|e| format!("the DPoP key could not be encoded: {e}"))?;
        Self::new(EncodingKey::from_ec_der(der.as_bytes()))
    }

    /// The key pair in `pem`: a P-256 private key in PKCS#8 PEM.
    pub(crate) fn from_pem(pem: &str) -> Result<Self, String> {
        let key = EncodingKey::from_ec_pem(pem.as_bytes()).map_err(|e| {
            format!("the DPoP key is not a PKCS#8 PEM P-256 private key (ES256): {e}")
        })?;
        Self::new(key)
    }

    fn new(key: EncodingKey) -> Result<Self, String> {
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|e| format!("the DPoP key is not a P-256 private key (ES256): {e}"))?;
        let thumbprint = jwk
            .thumbprint(ThumbprintHash::SHA256)
            .map_err(|e| format!("the DPoP key's thumbprint: {e}"))?;
        let key = Self {
            key,
            jwk,
            thumbprint,
        };
        // A key of another curve parses but cannot sign ES256: fail now, not per request.
        key.proof("POST", "https://example.invalid/", None, None)?;
        Ok(key)
    }

    /// The key's RFC 7638 SHA-256 thumbprint (base64url).
    pub(crate) fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// A fresh proof for a `method` request to `url` (its query and fragment left out,
    /// as `htu` must), bound to `access_token` when one goes with it and carrying the
    /// server's `nonce` when it gave one.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, String> {
        let mut htu = reqwest::Url::parse(url)
            .map_err(|e| format!("a DPoP proof for `{url}`, which is not a URL: {e}"))?;
        htu.set_query(None);
        htu.set_fragment(None);
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| "the system clock is before 1970".to_owned())?
            .as_secs();
        let mut claims = serde_json::json!({
            "jti": oauth2::CsrfToken::new_random().secret(),
            "htm": method,
            "htu": htu.as_str(),
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = access_token_hash(token).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| format!("the DPoP proof could not be signed: {e}"))
    }
}

/// `ath`: the base64url SHA-256 of the access token.
fn access_token_hash(token: &str) -> String {
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token))
}

/// One client's DPoP state: its key, the nonces the servers gave, and the tokens
/// bound to the key.
pub(crate) struct Dpop {
    pub(crate) key: std::sync::Arc<DpopKey>,
    /// The authorization server's latest nonce.
    token_nonce: Mutex<Option<String>>,
    /// The MCP server's latest nonce.
    resource_nonce: Mutex<Option<String>>,
    bound: Mutex<VecDeque<String>>,
}

impl Dpop {
    pub(crate) fn new(key: std::sync::Arc<DpopKey>) -> Self {
        Self {
            key,
            token_nonce: Mutex::new(None),
            resource_nonce: Mutex::new(None),
            bound: Mutex::new(VecDeque::new()),
        }
    }

    pub(crate) fn token_nonce(&self) -> Option<String> {
        lock(&self.token_nonce).clone()
    }

    pub(crate) fn set_token_nonce(&self, nonce: String) {
        *lock(&self.token_nonce) = Some(nonce);
    }

    pub(crate) fn resource_nonce(&self) -> Option<String> {
        lock(&self.resource_nonce).clone()
    }

    pub(crate) fn set_resource_nonce(&self, nonce: String) {
        *lock(&self.resource_nonce) = Some(nonce);
    }

    /// Notes the token in a token endpoint's successful answer as bound to this key
    /// when the server says it is (`token_type: DPoP`).
    pub(crate) fn note_token_response(&self, body: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Issued {
            access_token: String,
            token_type: String,
        }
        let Ok(issued) = serde_json::from_slice::<Issued>(body) else {
            return;
        };
        if issued.token_type.eq_ignore_ascii_case("dpop") {
            let mut bound = lock(&self.bound);
            if bound.len() == BOUND_TOKENS_KEPT {
                bound.pop_front();
            }
            bound.push_back(issued.access_token);
        }
    }

    /// Whether `token` was issued bound to this client's key.
    pub(crate) fn is_bound(&self, token: &str) -> bool {
        lock(&self.bound).iter().any(|bound| bound == token)
    }
}

/// The lock's value even if a thread panicked holding it: the values are plain strings.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether a `WWW-Authenticate` challenge or an OAuth error body asks for a nonce.
pub(crate) fn demands_nonce(challenge_or_body: &str) -> bool {
    challenge_or_body.contains(USE_NONCE)
}

//! The requests an OAuth connection sends to the MCP server, under rmcp's
//! [`AuthClient`](rmcp::transport::auth::AuthClient) (which picks the token): as rmcp
//! sends them, a bearer token, unless the token is DPoP-bound, in which case the token
//! goes under the `DPoP` scheme with a fresh proof, and a `use_dpop_nonce` refusal is
//! retried once with the server's nonce.

use super::dpop::{Dpop, NONCE_HEADER, PROOF_HEADER, demands_nonce};
use futures::stream::BoxStream;
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

type Headers = HashMap<HeaderName, HeaderValue>;
type HttpError = StreamableHttpError<reqwest::Error>;

/// reqwest, with DPoP for the tokens bound to the client's key.
#[derive(Clone)]
pub(crate) struct ResourceHttp {
    pub(crate) http: reqwest::Client,
    pub(crate) dpop: Option<Arc<Dpop>>,
}

impl ResourceHttp {
    /// Runs `call` (one request to the server, in `session` if it has one) with `token`
    /// as the server should get it: given to rmcp as a bearer token, or for a
    /// DPoP-bound token, in the headers with a proof for `method` and `uri`.
    async fn authorized<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        session: Option<&str>,
        token: Option<String>,
        headers: Headers,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let (Some(dpop), Some(token)) = (&self.dpop, token.as_deref()) else {
            return call(token, headers).await;
        };
        if !dpop.is_bound(token) {
            return call(Some(token.to_owned()), headers).await;
        }
        let mut retried = false;
        loop {
            let nonce = dpop.resource_nonce();
            let signed = self.signed(dpop, method, uri, token, nonce.as_deref(), &headers)?;
            match call(None, signed).await {
                Err(StreamableHttpError::AuthRequired(refusal))
                    if demands_nonce(&refusal.www_authenticate_header) =>
                {
                    if retried {
                        return Err(dpop_failed(format!(
                            "{uri} refused the DPoP proof carrying the nonce it had just given \
                             and asked for a new one ({}); the request was retried once",
                            refusal.www_authenticate_header
                        )));
                    }
                    retried = true;
                    let fresh = self
                        .learn_nonce(dpop, uri, session, token, &headers)
                        .await?;
                    dpop.set_resource_nonce(fresh);
                }
                other => return other,
            }
        }
    }

    /// `headers` with the token under the DPoP scheme and a fresh proof.
    fn signed(
        &self,
        dpop: &Dpop,
        method: &str,
        uri: &str,
        token: &str,
        nonce: Option<&str>,
        headers: &Headers,
    ) -> Result<Headers, HttpError> {
        let proof = dpop
            .key
            .proof(method, uri, Some(token), nonce)
            .map_err(dpop_failed)?;
        let mut signed = headers.clone();
        signed.insert(AUTHORIZATION, header_value(&format!("DPoP {token}"))?);
        signed.insert(HeaderName::from_static(PROOF_HEADER), header_value(&proof)?);
        Ok(signed)
    }

    /// The nonce the server at `uri` wants in proofs. rmcp's client reports a `401`'s
    /// challenge but not its other headers, so the nonce is read from the server's
    /// answer to a `ping` (which has no effect if the server takes it) sent with a proof
    /// without the new nonce, which the server has just refused.
    async fn learn_nonce(
        &self,
        dpop: &Dpop,
        uri: &str,
        session: Option<&str>,
        token: &str,
        headers: &Headers,
    ) -> Result<String, HttpError> {
        let stale = dpop.resource_nonce();
        let signed = self.signed(dpop, "POST", uri, token, stale.as_deref(), headers)?;
        let mut request = self
            .http
            .post(uri)
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .json(&serde_json::json!({"jsonrpc": "2.0", "id": "dpop-nonce", "method": "ping"}));
        // The protocol headers that name the request this stands in for are left out.
        for (name, value) in signed {
            let name_str = name.as_str();
            if !(name_str == "mcp-method"
                || name_str == "mcp-name"
                || name_str.starts_with("mcp-param-"))
            {
                request = request.header(name, value);
            }
        }
        request = request.header("mcp-method", "ping");
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let response = request.send().await?;
        let nonce = response
            .headers()
            .get(NONCE_HEADER)
            .and_then(|value| value.to_str().ok())
            .filter(|nonce| !nonce.is_empty())
            .map(str::to_owned);
        match nonce {
            Some(nonce) if Some(&nonce) != stale.as_ref() => Ok(nonce),
            Some(_) => Err(dpop_failed(format!(
                "{uri} asked for a new DPoP nonce (use_dpop_nonce) but gives only the one it refused"
            ))),
            None => Err(dpop_failed(format!(
                "{uri} asked for a DPoP nonce (use_dpop_nonce) without giving one in a \
                 DPoP-Nonce header"
            ))),
        }
    }
}

fn header_value(value: &str) -> Result<HeaderValue, HttpError> {
    HeaderValue::from_str(value).map_err(|_| dpop_failed("a DPoP header value is not valid".into()))
}

fn dpop_failed(reason: String) -> HttpError {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(format!("DPoP: {reason}")))
}

type PostResult = Result<StreamableHttpPostResponse, HttpError>;
type StreamResult = Result<BoxStream<'static, Result<Sse, SseError>>, HttpError>;

impl StreamableHttpClient for ResourceHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: Headers,
    ) -> PostResult {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth, headers, limits)
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
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(uri, message, session_id, auth, headers, limits)
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
        self.authorized(
            "POST",
            &uri,
            session_id.as_deref(),
            auth,
            headers,
            |auth, headers| {
                let (uri, message, session_id) = (uri.clone(), message.clone(), session_id.clone());
                async move {
                    self.http
                        .post_message_with_response_limits(
                            uri, message, session_id, auth, headers, limits,
                        )
                        .await
                }
            },
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: Headers,
    ) -> Result<(), HttpError> {
        self.authorized(
            "DELETE",
            &uri,
            Some(&session_id),
            auth,
            headers,
            |auth, headers| {
                let (uri, session_id) = (uri.clone(), session_id.clone());
                async move {
                    self.http
                        .delete_session(uri, session_id, auth, headers)
                        .await
                }
            },
        )
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
        self.authorized(
            "GET",
            &uri,
            session_id.as_deref(),
            auth,
            headers,
            |auth, headers| {
                let (uri, session_id, last_event_id) =
                    (uri.clone(), session_id.clone(), last_event_id.clone());
                async move {
                    self.http
                        .get_stream(uri, session_id, last_event_id, auth, headers)
                        .await
                }
            },
        )
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
        self.authorized(
            "GET",
            &uri,
            session_id.as_deref(),
            auth,
            headers,
            |auth, headers| {
                let (uri, session_id, last_event_id) =
                    (uri.clone(), session_id.clone(), last_event_id.clone());
                async move {
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
            },
        )
        .await
    }
}

//! Admission to the HTTP endpoint: a cap on requests in flight and on live sessions
//! (503 with `Retry-After` beyond them), bounded request bodies, a deadline on every
//! request, and calls cancelled when their client disconnects. The live sessions are
//! counted by the session table (see `sessions`), whose places this admits.

use super::options::HttpOptions;
use super::sessions::{HttpSessions, Place, SessionUse};
use crate::server::session::SESSION_HEADER;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::combinators::BoxBody;
use hyper::body::{Frame, SizeHint};
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
    RequestId,
};
use rmcp::transport::streamable_http_server::session::local::LocalSessionHandle;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;

/// The admission middleware's state.
pub(crate) struct Admission {
    requests: Arc<Semaphore>,
    max_requests: usize,
    /// The session table, whose places the cap on sessions counts; `None` when serving
    /// without sessions.
    sessions: Option<Arc<HttpSessions>>,
    max_sessions: usize,
    request_timeout: Duration,
    retry_after: HeaderValue,
}

impl Admission {
    pub(crate) fn new(options: &HttpOptions, sessions: Option<Arc<HttpSessions>>) -> Self {
        let max_requests = options
            .max_concurrent_requests
            .clamp(1, Semaphore::MAX_PERMITS);
        Self {
            requests: Arc::new(Semaphore::new(max_requests)),
            max_requests,
            sessions,
            max_sessions: options.max_sessions,
            request_timeout: options.request_timeout,
            retry_after: HeaderValue::from(options.retry_after.as_secs().max(1)),
        }
    }

    fn busy(&self, why: String) -> Response {
        let mut response = refuse(StatusCode::SERVICE_UNAVAILABLE, why);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, self.retry_after.clone());
        response
    }
}

/// A POST's place under the request cap, and, for a request that may open a session,
/// its place under the sessions cap.
pub(crate) struct Admitted {
    pub(crate) permit: OwnedSemaphorePermit,
    /// Given back when dropped, unless the session the request opened took it over.
    pub(crate) place: Option<Place>,
}

impl Admission {
    /// Admits a POST if there is room for it, or answers 503. The permit is to be held
    /// until its response (a streamed one included) has been sent. (The refusal is
    /// boxed: a response is large, and rarely made.)
    pub(crate) fn admit(&self, headers: &HeaderMap) -> Result<Admitted, Box<Response>> {
        let Ok(permit) = self.requests.clone().try_acquire_owned() else {
            return Err(Box::new(self.busy(format!(
                "{} requests are in flight, the most this server answers at once",
                self.max_requests
            ))));
        };
        let opens_session = !headers.contains_key(SESSION_HEADER);
        let place = match (&self.sessions, opens_session) {
            (Some(sessions), true) => match sessions.reserve() {
                Some(place) => Some(place),
                None => {
                    return Err(Box::new(self.busy(format!(
                        "{} sessions are open, the most this server keeps",
                        self.max_sessions
                    ))));
                }
            },
            _ => None,
        };
        Ok(Admitted { permit, place })
    }

    /// When a request admitted now must have been answered.
    pub(crate) fn deadline(&self) -> Pin<Box<Sleep>> {
        Box::pin(tokio::time::sleep(self.request_timeout))
    }

    /// The answer to a request that reached its deadline before its response began.
    pub(crate) fn timed_out(&self) -> Response {
        refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the request took longer than {:?}, this server's limit",
                self.request_timeout
            ),
        )
    }
}

/// A response body that holds its request's place under the cap until it has been sent
/// or dropped, ends at the request's deadline, and cancels the call it answers if it
/// is dropped before its end: the client went away, so no one wants the result.
pub(crate) struct GuardedBody {
    inner: BoxBody<Bytes, Infallible>,
    deadline: Pin<Box<Sleep>>,
    _permit: OwnedSemaphorePermit,
    cancel: Option<CancelCall>,
    /// Keeps the request's session in use (not idle) until the response is sent.
    _session: Option<SessionUse>,
}

impl GuardedBody {
    pub(crate) fn new(
        inner: BoxBody<Bytes, Infallible>,
        deadline: Pin<Box<Sleep>>,
        permit: OwnedSemaphorePermit,
        cancel: Option<CancelCall>,
    ) -> Self {
        Self {
            inner,
            deadline,
            _permit: permit,
            cancel,
            _session: None,
        }
    }

    /// The response belongs to a session, in use until it has been sent.
    pub(crate) fn with_session(mut self, session: Option<SessionUse>) -> Self {
        self._session = session;
        self
    }
}

impl HttpBody for GuardedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        // Past the deadline the response ends here, and the call (still armed) is
        // cancelled when the body is dropped.
        if this.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            // Answered in full: nothing to cancel.
            this.cancel = None;
        }
        polled
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for GuardedBody {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel.send();
        }
    }
}

/// Cancels one call of a session as the client's `notifications/cancelled` would: the
/// call's cancellation token fires, and its tool, permits and stream are released.
pub(crate) struct CancelCall {
    session: LocalSessionHandle,
    request: CalledBy,
}

/// The request a call answers: its body, read only if the call is to be cancelled (a
/// short body costs a reference count to keep), or the id read at once from a long one
/// (so a long body is not kept for the whole call).
enum CalledBy {
    Body(Bytes),
    Id(RequestId),
}

/// Bodies up to this size are kept, unread, while their call runs.
const KEPT_BODY_BYTES: usize = 16 * 1024;

impl CancelCall {
    /// The cancellation of the call `body` asks for in the session `session` uses.
    pub(crate) fn new(session: &SessionUse, body: &Bytes) -> Option<Self> {
        let request = if body.len() <= KEPT_BODY_BYTES {
            CalledBy::Body(body.clone())
        } else {
            CalledBy::Id(request_id(body)?)
        };
        Some(Self {
            session: session.handle().clone(),
            request,
        })
    }

    fn send(self) {
        let request = match self.request {
            CalledBy::Id(id) => Some(id),
            CalledBy::Body(body) => request_id(&body),
        };
        let Some(request) = request else {
            return;
        };
        // Dropped outside a runtime (the server itself shutting down), there is no one
        // to tell, and the session ends with the runtime anyway.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let session = self.session;
        runtime.spawn(async move {
            let cancelled = CancelledNotificationParam::new(
                Some(request),
                Some("the client disconnected before the answer".to_owned()),
            );
            let message = ClientJsonRpcMessage::notification(
                ClientNotification::CancelledNotification(CancelledNotification::new(cancelled)),
            );
            // The session may have ended meanwhile, taking its calls with it.
            let _ = session.push_message(message, None).await;
        });
    }
}

/// The id of the JSON-RPC request in `body`, if it is one.
fn request_id(body: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Probe {
        id: Option<RequestId>,
        method: Option<serde::de::IgnoredAny>,
    }
    let probe: Probe = serde_json::from_slice(body).ok()?;
    probe.method.and(probe.id)
}

/// Reads a POST's body (413 beyond the size limit) and counts its JSON values (413
/// beyond their limit) before the protocol parses it.
///
/// A parsed JSON value costs tens of bytes however few it took to send: 4 MiB of
/// `[0,0,...]` parses into about 100 MiB. Bounding the values bounds what a body
/// becomes in memory, to a small multiple of its size.
pub(crate) async fn read_body(limits: &BodyLimits, body: Body) -> Result<Bytes, Response> {
    let bytes = match axum::body::to_bytes(body, limits.max_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return Err(refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body is over {} bytes, this server's limit",
                    limits.max_bytes
                ),
            ));
        }
    };
    let values = count_json_values(&bytes);
    if values > limits.max_values {
        return Err(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request has over {} JSON values (arrays, objects, members and items), \
                 this server's limit",
                limits.max_values
            ),
        ));
    }
    Ok(bytes)
}

/// The body limits.
pub(crate) struct BodyLimits {
    pub(crate) max_bytes: usize,
    pub(crate) max_values: usize,
}

/// About how many values `json` holds: one, plus one per `,`, `:`, `[` and `{` outside
/// strings. Cheap (one pass, no allocation) and never under the real count of a valid
/// document; invalid ones are for the parser to refuse.
fn count_json_values(json: &[u8]) -> usize {
    let mut count = 1;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in json {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b',' | b':' | b'[' | b'{' => count += 1,
                _ => {}
            }
        }
    }
    count
}

/// A refusal: the status, and a plain-text body that names it and says why.
fn refuse(status: StatusCode, why: String) -> Response {
    let reason = status.canonical_reason().unwrap_or("Refused");
    (status, format!("{reason}: {why}")).into_response()
}

#[cfg(test)]
mod tests {
    use super::count_json_values;

    #[test]
    fn json_values_are_counted_outside_strings_only() {
        assert_eq!(count_json_values(b"0"), 1);
        assert_eq!(count_json_values(b"[0,0,0]"), 4);
        assert!(count_json_values(br#"{"a":[1,2],"b":{"c":3}}"#) >= 7);
        // Punctuation inside strings, escaped quotes included, is text.
        assert_eq!(count_json_values(br#""a,b:[{\",]""#), 1);
    }
}

//! Admission to the HTTP endpoint: a cap on requests in flight and on live sessions
//! (503 with `Retry-After` beyond them), and a deadline on every request.

use crate::http::HttpOptions;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Semaphore;

/// The admission middleware's state.
pub(crate) struct Admission {
    requests: Arc<Semaphore>,
    max_requests: usize,
    /// `None` when serving without sessions.
    sessions: Option<Arc<LocalSessionManager>>,
    max_sessions: usize,
    /// Sessions being opened right now, counted with the live ones so that a burst of
    /// new clients cannot overshoot the cap.
    opening: AtomicUsize,
    request_timeout: Duration,
    retry_after: HeaderValue,
}

impl Admission {
    pub(crate) fn new(options: &HttpOptions, sessions: Option<Arc<LocalSessionManager>>) -> Self {
        let max_requests = options
            .max_concurrent_requests
            .clamp(1, Semaphore::MAX_PERMITS);
        Self {
            requests: Arc::new(Semaphore::new(max_requests)),
            max_requests,
            sessions,
            max_sessions: options.max_sessions,
            opening: AtomicUsize::new(0),
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

/// Admits a request if there is room for it, and holds its place until its response
/// has been sent (a streamed response included) or its deadline passes.
pub(crate) async fn admit(
    State(admission): State<Arc<Admission>>,
    request: Request,
    next: Next,
) -> Response {
    // A client's standalone event stream (GET) stays open for the whole session: it is
    // bounded by the sessions cap, not counted as a request in flight.
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let Ok(permit) = admission.requests.clone().try_acquire_owned() else {
        return admission.busy(format!(
            "{} requests are in flight, the most this server answers at once",
            admission.max_requests
        ));
    };
    let opens_session = !request.headers().contains_key("mcp-session-id");
    let _opening = match (&admission.sessions, opens_session) {
        (Some(sessions), true) => {
            let opening = Opening::new(&admission.opening);
            let live = sessions.sessions.read().await.len();
            if live + opening.count > admission.max_sessions {
                return admission.busy(format!(
                    "{} sessions are open, the most this server keeps",
                    admission.max_sessions
                ));
            }
            Some(opening)
        }
        _ => None,
    };
    let deadline = tokio::time::Instant::now() + admission.request_timeout;
    let Ok(response) = tokio::time::timeout_at(deadline, next.run(request)).await else {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the request took longer than {:?}, this server's limit",
                admission.request_timeout
            ),
        );
    };
    // The place is held until the body has been sent or dropped, and a body still
    // streaming at the deadline ends there.
    let (parts, body) = response.into_parts();
    let body = body
        .into_data_stream()
        .take_until(tokio::time::sleep_until(deadline))
        .map(move |chunk| {
            let _held = &permit;
            chunk
        });
    Response::from_parts(parts, Body::from_stream(body))
}

/// Reads a POST's body (413 beyond the size limit) and counts its JSON values (413
/// beyond their limit) before the protocol parses it.
///
/// A parsed JSON value costs tens of bytes however few it took to send: 4 MiB of
/// `[0,0,...]` parses into about 100 MiB. Bounding the values bounds what a body
/// becomes in memory, to a small multiple of its size.
pub(crate) async fn guard_body(
    State(limits): State<Arc<BodyLimits>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, limits.max_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body is over {} bytes, this server's limit",
                    limits.max_bytes
                ),
            );
        }
    };
    let values = count_json_values(&bytes);
    if values > limits.max_values {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request has over {} JSON values (arrays, objects, members and items), \
                 this server's limit",
                limits.max_values
            ),
        );
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
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

/// One session being opened, counted while it is.
struct Opening<'a> {
    counter: &'a AtomicUsize,
    count: usize,
}

impl<'a> Opening<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        let count = counter.fetch_add(1, Ordering::SeqCst) + 1;
        Self { counter, count }
    }
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
    }
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

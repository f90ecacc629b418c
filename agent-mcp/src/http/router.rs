//! The MCP endpoint as an axum [`Router`]: rmcp's Streamable HTTP service behind our
//! admission limits, body limits and authentication, with the session table's fast path
//! in front.

use super::auth::{self, AuthState, UnknownScopedTool};
use super::limits::{self, Admission, BodyLimits, CancelCall, GuardedBody};
use super::options::HttpOptions;
use super::sessions::{Answer, FastCall, HttpSessions, Opening, SessionEntry, SessionUse};
use super::stateless::StatelessCalls;
use crate::server::McpServer;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use http_body_util::{BodyExt, Full};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;
use tokio::sync::OwnedSemaphorePermit;

impl McpServer {
    /// The MCP endpoint as an axum [`Router`] with default [`HttpOptions`]: Streamable
    /// HTTP at `/mcp`. Mount it anywhere in an application
    /// (`app.nest("/tools", server.router())` serves `/tools/mcp`), or serve it with
    /// [`McpHttpServer`](crate::McpHttpServer).
    pub fn router(&self) -> Router {
        self.router_with(HttpOptions::default())
    }

    /// The MCP endpoint as an axum [`Router`], served as `options` say. With
    /// authentication, the router also serves the protected-resource metadata
    /// (`/.well-known/oauth-protected-resource`, RFC 9728) beside the endpoint.
    ///
    /// A call whose client disconnects before its answer is cancelled (its tool's
    /// cancellation token fires), and the places it held under the limits are freed.
    ///
    /// A `tools/call` of a tool that cannot talk to its client mid-call (it takes no
    /// `ToolContext`, state or progress, and needs no approval), from a session or from
    /// a client of protocol 2026-07-28 (which has no sessions), is answered as
    /// `application/json`, which the Streamable HTTP transport allows and clients
    /// accept; other requests are answered as rmcp's service answers them, calls on an
    /// event stream unless the endpoint is stateless. Every request of a session, a call in flight included, keeps it
    /// from expiring.
    ///
    /// # Panics
    ///
    /// If `options`' authentication requires scopes for a tool the server does not
    /// serve (see [`HttpAuth::require_scopes`](crate::HttpAuth::require_scopes));
    /// [`try_router_with`](Self::try_router_with) returns that as an error instead.
    pub fn router_with(&self, options: HttpOptions) -> Router {
        self.try_router_with(options)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// As [`router_with`](Self::router_with), or an error if `options`'
    /// authentication requires scopes for a tool the server does not serve.
    pub fn try_router_with(&self, options: HttpOptions) -> Result<Router, UnknownScopedTool> {
        Ok(self.endpoint(options)?.0)
    }

    /// The router, and the session table behind it (`None` when serving without
    /// sessions).
    pub(crate) fn endpoint(
        &self,
        options: HttpOptions,
    ) -> Result<(Router, Option<Arc<HttpSessions>>), UnknownScopedTool> {
        if let Some(auth) = &options.auth {
            auth.check_scoped_tools(&self.tools())?;
        }
        let sessions = (!options.stateless).then(|| {
            Arc::new(HttpSessions::new(
                options.max_sessions,
                options.session_idle_timeout,
                &options.allowed_hosts,
                options.cancel.clone(),
            ))
        });
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts.clone())
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes)
            .with_cancellation_token(options.cancel.clone());
        if options.allowed_hosts.is_empty() {
            config = config.disable_allowed_hosts();
        }
        if options.stateless {
            config = config
                .with_legacy_session_mode(false)
                .with_json_response(true);
        }
        let server = self.clone();
        let registry = sessions.as_ref().map(Arc::downgrade);
        let service = StreamableHttpService::new(
            move || {
                Ok(match &registry {
                    Some(registry) => server.for_http_session(registry.clone()),
                    None => server.for_new_session(),
                })
            },
            // Without sessions rmcp never asks its session manager for one: an empty
            // table with no room stands in.
            sessions.clone().unwrap_or_else(|| {
                Arc::new(HttpSessions::new(
                    0,
                    options.session_idle_timeout,
                    &[],
                    options.cancel.clone(),
                ))
            }),
            config,
        );
        // One piece of state shared by every request (an `Arc` clone each) and one
        // handler doing every check in turn: layered middleware would clone rmcp's
        // service, its configuration lists included, at every layer of every request.
        let endpoint = Endpoint {
            service,
            admission: Admission::new(&options, sessions.clone()),
            body_limits: BodyLimits {
                max_bytes: options.max_body_bytes,
                max_values: options.max_json_values,
            },
            auth: options.auth.clone().map(AuthState::new),
            sessions: sessions.clone(),
            stateless: StatelessCalls::new(self, &options.allowed_hosts, options.cancel.clone()),
        };
        let mut router = Router::new().route(
            &options.path,
            any(serve_endpoint).with_state(Arc::new(endpoint)),
        );
        if let Some(auth) = options.auth {
            let metadata = get(auth::resource_metadata).with_state((auth, options.path.clone()));
            router = router
                .route(auth::WELL_KNOWN, metadata.clone())
                .route(&format!("{}{}", auth::WELL_KNOWN, options.path), metadata);
        }
        Ok((router, sessions))
    }
}

/// The header a request of protocol 2026-07-28 names its method in.
const MCP_METHOD_HEADER: &str = "mcp-method";

/// The MCP endpoint: rmcp's Streamable HTTP service behind our limits and
/// authentication.
struct Endpoint {
    service: StreamableHttpService<McpServer, HttpSessions>,
    admission: Admission,
    body_limits: BodyLimits,
    auth: Option<AuthState>,
    /// The session table, which rmcp's service uses too; `None` when serving without
    /// sessions.
    sessions: Option<Arc<HttpSessions>>,
    /// Self-contained requests (protocol 2026-07-28), served with or without sessions.
    stateless: StatelessCalls,
}

async fn serve_endpoint(State(endpoint): State<Arc<Endpoint>>, request: Request) -> Response {
    endpoint.handle(request).await
}

impl Endpoint {
    /// Admission (POST only), then authentication, then the body's limits (POST only),
    /// then rmcp, under the request's deadline.
    ///
    /// rmcp's future and the fast path's are boxed where they start: held inline, they
    /// made this future kilobytes large, copied whole as tower and hyper moved it before
    /// its first poll (callgrind: most of a request's `memcpy`).
    async fn handle(&self, mut request: Request) -> Response {
        // A client's standalone event stream (GET) stays open for the whole session: it
        // is bounded by the sessions cap, not counted as a request in flight. DELETE
        // carries no body.
        if request.method() != Method::POST {
            let session = self.find_session(request.headers());
            if let Err(refused) = self.authenticate(&mut request, session.as_deref()).await {
                return refused;
            }
            let used = self.use_session(session);
            let response = Box::pin(self.service.handle(request)).await;
            drop(used);
            return response.map(Body::new);
        }
        let admitted = match self.admission.admit(request.headers()) {
            Ok(admitted) => admitted,
            Err(refused) => return *refused,
        };
        let session = self.find_session(request.headers());
        let owner = match self.authenticate(&mut request, session.as_deref()).await {
            Ok(owner) => owner,
            Err(refused) => return refused,
        };
        let (parts, body) = request.into_parts();
        let bytes = match limits::read_body(&self.body_limits, body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        let used = self.use_session(session);
        let (parts, bytes) = match &self.sessions {
            Some(sessions) if let Some(session) = &used => {
                match sessions.fast_call(parts, bytes, session).await {
                    Ok(call) => return self.answer(call, admitted.permit, used).await,
                    Err(request) => request,
                }
            }
            _ if used.is_none()
                && let Some(planned) = self.stateless.plan(&parts.headers, &bytes) =>
            {
                let call = self.stateless.call(planned, parts);
                return self.answer(call, admitted.permit, None).await;
            }
            _ => (parts, bytes),
        };
        // A call of a session answers on an event stream. If that stream is dropped
        // before its end, the client is gone: rmcp would keep the call running (for a
        // client that might resume the stream), holding its places; it is cancelled.
        let cancel = used
            .as_ref()
            .and_then(|session| CancelCall::new(session, &bytes));
        let listen = parts
            .headers
            .get(MCP_METHOD_HEADER)
            .is_some_and(|method| method.as_bytes() == b"subscriptions/listen");
        let request = Request::from_parts(parts, Full::new(bytes));
        let mut deadline = self.admission.deadline();
        // A session rmcp opens for this request is created with its place under the cap
        // and its principal (see `sessions`).
        let opening = Opening::new(admitted.place, owner);
        let response = tokio::select! {
            response = opening.scope(Box::pin(self.service.handle(request))) => response,
            () = deadline.as_mut() => return self.admission.timed_out(),
        };
        let streamed = response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
        // A `subscriptions/listen` stream (protocol 2026-07-28) is meant to stay open:
        // like a session's standalone stream, it neither ends at the request deadline
        // nor holds a place among the requests in flight. The server bounds how many
        // each caller keeps open. (rmcp refuses a request whose body is not the method
        // this header names, so the header cannot be borrowed by another request.)
        if listen && streamed && response.status().is_success() {
            drop(admitted.permit);
            return response.map(Body::new);
        }
        let cancel = cancel.filter(|_| streamed);
        let (parts, body) = response.into_parts();
        let body = GuardedBody::new(body, deadline, admitted.permit, cancel).with_session(used);
        Response::from_parts(parts, Body::new(body))
    }

    /// The live session a request names (`None` without sessions, or for a session
    /// this endpoint does not know, which rmcp answers 404). Looked up once a request.
    fn find_session(&self, headers: &HeaderMap) -> Option<Arc<SessionEntry>> {
        let sessions = self.sessions.as_ref()?;
        sessions.start_sweeping();
        sessions.find(headers)
    }

    /// Checks the request's token, if the endpoint authenticates, against the owner of
    /// `session`: the subject of the principal admitted, or the refusal to answer.
    async fn authenticate(
        &self,
        request: &mut Request,
        session: Option<&SessionEntry>,
    ) -> Result<Option<String>, Response> {
        match &self.auth {
            Some(auth) => auth
                .check(request, session.and_then(SessionEntry::owner))
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// The session `session`, in use until the guard is dropped.
    fn use_session(&self, session: Option<Arc<SessionEntry>>) -> Option<SessionUse> {
        Some(self.sessions.as_ref()?.used(session?))
    }

    /// Answers a call on the fast path, as JSON, under the request's deadline. If the
    /// client disconnects, this future is dropped and the call with it (cancelled).
    async fn answer(
        &self,
        call: FastCall,
        permit: OwnedSemaphorePermit,
        used: Option<SessionUse>,
    ) -> Response {
        let mut deadline = self.admission.deadline();
        let answer = tokio::select! {
            answer = Box::pin(call.answer()) => answer,
            () = deadline.as_mut() => return self.admission.timed_out(),
        };
        let Ok(Answer { status, body }) = answer else {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                "Internal Server Error: the call's answer could not be written as JSON",
            )
                .into_response();
        };
        let body = Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed();
        let body = GuardedBody::new(body, deadline, permit, None).with_session(used);
        let mut response = Response::new(Body::new(body));
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        response
    }
}

//! Streamable HTTP: an [`McpServer`](crate::McpServer) as an axum
//! [`Router`](axum::Router) an application mounts, and [`McpHttpServer`], the standalone
//! server built on that router. A request passes through, in order: `router` (host and
//! origin checks, admission, body limits), `auth` (bearer tokens, the caller's
//! principal), `sessions` (the one session table, which rmcp's service keeps its
//! sessions in too, and which answers an initialized session's plain calls itself),
//! `stateless` (which answers plain self-contained calls of protocol 2026-07-28 itself)
//! and rmcp's Streamable HTTP service. `limits` holds the admission and body limits,
//! `options` what configures them, `serve` the standalone server.

pub(crate) mod auth;
pub(crate) mod limits;
mod options;
mod router;
mod serve;
pub(crate) mod sessions;
mod stateless;

pub use options::HttpOptions;
pub use serve::{McpHttpServer, serve_http, shutdown_signal};

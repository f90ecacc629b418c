#![allow(dead_code)] // each test binary uses its own part of this helper.

//! What the OAuth tests' loopback authorization and MCP servers share.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// A JSON answer with `status`, as an authorization server gives its metadata, tokens
/// and errors.
pub fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

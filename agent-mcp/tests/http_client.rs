//! `McpClient::connect_http_with`: headers and bearer tokens reach the server, a token
//! provider is asked again before requests, and no process-wide TLS provider is
//! installed along the way.

use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::{Arc, Mutex};
use toolwright_core::{
    AgentError, AgentResult, Principal, State, ToolContext, ToolError, ToolErrorKind, tool, tools,
};
use toolwright_mcp::{
    HttpAuth, HttpClientOptions, HttpOptions, McpClient, McpPeer, McpServer, StaticTokens,
};

/// Answers who is calling.
#[tool]
async fn whoami(ctx: &ToolContext) -> String {
    ctx.principal()
        .map_or("nobody", |principal| principal.subject.as_str())
        .to_owned()
}

/// Refuses requests without the `X-Tenant: acme` header.
async fn require_tenant(request: Request, next: Next) -> Response {
    match request.headers().get("x-tenant") {
        Some(value) if value == "acme" => next.run(request).await,
        _ => (StatusCode::FORBIDDEN, "no tenant").into_response(),
    }
}

/// A server taking `alice-token` and `bob-token`, behind a tenant check; its URL.
async fn serve() -> String {
    let tokens = StaticTokens::new()
        .with_token("alice-token", Principal::new("alice"))
        .with_token("bob-token", Principal::new("bob"));
    let router = McpServer::new(tools![whoami])
        .router_with(HttpOptions::default().with_auth(HttpAuth::new(tokens)))
        .layer(from_fn(require_tenant));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    url
}

/// The message of the `InvalidState` error a refused connection must be.
#[track_caller]
fn refused(result: AgentResult<McpClient>) -> String {
    match result {
        Err(AgentError::InvalidState(message)) => message,
        Err(other) => panic!("expected AgentError::InvalidState, got {other:?}"),
        Ok(_) => panic!("the connection was accepted"),
    }
}

async fn whoami_of(client: &McpClient) -> String {
    let set = client.toolset().unwrap();
    let out = set
        .call("whoami", &json!({}), &ToolContext::default())
        .await
        .unwrap();
    out[0].as_text().unwrap().to_owned()
}

#[tokio::test]
async fn headers_and_a_fixed_token_reach_the_server() {
    let url = serve().await;
    let options = HttpClientOptions::new()
        .with_header("X-Tenant", "acme")
        .with_bearer_token("alice-token");
    let client = McpClient::connect_http_with(&url, &options).await.unwrap();
    assert_eq!(whoami_of(&client).await, "alice");
    client.close().await;

    // Without the header, or with a wrong token, the server refuses the connection.
    let no_tenant = HttpClientOptions::new().with_bearer_token("alice-token");
    let message = refused(McpClient::connect_http_with(&url, &no_tenant).await);
    assert!(
        message.starts_with(&format!("MCP initialization with {url} failed")),
        "{message}"
    );
    assert!(
        message.contains("HTTP 403 Forbidden: no tenant"),
        "{message}"
    );
    let wrong = HttpClientOptions::new()
        .with_header("X-Tenant", "acme")
        .with_bearer_token("mallory-token");
    let message = refused(McpClient::connect_http_with(&url, &wrong).await);
    // The server's 401 (with its challenge), which the transport reports as such.
    assert!(
        message.starts_with(&format!("MCP initialization with {url} failed")),
        "{message}"
    );
    assert!(message.contains("error: Auth required"), "{message}");
    // Nothing was installed process-wide to speak TLS.
    assert!(rustls::crypto::CryptoProvider::get_default().is_none());
}

#[tokio::test]
async fn a_token_provider_is_asked_before_requests() {
    let url = serve().await;
    let current = Arc::new(Mutex::new("alice-token".to_owned()));
    let token = current.clone();
    let options = HttpClientOptions::new()
        .with_header("X-Tenant", "acme")
        .with_token_provider(move || {
            let token = token.lock().unwrap().clone();
            async move { Ok::<_, String>(token) }
        });
    let client = McpClient::connect_http_with(&url, &options).await.unwrap();
    assert_eq!(whoami_of(&client).await, "alice");
    // The token the provider gives now is the one the next request carries: a revoked
    // one is refused, a refreshed one works again.
    *current.lock().unwrap() = "revoked-token".to_owned();
    let set = client.toolset().unwrap();
    let refused = set
        .call("whoami", &json!({}), &ToolContext::default())
        .await;
    let error = refused.unwrap_err();
    assert_eq!(
        error.tool_error_kind(),
        Some(ToolErrorKind::Execution),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("calling `whoami` on the MCP server failed"),
        "{message}"
    );
    assert!(message.contains("error: Auth required"), "{message}");
    *current.lock().unwrap() = "alice-token".to_owned();
    let client = McpClient::connect_http_with(&url, &options).await.unwrap();
    assert_eq!(whoami_of(&client).await, "alice");
}

#[tokio::test]
async fn an_invalid_header_is_an_error_naming_it() {
    let options = HttpClientOptions::new().with_header("Bad Header", "x");
    let message = refused(McpClient::connect_http_with("http://127.0.0.1:9/mcp", &options).await);
    assert!(
        message.starts_with(
            "cannot connect to http://127.0.0.1:9/mcp: invalid header name `Bad Header`"
        ),
        "{message}"
    );
}

/// Searches the web.
#[tool(name = "search")]
async fn web_search(query: String) -> String {
    format!("web: {query}")
}

/// Searches the documentation.
#[tool(name = "search")]
async fn docs_search(query: String) -> String {
    format!("docs: {query}")
}

#[tokio::test]
async fn two_servers_that_both_have_search_are_used_together() {
    let mut urls = Vec::new();
    for tools in [tools![web_search], tools![docs_search]] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("http://{}/mcp", listener.local_addr().unwrap()));
        let router = McpServer::new(tools).router();
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
    }
    let web = McpClient::connect_http(&urls[0]).await.unwrap();
    let docs = McpClient::connect_http(&urls[1]).await.unwrap();
    let mut both = web.toolset().unwrap().prefixed("web").unwrap();
    both.extend(docs.toolset().unwrap().prefixed("docs").unwrap())
        .unwrap();
    let ctx = ToolContext::default();
    let query = json!({"query": "tokio"});
    let web_out = both.call("web_search", &query, &ctx).await.unwrap();
    let docs_out = both.call("docs_search", &query, &ctx).await.unwrap();
    assert_eq!(web_out[0].as_text(), Some("web: tokio"));
    assert_eq!(docs_out[0].as_text(), Some("docs: tokio"));
}

/// Asks the user's name.
#[tool]
async fn ask_name(peer: State<McpPeer>) -> Result<String, ToolError> {
    if !peer.client_supports("elicitation") {
        return Ok("cannot ask".to_owned());
    }
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let answer = peer
        .request(
            "elicitation/create",
            json!({"mode": "form", "message": "Your name?", "requestedSchema": schema}),
        )
        .await?;
    let action = answer["action"].as_str().unwrap_or("?");
    let name = answer["content"]["name"].as_str().unwrap_or("-");
    Ok(format!("{action}: {name}"))
}

#[tokio::test]
async fn a_client_with_an_elicitation_answer_is_asked_and_one_without_is_not() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = McpServer::new(tools![ask_name]).router();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    // Over 2025-11-25 sessions, where the server asks by a server-to-client request;
    // the same handler answers a 2026-07-28 server's `input_required`
    // (tests/client_2026.rs).
    let on_sessions = || HttpClientOptions::new().with_protocol_version("2025-11-25");
    let answering = on_sessions().with_elicitation(|message, schema| async move {
        let mut content = serde_json::Map::new();
        if message == "Your name?" && schema["properties"]["name"]["type"] == "string" {
            content.insert("name".to_owned(), json!("Ada"));
        }
        Some(content)
    });
    let declining = on_sessions().with_elicitation(|_, _| async { None });
    for (options, expected) in [
        (answering, "accept: Ada"),
        (declining, "decline: -"),
        (on_sessions(), "cannot ask"),
    ] {
        let client = McpClient::connect_http_with(&url, &options).await.unwrap();
        let set = client.toolset().unwrap();
        let out = set
            .call("ask_name", &json!({}), &ToolContext::default())
            .await
            .unwrap();
        assert_eq!(out[0].as_text(), Some(expected));
    }
}

//! An MCP endpoint inside an ordinary axum application, next to its own routes, taking
//! JWT access tokens from an OAuth authorization server.
//!
//! ```text
//! cargo run -p agent-examples --example mcp-in-axum -- \
//!     --jwks-url https://auth.example.com/.well-known/jwks.json \
//!     --issuer https://auth.example.com \
//!     --audience http://127.0.0.1:8000/api/mcp
//! ```
//!
//! `GET /health` is the application's own; `/api/mcp` is the MCP endpoint. A request
//! without a valid token gets 401 with a `WWW-Authenticate` header pointing at
//! `/api/.well-known/oauth-protected-resource/mcp`, the metadata that names the
//! authorization server. Tokens must be issued by `--issuer` for `--audience`, signed
//! with a key from `--jwks-url`; `report` is listed and callable only with the `reports`
//! scope.

use axum::Router;
use axum::routing::get;
use toolwright_core::{ToolContext, tool, tools};
use toolwright_mcp::{HttpAuth, HttpOptions, JwtValidator, McpServer};

/// Says who is calling: the token's subject.
#[tool(read_only)]
async fn whoami(ctx: &ToolContext) -> String {
    ctx.principal()
        .map_or("anonymous", |principal| principal.subject.as_str())
        .to_owned()
}

/// This month's report (needs the `reports` scope).
#[tool(read_only)]
async fn report() -> &'static str {
    "all systems nominal"
}

/// The value of `--name VALUE` on the command line.
fn arg(name: &str) -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == name {
            return args.next();
        }
    }
    None
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (Some(jwks_url), Some(issuer), Some(audience)) =
        (arg("--jwks-url"), arg("--issuer"), arg("--audience"))
    else {
        eprintln!(
            "usage: mcp-in-axum --jwks-url URL --issuer ISSUER --audience RESOURCE [--addr ADDR]"
        );
        std::process::exit(2);
    };
    let addr = arg("--addr").unwrap_or_else(|| "127.0.0.1:8000".to_owned());

    let auth = HttpAuth::new(JwtValidator::new(jwks_url, issuer.clone(), audience))
        .with_authorization_server(issuer)
        .require_scopes("report", ["reports"]);
    let mcp = McpServer::new(tools![whoami, report]);
    let app = Router::new().route("/health", get(|| async { "ok" })).nest(
        "/api",
        mcp.router_with(HttpOptions::default().with_auth(auth)),
    );

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("listening on http://{}/api/mcp", listener.local_addr()?);
    // Ctrl-C or SIGTERM stops accepting and lets the calls in flight finish.
    axum::serve(listener, app)
        .with_graceful_shutdown(toolwright_mcp::shutdown_signal())
        .await?;
    Ok(())
}

//! An MCP client: connects to the server at the URL given, lists its tools, and calls
//! each with example arguments made from its input schema, printing what it answers.
//!
//! ```text
//! cargo run -p agent-examples --example mcp-server -- --http 127.0.0.1:8000 &
//! cargo run -p agent-examples --example mcp-client -- http://127.0.0.1:8000/mcp
//! ```
//!
//! With `--arguments TOOL=JSON` the client calls TOOL with those arguments instead of
//! example ones.
//!
//! With `--echo-schema ECHO=SOURCE` the client calls the tool ECHO with
//! `{"schema": <SOURCE's input schema>}` instead of example arguments, which shows a
//! server the schema exactly as the client keeps it.
//!
//! With `--token TOKEN` every request carries `Authorization: Bearer TOKEN`. When a
//! tool asks for input (MCP elicitation), the client accepts the form with its default
//! values, as a user who presses Enter would.
//!
//! With `--oauth` the client gets its token by OAuth 2.1 when the server asks for one:
//! it discovers the authorization server, registers (or uses `--client-id ID` and
//! `--client-secret SECRET`, or the metadata document at `--client-metadata-url URL`),
//! and runs the authorization-code flow with PKCE. Where a person would open the
//! authorization URL in a browser, this client requests it itself and reads the code
//! from the redirect, which suits authorization servers that grant without asking (test
//! servers). `--client-credentials` (with `--client-id` and `--client-secret`) uses
//! the client-credentials grant instead; with `--signing-key-file PEM` and
//! `--signing-algorithm ALG` (`ES256`, say) in place of the secret, the client
//! authenticates with a JWT signed by that private key (`private_key_jwt`);
//! `--id-token TOKEN` (with `--idp-issuer`,
//! `--idp-token-endpoint`, `--idp-client-id`, `--client-id` and `--client-secret`)
//! exchanges a user's ID token from their organisation's identity provider
//! (enterprise-managed authorization); `--workload-token JWT` (or
//! `--workload-token-file PATH`, read at each authorization), with `--client-id`
//! when the authorization server wants one, exchanges a workload's identity token by
//! the JWT bearer grant. `--dpop` binds the tokens to a key pair the client generates
//! (DPoP), or to the P-256 key in `--dpop-key-file PEM`. `--scope SCOPE` (repeatable)
//! sets the scopes.
//! The URLs the server hands out are followed only to public addresses unless
//! `--allow-loopback` (servers on this machine, as in development) or
//! `--allow-private-networks` says otherwise.
//!
//! ```text
//! cargo run -p agent-examples --example mcp-client -- --oauth https://tools.example.com/mcp
//! ```

use serde_json::{Map, Value, json};
use toolwright_core::{ToolContext, tool::ToolExposure};
use toolwright_mcp::{
    EnterpriseIdentity, HttpClientOptions, McpClient, OAuthOptions, WorkloadToken,
};

/// An example value for a property of this schema: its default, its first enum value,
/// or a plain value of its type.
fn example_value(schema: &Value) -> Value {
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number" | "integer") => json!(1),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => example_arguments(schema),
        _ => json!("example"),
    }
}

/// Arguments giving every required property of `schema` an example value.
fn example_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let property = &schema["properties"][name];
        arguments.insert(name.to_owned(), example_value(property));
    }
    Value::Object(arguments)
}

/// The default value of each property of a form's schema that has one.
fn form_defaults(schema: &Value) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    properties
        .into_iter()
        .flatten()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect()
}

/// Requests the authorization URL as a browser would, without following the redirect
/// back to the client, and answers the URL it redirects to (which carries the code).
async fn visit(url: String) -> Result<String, String> {
    println!("authorizing at {url}");
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let response = http.get(&url).send().await.map_err(|e| e.to_string())?;
    let location = response.headers().get(reqwest::header::LOCATION);
    let location = location.ok_or_else(|| {
        format!(
            "the authorization server answered {} without redirecting back",
            response.status()
        )
    })?;
    location
        .to_str()
        .map(str::to_owned)
        .map_err(|e| e.to_string())
}

/// Removes `flag` from `args`, answering whether it was there.
fn take_flag(args: &mut Vec<String>, flag: &str) -> bool {
    let at = args.iter().position(|a| a == flag);
    at.map(|at| args.remove(at)).is_some()
}

/// Removes every `flag VALUE` from `args`, answering the values.
fn take_values(args: &mut Vec<String>, flag: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    while let Some(at) = args.iter().position(|a| a == flag) {
        if at + 1 >= args.len() {
            return Err(format!("{flag} needs a value"));
        }
        values.push(args.remove(at + 1));
        args.remove(at);
    }
    Ok(values)
}

/// The OAuth settings the flags ask for, if any.
fn oauth_options(args: &mut Vec<String>) -> Result<Option<OAuthOptions>, String> {
    let oauth = take_flag(args, "--oauth");
    let client_credentials = take_flag(args, "--client-credentials");
    let client_id = take_values(args, "--client-id")?.pop();
    let secret = take_values(args, "--client-secret")?.pop();
    let metadata_url = take_values(args, "--client-metadata-url")?.pop();
    let scopes = take_values(args, "--scope")?;
    let id_token = take_values(args, "--id-token")?.pop();
    let idp_issuer = take_values(args, "--idp-issuer")?.pop();
    let idp_token_endpoint = take_values(args, "--idp-token-endpoint")?.pop();
    let idp_client_id = take_values(args, "--idp-client-id")?.pop();
    let signing_key_file = take_values(args, "--signing-key-file")?.pop();
    let signing_algorithm = take_values(args, "--signing-algorithm")?.pop();
    let allow_loopback = take_flag(args, "--allow-loopback");
    let allow_private = take_flag(args, "--allow-private-networks");
    let workload_token = take_values(args, "--workload-token")?.pop();
    let workload_token_file = take_values(args, "--workload-token-file")?.pop();
    let dpop = take_flag(args, "--dpop");
    let dpop_key_file = take_values(args, "--dpop-key-file")?.pop();
    let workload = match (workload_token, workload_token_file) {
        (Some(token), _) => Some(WorkloadToken::Token(token)),
        (None, Some(path)) => Some(WorkloadToken::File(path.into())),
        (None, None) => None,
    };
    let mut options = if let Some(workload) = workload {
        OAuthOptions::workload_identity(workload, client_id)
    } else if let Some(id_token) = id_token {
        let identity = EnterpriseIdentity {
            issuer: idp_issuer.ok_or("--id-token needs --idp-issuer")?,
            token_endpoint: idp_token_endpoint.ok_or("--id-token needs --idp-token-endpoint")?,
            client_id: idp_client_id.ok_or("--id-token needs --idp-client-id")?,
            id_token,
        };
        let id = client_id.ok_or("--id-token needs --client-id")?;
        let secret = secret.ok_or("--id-token needs --client-secret")?;
        OAuthOptions::enterprise_managed(identity, id, secret)
    } else if let (true, Some(path)) = (client_credentials, signing_key_file) {
        let id = client_id.ok_or("--client-credentials needs --client-id")?;
        let algorithm = signing_algorithm.ok_or("--signing-key-file needs --signing-algorithm")?;
        let pem = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading the signing key {path}: {e}"))?;
        OAuthOptions::client_credentials_jwt(id, &pem, &algorithm)?
    } else if client_credentials {
        let id = client_id.ok_or("--client-credentials needs --client-id")?;
        let secret = secret.ok_or("--client-credentials needs --client-secret")?;
        OAuthOptions::client_credentials(id, secret)
    } else if oauth {
        let mut options = OAuthOptions::authorization_code("http://localhost:8400/callback", visit)
            .with_client_name("agent-tools mcp-client");
        if let Some(id) = client_id {
            options = options.with_client(id, secret);
        }
        if let Some(url) = metadata_url {
            options = options.with_client_metadata_url(url);
        }
        options
    } else {
        return Ok(None);
    };
    if !scopes.is_empty() {
        options = options.with_scopes(scopes);
    }
    if allow_loopback {
        options = options.allow_loopback();
    }
    if allow_private {
        options = options.allow_private_networks();
    }
    if let Some(path) = dpop_key_file {
        let pem = std::fs::read_to_string(&path)
            .map_err(|e| format!("reading the DPoP key {path}: {e}"))?;
        options = options.with_dpop_key(&pem)?;
    } else if dpop {
        options = options.with_dpop()?;
    }
    Ok(Some(options))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // HTTPS for the authorization request this example makes itself.
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut options = HttpClientOptions::new().with_elicitation(|message, schema| async move {
        println!("the server asks: {message}");
        Some(form_defaults(&schema))
    });
    if let Some(token) = take_values(&mut args, "--token")?.pop() {
        options = options.with_bearer_token(token);
    }
    if let Some(oauth) = oauth_options(&mut args)? {
        options = options.with_oauth(oauth);
    }
    let given = take_values(&mut args, "--arguments")?
        .into_iter()
        .map(|pair| {
            let (tool, arguments) = pair
                .split_once('=')
                .ok_or_else(|| format!("--arguments takes TOOL=JSON, not `{pair}`"))?;
            let arguments: Value = serde_json::from_str(arguments)
                .map_err(|e| format!("--arguments for {tool}: not JSON ({e})"))?;
            Ok::<_, String>((tool.to_owned(), arguments))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let echo = take_values(&mut args, "--echo-schema")?
        .into_iter()
        .map(|pair| match pair.split_once('=') {
            Some((echo, source)) => Ok((echo.to_owned(), source.to_owned())),
            None => Err(format!("--echo-schema takes ECHO=SOURCE, not `{pair}`")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let Some(url) = args.last() else {
        eprintln!(
            "usage: mcp-client [--token TOKEN] [--oauth | --client-credentials] \
             [--client-id ID] [--client-secret SECRET] [--client-metadata-url URL] \
             [--signing-key-file PEM --signing-algorithm ALG] \
             [--id-token TOKEN --idp-issuer URL --idp-token-endpoint URL --idp-client-id ID] \
             [--workload-token JWT | --workload-token-file PATH] \
             [--dpop | --dpop-key-file PEM] \
             [--scope SCOPE]... [--allow-loopback] [--allow-private-networks] \
             [--arguments TOOL=JSON]... [--echo-schema ECHO=SOURCE]... URL"
        );
        std::process::exit(2);
    };
    let client = McpClient::connect_http_with(url, &options).await?;
    println!("connected to {}", client.server_name());
    let tools = client.toolset()?;
    let ctx = ToolContext::default();
    for tool in tools
        .iter()
        .filter(|t| t.exposure() == ToolExposure::Direct)
    {
        let source = echo.iter().find(|(name, _)| name == tool.name());
        let arguments = given.iter().find(|(name, _)| name == tool.name());
        let arguments = match (arguments, source.and_then(|(_, source)| tools.get(source))) {
            (Some((_, arguments)), _) => arguments.clone(),
            (None, Some(source)) => json!({"schema": source.schema()}),
            (None, None) => example_arguments(&tool.schema()),
        };
        match tools.call(tool.name(), &arguments, &ctx).await {
            Ok(output) => {
                let text: Vec<&str> = output.iter().filter_map(|c| c.as_text()).collect();
                println!("{}({arguments}) -> {}", tool.name(), text.join(" "));
            }
            Err(error) => println!("{}({arguments}) failed: {error}", tool.name()),
        }
    }
    client.close().await;
    Ok(())
}

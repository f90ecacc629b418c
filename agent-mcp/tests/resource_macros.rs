//! Resources, a resource template and prompts written with `#[resource]` and
//! `#[prompt]`, collected with `resources![]` and `prompts![]`, served by `McpServer`
//! over Streamable HTTP and read back by `McpClient` on both protocol versions: what the
//! fns return arrives as text, JSON or base64 bytes, template variables and prompt
//! arguments are parsed into the parameters' types, and what cannot be parsed is
//! refused with a message naming it.

#[path = "support/raw_http.rs"]
mod raw_http;

use raw_http::serve_on_loopback;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toolwright_core::{Principal, ToolContext, ToolSet};
use toolwright_mcp::prompts::{PromptArgument, PromptMessage, PromptRole};
use toolwright_mcp::resources::{
    Audience, FeatureError, FeatureErrorKind, Icon, ResourceBody, ResourceContent,
};
use toolwright_mcp::{
    HttpAuth, HttpClientOptions, HttpOptions, McpClient, McpServer, StaticTokens, prompt, prompts,
    resource, resources,
};

/// The app's settings.
#[resource(uri = "config://app", title = "App settings")]
async fn settings() -> Settings {
    Settings {
        debug: false,
        workers: 4,
    }
}

#[derive(Serialize)]
struct Settings {
    debug: bool,
    workers: u32,
}

/// Release notes.
#[resource(
    uri = "notes://release",
    name = "release-notes",
    mime_type = "text/markdown"
)]
async fn notes() -> &'static str {
    "# 1.0\nFirst release."
}

/// The logo.
#[resource(uri = "logo://png", mime_type = "image/png")]
async fn logo() -> Vec<u8> {
    vec![0x89, b'P', b'N', b'G']
}

/// The session the read came in, which the fn takes from its context.
#[resource(uri = "whoami://session")]
async fn whoami(ctx: &ToolContext) -> String {
    format!("session {}", ctx.session_id())
}

/// The files whose names begin like `typed`.
fn file_names(typed: &str) -> Vec<&'static str> {
    ["readme", "release", "license"]
        .into_iter()
        .filter(|name| name.starts_with(typed))
        .collect()
}

/// A line of a file.
#[resource(template = "files://{name}/lines/{line}")]
async fn line(
    #[arg(complete = file_names)] name: String,
    line: u32,
) -> Result<ResourceContent, FeatureError> {
    if name != "readme" {
        return Err(FeatureError::not_found(format!("no file `{name}`")));
    }
    Ok(ResourceContent::text(format!("line {line} of {name}")).with_mime_type("text/plain"))
}

/// A page of a document, whose errors are not `FeatureError`s.
#[resource(template = "docs://{+path}")]
async fn doc(path: String) -> Result<String, std::io::Error> {
    if path.ends_with(".secret") {
        return Err(std::io::Error::other("that document is sealed"));
    }
    Ok(format!("document {path}"))
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Tone {
    Kind,
    Blunt,
}

fn tones(typed: &str) -> Vec<String> {
    ["kind", "blunt"]
        .into_iter()
        .filter(|t| t.starts_with(typed))
        .map(str::to_owned)
        .collect()
}

/// Asks for a code review.
#[prompt(title = "Code review", icons = ["https://example.com/review.svg"])]
async fn review(
    /// The code to review.
    code: String,
    /// What to look at.
    focus: Option<String>,
    /// How many findings at most.
    limit: Option<u32>,
    /// How to say it.
    #[arg(complete = tones)]
    tone: Tone,
) -> Vec<PromptMessage> {
    let tone = match tone {
        Tone::Kind => "kindly",
        Tone::Blunt => "bluntly",
    };
    vec![
        PromptMessage::user(format!(
            "Review {tone}, at most {} findings, for {}:\n{code}",
            limit.unwrap_or(3),
            focus.as_deref().unwrap_or("anything")
        )),
        PromptMessage::assistant("I will."),
    ]
}

/// Says hello.
#[prompt(name = "greet")]
async fn hello(
    /// Whom to greet.
    name: String,
) -> Result<String, FeatureError> {
    if name.is_empty() {
        return Err(FeatureError::invalid_arguments("name a person to greet"));
    }
    Ok(format!("Say hello to {name}."))
}

/// The handbook, listed with everything a listing can say about a resource.
#[resource(
    uri = "handbook://current",
    size = 2048,
    audience = ["user", "assistant"],
    priority = 0.8,
    icons = ["https://example.com/handbook.svg"]
)]
async fn handbook() -> &'static str {
    "Be kind."
}

/// A payroll record, for callers allowed to read payroll.
#[resource(
    template = "payroll://{employee}",
    audience = ["assistant"],
    scopes = ["payroll:read"]
)]
async fn payroll(employee: String) -> String {
    format!("payroll of {employee}")
}

/// Drafts a raise letter.
#[prompt(scopes = ["payroll:read"])]
async fn raise_letter(
    /// For whom.
    employee: String,
) -> String {
    format!("Draft a raise letter for {employee}.")
}

fn server() -> McpServer {
    McpServer::new(ToolSet::new())
        .with_resources(resources![settings, notes, logo, whoami, line, doc])
        .with_prompts(prompts![review, hello])
}

/// Asserts `error` is of `kind` and its message says `says`.
fn assert_refused(error: &FeatureError, kind: FeatureErrorKind, says: &str) {
    assert_eq!(error.kind(), kind, "{error}");
    assert!(error.message().contains(says), "{error}");
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn macro_made_resources_and_prompts_are_served_on_both_protocol_versions() {
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let running = serve_on_loopback(server(), HttpOptions::default()).await;
    let url = format!("http://{}/mcp", running.addr);
    for version in ["2025-11-25", "2026-07-28"] {
        let options = HttpClientOptions::new().with_protocol_version(version);
        let client = McpClient::connect_http_with(&url, &options).await.unwrap();

        let listed = client.list_resources().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "config://app",
                "notes://release",
                "logo://png",
                "whoami://session"
            ]
        );
        assert_eq!(listed[0].info.name, "settings");
        assert_eq!(listed[0].info.title.as_deref(), Some("App settings"));
        assert_eq!(
            listed[0].info.description.as_deref(),
            Some("The app's settings.")
        );
        assert_eq!(
            listed[0].info.mime_type.as_deref(),
            Some("application/json")
        );
        assert_eq!(listed[1].info.name, "release-notes");
        assert_eq!(listed[1].info.mime_type.as_deref(), Some("text/markdown"));
        let templates = client.list_resource_templates().await.unwrap();
        let templates: Vec<&str> = templates.iter().map(|t| t.template.as_str()).collect();
        assert_eq!(templates, ["files://{name}/lines/{line}", "docs://{+path}"]);

        let read = client.read_resource("config://app").await.unwrap();
        assert_eq!(
            read[0].body,
            ResourceBody::Text(r#"{"debug":false,"workers":4}"#.into())
        );
        let read = client.read_resource("notes://release").await.unwrap();
        assert_eq!(
            read[0].body,
            ResourceBody::Text("# 1.0\nFirst release.".into())
        );
        assert_eq!(read[0].mime_type.as_deref(), Some("text/markdown"));
        let read = client.read_resource("logo://png").await.unwrap();
        assert_eq!(read[0].body, ResourceBody::Blob("iVBORw==".into()));
        assert_eq!(read[0].mime_type.as_deref(), Some("image/png"));
        let read = client.read_resource("whoami://session").await.unwrap();
        let ResourceBody::Text(whoami) = &read[0].body else {
            panic!("expected text, got {:?}", read[0].body);
        };
        assert!(whoami.starts_with("session "), "{whoami}");

        // Template variables, parsed into the parameters' types.
        let read = client
            .read_resource("files://readme/lines/12")
            .await
            .unwrap();
        assert_eq!(read[0].body, ResourceBody::Text("line 12 of readme".into()));
        let read = client.read_resource("docs://guide/intro.md").await.unwrap();
        assert_eq!(
            read[0].body,
            ResourceBody::Text("document guide/intro.md".into())
        );
        let refused = client
            .read_resource("files://readme/lines/twelve")
            .await
            .unwrap_err();
        assert_refused(
            &refused,
            FeatureErrorKind::InvalidArguments,
            "`line` in the URI is `twelve`",
        );
        let missing = client
            .read_resource("files://other/lines/1")
            .await
            .unwrap_err();
        // From 2026-07-28, not-found travels as -32602 (SEP-2164).
        if version == "2025-11-25" {
            assert_eq!(missing.kind(), FeatureErrorKind::NotFound, "{missing}");
        }
        assert!(missing.message().contains("no file `other`"), "{missing}");
        let sealed = client
            .read_resource("docs://plans.secret")
            .await
            .unwrap_err();
        assert_refused(&sealed, FeatureErrorKind::Failed, "that document is sealed");

        let prompts = client.list_prompts().await.unwrap();
        assert_eq!(prompts[0].name, "review");
        assert_eq!(prompts[0].title.as_deref(), Some("Code review"));
        assert_eq!(
            prompts[0].icons,
            [Icon::new("https://example.com/review.svg")]
        );
        assert!(prompts[1].icons.is_empty(), "{:?}", prompts[1]);
        assert_eq!(
            prompts[0].description.as_deref(),
            Some("Asks for a code review.")
        );
        assert_eq!(
            prompts[0].arguments,
            [
                PromptArgument::required("code", "The code to review."),
                PromptArgument::optional("focus", "What to look at."),
                PromptArgument::optional("limit", "How many findings at most."),
                PromptArgument::required("tone", "How to say it."),
            ]
        );
        assert_eq!(prompts[1].name, "greet");

        let messages = client
            .get_prompt(
                "review",
                &args(&[("code", "x = 1"), ("tone", "blunt"), ("limit", "5")]),
            )
            .await
            .unwrap();
        assert_eq!(
            messages[0],
            PromptMessage::user("Review bluntly, at most 5 findings, for anything:\nx = 1")
        );
        assert_eq!(messages[1].role, PromptRole::Assistant);
        let refused = client
            .get_prompt("review", &args(&[("code", "x"), ("tone", "sarcastic")]))
            .await
            .unwrap_err();
        assert_refused(
            &refused,
            FeatureErrorKind::InvalidArguments,
            "`tone` is `sarcastic`",
        );
        let refused = client
            .get_prompt(
                "review",
                &args(&[("code", "x"), ("tone", "kind"), ("limit", "-1")]),
            )
            .await
            .unwrap_err();
        assert!(refused.message().contains("`limit` is `-1`"), "{refused}");

        let messages = client
            .get_prompt("greet", &args(&[("name", "Ada")]))
            .await
            .unwrap();
        assert_eq!(messages, [PromptMessage::user("Say hello to Ada.")]);
        let refused = client
            .get_prompt("greet", &args(&[("name", "")]))
            .await
            .unwrap_err();
        assert_refused(
            &refused,
            FeatureErrorKind::InvalidArguments,
            "name a person",
        );

        // Completion from `#[arg(complete = ...)]`; none for a parameter without it.
        let names = client
            .complete_template_variable("files://{name}/lines/{line}", "name", "re")
            .await
            .unwrap();
        assert_eq!(names, ["readme", "release"]);
        let lines = client
            .complete_template_variable("files://{name}/lines/{line}", "line", "1")
            .await
            .unwrap();
        assert!(lines.is_empty(), "{lines:?}");
        let tones = client
            .complete_prompt_argument("review", "tone", "b")
            .await
            .unwrap();
        assert_eq!(tones, ["blunt"]);
        let refused = client
            .complete_prompt_argument("review", "mood", "b")
            .await
            .unwrap_err();
        assert!(
            refused
                .message()
                .contains("prompt `review` has no `mood` to complete"),
            "{refused}"
        );
        client.close().await;
    }
}

/// What a hostile client sends into a macro-made template or prompt: numbers that
/// overflow the parameter's type, percent-encoded separators, JSON where text is
/// expected. Each is refused or taken literally, and the server keeps answering.
#[tokio::test]
async fn listing_keys_reach_clients_and_scoped_items_exist_only_for_their_callers() {
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tokens = StaticTokens::new()
        .with_token(
            "clerk",
            Principal::new("clerk").with_scopes(["payroll:read"]),
        )
        .with_token("guest", Principal::new("guest"));
    let server = McpServer::new(ToolSet::new())
        .with_resources(resources![handbook, payroll])
        .with_prompts(prompts![raise_letter]);
    let options = HttpOptions::default().with_auth(HttpAuth::new(tokens));
    let running = serve_on_loopback(server, options).await;
    let url = format!("http://{}/mcp", running.addr);
    for version in ["2025-11-25", "2026-07-28"] {
        let as_caller = |token: &str| {
            HttpClientOptions::new()
                .with_protocol_version(version)
                .with_bearer_token(token)
        };
        let guest = McpClient::connect_http_with(&url, &as_caller("guest"))
            .await
            .unwrap();
        let listed = guest.list_resources().await.unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        let info = &listed[0].info;
        assert_eq!(info.size, Some(2048));
        assert_eq!(
            info.annotations.audience,
            [Audience::User, Audience::Assistant]
        );
        assert_eq!(info.annotations.priority, Some(0.8));
        assert_eq!(info.icons, [Icon::new("https://example.com/handbook.svg")]);
        // The guest lacks `payroll:read`: the template and the prompt are not there.
        assert!(guest.list_resource_templates().await.unwrap().is_empty());
        assert!(guest.list_prompts().await.unwrap().is_empty());
        // Not the guest's to read: not found, as a URI nothing serves (-32602 from
        // 2026-07-28, SEP-2164).
        let refused = guest.read_resource("payroll://ann").await.unwrap_err();
        if version == "2025-11-25" {
            assert_eq!(refused.kind(), FeatureErrorKind::NotFound, "{refused}");
        }
        assert!(
            refused.message().contains("no resource at `payroll://ann`"),
            "{refused}"
        );
        let refused = guest
            .get_prompt("raise_letter", &args(&[("employee", "ann")]))
            .await
            .unwrap_err();
        assert_eq!(
            refused.kind(),
            FeatureErrorKind::InvalidArguments,
            "{refused}"
        );

        let clerk = McpClient::connect_http_with(&url, &as_caller("clerk"))
            .await
            .unwrap();
        let templates = clerk.list_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 1, "{templates:?}");
        assert_eq!(
            templates[0].info.annotations.audience,
            [Audience::Assistant]
        );
        assert_eq!(templates[0].info.size, None);
        let read = clerk.read_resource("payroll://ann").await.unwrap();
        assert_eq!(read[0].body, ResourceBody::Text("payroll of ann".into()));
        let prompts = clerk.list_prompts().await.unwrap();
        assert_eq!(prompts[0].name, "raise_letter");
        clerk
            .get_prompt("raise_letter", &args(&[("employee", "ann")]))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn hostile_uris_and_arguments_are_refused_or_taken_literally() {
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let running = serve_on_loopback(server(), HttpOptions::default()).await;
    let url = format!("http://{}/mcp", running.addr);
    let client = McpClient::connect_http(&url).await.unwrap();

    let overflow = client
        .read_resource("files://readme/lines/99999999999999999999")
        .await
        .unwrap_err();
    assert_refused(
        &overflow,
        FeatureErrorKind::InvalidArguments,
        "`line` in the URI is `99999999999999999999`",
    );
    let negative = client
        .read_resource("files://readme/lines/-1")
        .await
        .unwrap_err();
    assert_refused(&negative, FeatureErrorKind::InvalidArguments, "`line`");
    // A percent-encoded `/` in a simple variable is decoded into the value, not taken as
    // a separator: the fn sees the name it was given, and finds no such file.
    let encoded = client
        .read_resource("files://readme%2F..%2Fsecret/lines/1")
        .await
        .unwrap_err();
    assert!(
        encoded.message().contains("no file `readme/../secret`"),
        "{encoded}"
    );

    // A `String` argument is the text sent, even when it looks like JSON.
    let messages = client
        .get_prompt("greet", &args(&[("name", r#"{"admin": true}"#)]))
        .await
        .unwrap();
    assert_eq!(
        messages,
        [PromptMessage::user(r#"Say hello to {"admin": true}."#)]
    );
    // A typed argument takes only its own type's values, whatever JSON comes instead.
    let refused = client
        .get_prompt(
            "review",
            &args(&[("code", "x"), ("tone", r#"{"mood": 1}"#)]),
        )
        .await
        .unwrap_err();
    assert_refused(&refused, FeatureErrorKind::InvalidArguments, "`tone`");
    let refused = client
        .get_prompt(
            "review",
            &args(&[("code", "x"), ("tone", "kind"), ("limit", "\"5\"")]),
        )
        .await
        .unwrap_err();
    assert_refused(&refused, FeatureErrorKind::InvalidArguments, "`limit`");

    // Still serving.
    let read = client
        .read_resource("files://readme/lines/2")
        .await
        .unwrap();
    assert_eq!(read[0].body, ResourceBody::Text("line 2 of readme".into()));
    client.close().await;
}

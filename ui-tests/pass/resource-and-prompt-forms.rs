//! Every form of `#[resource]` and `#[prompt]`, collected and read, in a crate that
//! forbids the lints generated code could trip (it emits no `allow` to dodge them).

#![forbid(non_camel_case_types, unused, missing_docs, unsafe_code)]
#![deny(warnings)]

use toolwright_core::ToolContext;
use toolwright_mcp::prompts::{FeatureError, PromptArguments, PromptMessage};
use toolwright_mcp::resources::ResourceContent;
use toolwright_mcp::{prompt, prompts, resource, resources};

/// Text.
#[resource(uri = "text://a", name = "a", title = "A", mime_type = "text/markdown")]
async fn text() -> String {
    "# a".into()
}

/// A static string, with every listing key.
#[resource(
    uri = "text://b",
    size = 1,
    audience = ["user", "assistant"],
    priority = 1.0,
    icons = ["https://example.com/b.svg", "data:image/png;base64,iVBORw=="],
    scopes = ["b:read"]
)]
pub async fn static_text() -> &'static str {
    "b"
}

/// Bytes.
#[resource(uri = "bytes://c", mime_type = "image/png")]
async fn bytes() -> Vec<u8> {
    vec![1, 2, 3]
}

/// JSON (no derive here: serde's derives emit `allow`s this crate forbids).
#[resource(uri = "json://d")]
async fn json() -> serde_json::Value {
    serde_json::json!({"debug": true})
}

/// Contents, with the context.
#[resource(uri = "contents://e")]
async fn contents(ctx: &ToolContext) -> Vec<ResourceContent> {
    vec![ResourceContent::text(ctx.session_id().to_owned())]
}

/// A fallible resource.
#[resource(uri = "fallible://f")]
async fn fallible() -> Result<ResourceContent, std::io::Error> {
    Ok(ResourceContent::text("f"))
}

/// A template whose variable is named like the fn.
#[resource(template = "files://{file}/lines/{line}")]
async fn file(file: String, line: u32) -> Result<String, FeatureError> {
    Ok(format!("{file}:{line}"))
}

/// A reserved expansion.
#[resource(
    template = "docs://{+path}",
    crate = ::toolwright_mcp,
    audience = ["assistant"],
    priority = 0.0,
    scopes = ["docs:read", "docs:list"]
)]
async fn doc(path: std::path::PathBuf, ctx: &ToolContext) -> String {
    format!("{} {}", path.display(), ctx.session_id())
}

/// Text, one user message.
#[prompt(title = "Review", scopes = ["review"])]
async fn review(
    /// The code.
    code: String,
    /// What to look at.
    focus: Option<String>,
    /// At most this many findings.
    limit: Option<u32>,
    /// Whether to say it bluntly.
    blunt: bool,
) -> String {
    let tone = if blunt { "blunt" } else { "kind" };
    format!("{code} {focus:?} {limit:?} {tone}")
}

/// One message.
#[prompt(name = "hello")]
async fn greet(ctx: &ToolContext) -> PromptMessage {
    PromptMessage::assistant(format!("hello {}", ctx.session_id()))
}

/// Messages, fallibly.
#[prompt]
async fn conversation() -> Result<Vec<PromptMessage>, FeatureError> {
    Ok(vec![PromptMessage::user("hi"), PromptMessage::assistant("hello")])
}

#[tokio::main]
async fn main() {
    let resources = resources![text, static_text, bytes, json, contents, fallible, file, doc];
    assert_eq!(resources.resources().len(), 6);
    assert_eq!(resources.templates().len(), 2);
    let listed = resources.resource("text://b").unwrap();
    assert_eq!(listed.info().size, Some(1));
    assert_eq!(listed.info().annotations.priority, Some(1.0));
    assert_eq!(listed.info().icons.len(), 2);
    assert_eq!(listed.scopes(), ["b:read"]);
    let docs = resources.template("docs://{+path}").unwrap();
    assert_eq!(docs.scopes(), ["docs:read", "docs:list"]);
    let ctx = ToolContext::default();
    let read = resources.resource("json://d").unwrap().read(&ctx).await.unwrap();
    assert_eq!(
        read,
        [ResourceContent::json(&serde_json::json!({"debug": true})).unwrap()]
    );
    let template = resources.template("files://{file}/lines/{line}").unwrap();
    let params = template.template().matches("files://x/lines/3").unwrap();
    let read = template.read("files://x/lines/3", &params, &ctx).await.unwrap();
    assert_eq!(read, [ResourceContent::text("x:3")]);

    let prompts = prompts![review, greet, conversation];
    let mut args = PromptArguments::new();
    args.insert("code".into(), "c".into());
    args.insert("blunt".into(), "false".into());
    let messages = prompts.get("review").unwrap().get(&args, &ctx).await.unwrap();
    assert_eq!(messages, [PromptMessage::user("c None None kind")]);
    assert!(prompts.get("hello").is_some());
    assert_eq!(prompts.get("review").unwrap().scopes(), ["review"]);
    assert_eq!(prompts.len(), 3);
}

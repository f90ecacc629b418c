//! Resources and prompts collected without listing them: `#[resource(register)]`,
//! `#[prompt(register)]` and `#[toolbox(register)]` fill the binary's registry, which
//! `ResourceSet::registered*` and `PromptSet::registered*` read, and `#[resource]` /
//! `#[prompt]` methods of a `#[toolbox]` impl share its value. Everything is served by
//! `McpServer` over Streamable HTTP and read back by `McpClient`.

#[path = "support/raw_http.rs"]
mod raw_http;

use raw_http::serve_on_loopback;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use toolwright_core::{ToolSet, toolbox};
use toolwright_mcp::prompts::{PromptMessage, PromptSet, RegisteredPrompt};
use toolwright_mcp::resources::{
    FeatureErrorKind, RegisteredResource, ResourceBody, ResourceContent, ResourceSet,
};
use toolwright_mcp::{HttpOptions, McpClient, McpServer, prompt, resource};

mod docs {
    use super::*;

    /// The app's settings.
    #[resource(register, uri = "config://registered")]
    pub async fn settings() -> String {
        "debug = false".into()
    }

    /// A user's profile.
    #[resource(register, template = "users://{id}/profile", tags = ["people", "public"])]
    pub async fn profile(id: u64) -> String {
        format!("user {id}")
    }

    /// Asks for a summary.
    #[prompt(register, tags = ["public"])]
    pub async fn summarize(
        /// What to summarize.
        text: String,
    ) -> String {
        format!("Summarize:\n{text}")
    }

    /// Not registered: only `resources![]` would take it.
    #[resource(uri = "config://unregistered")]
    pub async fn unregistered() -> String {
        String::new()
    }
}

/// How many `Visits` values were made.
static VISITS_MADE: AtomicUsize = AtomicUsize::new(0);

/// A registered toolbox: its resource and prompt share one value, made on first use.
struct Visits {
    count: AtomicU64,
}

impl Default for Visits {
    fn default() -> Self {
        VISITS_MADE.fetch_add(1, Ordering::SeqCst);
        Self {
            count: AtomicU64::new(0),
        }
    }
}

#[toolbox(register, tags = ["visits"])]
impl Visits {
    /// How many reads and gets came before this one.
    #[resource(uri = "visits://count")]
    async fn count(&self) -> String {
        self.count.fetch_add(1, Ordering::SeqCst).to_string()
    }

    /// Greets a visitor with their number.
    #[prompt(name = "visitor")]
    async fn greet(
        &self,
        /// Whom to greet.
        name: String,
    ) -> String {
        let n = self.count.fetch_add(1, Ordering::SeqCst);
        format!("Greet {name}, visitor {n}.")
    }
}

/// A toolbox that is not registered: its value is the application's, passed in.
struct Library {
    books: Vec<&'static str>,
    reads: AtomicU64,
}

#[toolbox]
impl Library {
    /// A book by its number.
    #[resource(template = "library://books/{n}", mime_type = "text/plain")]
    async fn book(
        &self,
        n: usize,
    ) -> Result<ResourceContent, toolwright_mcp::resources::FeatureError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.books
            .get(n)
            .map(|b| ResourceContent::text(*b))
            .ok_or_else(|| {
                toolwright_mcp::resources::FeatureError::not_found(format!("no book {n}"))
            })
    }

    /// Every title.
    #[resource(uri = "library://titles")]
    async fn titles(&self) -> Vec<&'static str> {
        self.books.clone()
    }

    /// Asks for a review of one book.
    #[prompt]
    async fn review(
        &self,
        /// The book's number.
        n: usize,
    ) -> Vec<PromptMessage> {
        let title = self.books.get(n).copied().unwrap_or("nothing");
        vec![PromptMessage::user(format!("Review {title}."))]
    }
}

mod clash_a {
    /// A prompt whose name another module also registers.
    #[toolwright_mcp::prompt(register, name = "clash")]
    pub async fn clash() -> String {
        "a".into()
    }

    /// A resource at a URI another module also registers.
    #[toolwright_mcp::resource(register, uri = "clash://here")]
    pub async fn here() -> String {
        "a".into()
    }
}

mod clash_b {
    /// The other prompt with that name.
    #[toolwright_mcp::prompt(register, name = "clash")]
    pub async fn clash() -> String {
        "b".into()
    }

    /// The other resource at that URI.
    #[toolwright_mcp::resource(register, uri = "clash://here")]
    pub async fn here() -> String {
        "b".into()
    }
}

/// Everything registered but the deliberate clashes.
fn not_clashing(module_path: &str) -> bool {
    !module_path.contains("::clash_")
}

fn text(contents: &[ResourceContent]) -> &str {
    match &contents[0].body {
        ResourceBody::Text(text) => text,
        ResourceBody::Blob(_) => panic!("expected text, got a blob"),
    }
}

fn prompt_text(messages: &[PromptMessage]) -> &str {
    messages[0].content.as_text().expect("a text message")
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn registered_sets_hold_the_registered_items_in_order() {
    let resources =
        ResourceSet::registered_where(|entry| not_clashing(entry.module_path())).unwrap();
    let uris: Vec<&str> = resources.resources().iter().map(|r| r.uri()).collect();
    assert_eq!(uris, ["config://registered", "visits://count"]);
    let templates: Vec<&str> = resources
        .templates()
        .iter()
        .map(|t| t.template().as_str())
        .collect();
    assert_eq!(templates, ["users://{id}/profile"]);

    let docs = ResourceSet::registered_in_module(&format!("{}::docs", module_path!())).unwrap();
    assert!(docs.resource("config://registered").is_some());
    assert!(docs.resource("visits://count").is_none());
    // Without `register`, a resource is only in the sets that list it.
    assert!(docs.resource("config://unregistered").is_none());
    let listed = toolwright_mcp::resources![docs::unregistered];
    assert!(listed.resource("config://unregistered").is_some());

    let prompts = PromptSet::registered_where(|entry| not_clashing(entry.module_path())).unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["summarize", "visitor"]);

    let entry = RegisteredResource::all()
        .find(|e| e.uri() == "users://{id}/profile")
        .unwrap();
    assert!(entry.is_template());
    assert!(entry.is_in_module(module_path!()));
    assert!(entry.file().ends_with("registry.rs"), "{entry}");
    let entry = RegisteredPrompt::all()
        .find(|e| e.name() == "summarize")
        .unwrap();
    assert_eq!(entry.module_path(), format!("{}::docs", module_path!()));

    // Tags filter the registry; a toolbox's tags label its resources and prompts.
    let public = ResourceSet::registered_where(|e| e.has_tag("public")).unwrap();
    assert_eq!(public.templates().len(), 1, "{public:?}");
    assert!(public.resources().is_empty(), "{public:?}");
    let entry = RegisteredResource::all()
        .find(|e| e.uri() == "users://{id}/profile")
        .unwrap();
    assert_eq!(entry.tags(), ["people", "public"]);
    assert!(!entry.has_tag("visits"));
    let visits = ResourceSet::registered_where(|e| e.has_tag("visits")).unwrap();
    assert!(visits.resource("visits://count").is_some(), "{visits:?}");
    let public = PromptSet::registered_where(|e| e.has_tag("public")).unwrap();
    let names: Vec<&str> = public.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["summarize"]);
    let visits = PromptSet::registered_where(|e| e.has_tag("visits")).unwrap();
    let names: Vec<&str> = visits.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["visitor"]);
}

#[test]
fn two_registered_at_one_uri_or_name_are_an_error_naming_both() {
    let error = ResourceSet::registered().unwrap_err();
    assert_eq!(error.kind(), FeatureErrorKind::InvalidArguments);
    let message = error.message();
    assert!(message.contains("`clash://here`"), "{message}");
    assert!(message.contains("::clash_a)"), "{message}");
    assert!(message.contains("::clash_b)"), "{message}");

    let error = PromptSet::registered().unwrap_err();
    let message = error.message();
    assert!(message.contains("named `clash`"), "{message}");
    assert!(
        message.contains("::clash_a)") && message.contains("::clash_b)"),
        "{message}"
    );

    // Either one alone is taken.
    let one =
        PromptSet::registered_where(|e| !e.is_in_module(&format!("{}::clash_b", module_path!())))
            .unwrap();
    let got = one.get("clash").unwrap();
    assert_eq!(got.name(), "clash");
}

#[tokio::test]
async fn registered_and_toolbox_items_are_served_and_share_state() {
    #[allow(deprecated)] // ring: deprecated for lacking post-quantum key exchange
    let _ = rustls::crypto::ring::default_provider().install_default();
    let library = Arc::new(Library {
        books: vec!["Dune", "Emma"],
        reads: AtomicU64::new(0),
    });
    let mut resources =
        ResourceSet::registered_where(|entry| not_clashing(entry.module_path())).unwrap();
    for resource in Arc::clone(&library).into_resources().resources() {
        resources.add_resource_arc(Arc::clone(resource)).unwrap();
    }
    for template in Arc::clone(&library).into_resources().templates() {
        resources.add_template_arc(Arc::clone(template)).unwrap();
    }
    let mut prompts =
        PromptSet::registered_where(|entry| not_clashing(entry.module_path())).unwrap();
    for prompt in Arc::clone(&library).into_prompts().iter() {
        prompts.add_arc(Arc::clone(prompt)).unwrap();
    }
    let server = McpServer::new(ToolSet::new())
        .with_resources(resources)
        .with_prompts(prompts);
    let running = serve_on_loopback(server, HttpOptions::default()).await;
    let client = McpClient::connect_http(&format!("http://{}/mcp", running.addr))
        .await
        .unwrap();

    let read = client.read_resource("config://registered").await.unwrap();
    assert_eq!(text(&read), "debug = false");
    let read = client.read_resource("users://7/profile").await.unwrap();
    assert_eq!(text(&read), "user 7");
    let got = client
        .get_prompt("summarize", &args(&[("text", "a long story")]))
        .await
        .unwrap();
    assert_eq!(prompt_text(&got), "Summarize:\na long story");

    // The registered toolbox's resource and prompt count on one value.
    assert_eq!(
        text(&client.read_resource("visits://count").await.unwrap()),
        "0"
    );
    assert_eq!(
        text(&client.read_resource("visits://count").await.unwrap()),
        "1"
    );
    let got = client
        .get_prompt("visitor", &args(&[("name", "Ada")]))
        .await
        .unwrap();
    assert_eq!(prompt_text(&got), "Greet Ada, visitor 2.");
    assert_eq!(
        text(&client.read_resource("visits://count").await.unwrap()),
        "3"
    );
    assert_eq!(VISITS_MADE.load(Ordering::SeqCst), 1);

    // The toolbox value passed in is the one its items read.
    let read = client.read_resource("library://books/1").await.unwrap();
    assert_eq!(text(&read), "Emma");
    assert_eq!(read[0].mime_type.as_deref(), Some("text/plain"));
    let missing = client.read_resource("library://books/9").await.unwrap_err();
    assert!(missing.message().contains("no book 9"), "{missing}");
    let read = client.read_resource("library://titles").await.unwrap();
    assert_eq!(text(&read), r#"["Dune","Emma"]"#);
    assert_eq!(library.reads.load(Ordering::SeqCst), 2);
    let got = client
        .get_prompt("review", &args(&[("n", "0")]))
        .await
        .unwrap();
    assert_eq!(prompt_text(&got), "Review Dune.");

    client.close().await;
}

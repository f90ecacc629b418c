//! The resources and the prompt the feature benchmarks serve: once as toolwright-mcp's
//! `#[resource]`/`#[prompt]` fns for our server, and once as a server written with rmcp's
//! own means (`#[prompt_router]`/`#[prompt]`; rmcp has no resource macro, so its
//! `read_resource` is written by hand, matching the URI as an rmcp user would).

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    ContentBlock, ErrorData, GetPromptRequestParams, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, Role, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, prompt_handler, prompt_router};
use serde_json::{Map, Value};
use toolwright_mcp::prompts::PromptSet;
use toolwright_mcp::resources::ResourceSet;
use toolwright_mcp::{McpServer, prompt, prompts, resource, resources};

use crate::in_memory::Client;

/// The fixed resource's URI.
pub const NOTES_URI: &str = "notes://release";
/// What both servers answer for the fixed resource.
pub const NOTES: &str = "# 1.0\nFirst release: tools, resources and prompts.";
/// A URI the template matches, and what both servers answer for it.
pub const USER_URI: &str = "users://42";
/// What both servers answer for `USER_URI`.
pub const USER_42: &str = "user 42: active";
/// The prompt's name.
pub const PROMPT: &str = "greet";
/// What both servers answer for the prompt, greeting Ada.
pub const GREET_ADA: &str = "Say hello to Ada, warmly.";

/// The text the template serves for user `id`.
fn user(id: u32) -> String {
    format!("user {id}: active")
}

/// The prompt's text for `name`.
fn greeting(name: &str) -> String {
    format!("Say hello to {name}, warmly.")
}

/// Release notes.
#[resource(uri = "notes://release", mime_type = "text/plain")]
async fn release_notes() -> &'static str {
    NOTES
}

/// A user's status.
#[resource(template = "users://{id}", mime_type = "text/plain")]
async fn user_status(id: u32) -> String {
    user(id)
}

/// Asks for a greeting.
#[prompt(name = "greet")]
async fn greet(
    /// Whom to greet.
    name: String,
) -> String {
    greeting(&name)
}

/// Our server with the resources and the prompt, written with our macros.
pub fn ours() -> McpServer {
    let resources: ResourceSet = resources![release_notes, user_status];
    let prompts: PromptSet = prompts![greet];
    McpServer::new(toolwright_core::ToolSet::new())
        .with_resources(resources)
        .with_prompts(prompts)
}

/// The prompt's arguments, for rmcp's macros.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct GreetArgs {
    /// Whom to greet.
    pub name: String,
}

/// The same resources and prompt, served by a server written with rmcp's own means.
#[derive(Clone)]
pub struct RmcpFeatures {
    prompt_router: PromptRouter<Self>,
}

impl RmcpFeatures {
    /// The server, its prompt router made once (as rmcp's `#[prompt_router]` docs show).
    pub fn new() -> Self {
        Self {
            prompt_router: Self::prompt_router(),
        }
    }
}

#[prompt_router]
impl RmcpFeatures {
    /// Asks for a greeting.
    #[rmcp::prompt(name = "greet")]
    async fn greet(&self, Parameters(args): Parameters<GreetArgs>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, greeting(&args.name))]
    }
}

#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for RmcpFeatures {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let text = if uri == NOTES_URI {
            NOTES.to_owned()
        } else if let Some(id) = uri
            .strip_prefix("users://")
            .and_then(|id| id.parse::<u32>().ok())
        {
            user(id)
        } else {
            return Err(ErrorData::resource_not_found(
                format!("no resource at `{uri}`"),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri)]).into())
    }
}

/// The requests benchmarked, each answered alike by both servers.
#[derive(Clone, Copy, Debug)]
pub enum Request {
    /// `resources/read` of the fixed resource.
    Fixed,
    /// `resources/read` of a URI the template matches, its one variable parsed.
    Templated,
    /// `prompts/get` with one argument.
    Prompt,
}

impl Request {
    /// Every request, in the order they are benchmarked.
    pub const ALL: [Self; 3] = [Self::Fixed, Self::Templated, Self::Prompt];

    /// Its name on the command line and in criterion's groups.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fixed => "resources_read_fixed",
            Self::Templated => "resources_read_template",
            Self::Prompt => "prompts_get",
        }
    }

    /// The text every server answers.
    pub fn answer(self) -> &'static str {
        match self {
            Self::Fixed => NOTES,
            Self::Templated => USER_42,
            Self::Prompt => GREET_ADA,
        }
    }

    /// Sends the request over `client`; the answer's first text, if it has one.
    pub async fn send(self, client: &Client) -> Option<String> {
        let uri = match self {
            Self::Fixed => NOTES_URI,
            Self::Templated => USER_URI,
            Self::Prompt => {
                let mut arguments = Map::new();
                arguments.insert("name".to_owned(), Value::from("Ada"));
                let result = client
                    .get_prompt(GetPromptRequestParams::new(PROMPT).with_arguments(arguments))
                    .await
                    .expect("prompts/get succeeds");
                return match result.messages.into_iter().next()?.content {
                    ContentBlock::Text(content) => Some(content.text),
                    _ => None,
                };
            }
        };
        let result = client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .expect("resources/read succeeds");
        match result.contents.into_iter().next()? {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            _ => None,
        }
    }
}

//! What an [`McpClient`] asks of a server beside its tools: its resources and resource
//! templates (listed and read), its prompts (listed and got), and completions of their
//! arguments, on every protocol version the client speaks. Results come back as the
//! same types a server built on this crate serves them with.

use super::McpClient;
use crate::convert::content_from_mcp;
use crate::server::prompts::{PromptArgument, PromptArguments, PromptMessage, PromptRole};
use crate::server::resources::{
    FeatureError, Icon, ResourceBody, ResourceContent, ResourceInfo, icons_from_mcp,
};
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, GetPromptRequestParams,
    ReadResourceRequestParams, Reference, ResourceContents, Role,
};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};
use toolwright_core::Content;

/// A resource a server lists.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteResource {
    /// Its URI, to read it by.
    pub uri: String,
    /// Its name, title, description and MIME type.
    pub info: ResourceInfo,
}

/// A resource template a server lists.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTemplate {
    /// The URI template (RFC 6570), e.g. `file:///{+path}`.
    pub template: String,
    /// Its name, title, description and MIME type.
    pub info: ResourceInfo,
}

/// A prompt a server lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePrompt {
    /// Its name, to get it by.
    pub name: String,
    /// A human-readable title.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// The arguments it takes.
    pub arguments: Vec<PromptArgument>,
    /// Icons a client may show beside it.
    pub icons: Vec<Icon>,
}

/// The error for a failed request of `what`, keeping whether the server found nothing
/// (-32002 before 2026-07-28; from then a -32602 whose message the server chose).
fn request_error(what: &str, error: ServiceError) -> FeatureError {
    match error {
        ServiceError::McpError(data) if data.code == ErrorCode::RESOURCE_NOT_FOUND => {
            FeatureError::not_found(data.message.into_owned())
        }
        ServiceError::McpError(data) if data.code == ErrorCode::INVALID_PARAMS => {
            FeatureError::invalid_arguments(data.message.into_owned())
        }
        other => FeatureError::failed(format!("MCP {what} failed: {other}")),
    }
}

impl McpClient {
    /// The server's resources (every page).
    pub async fn list_resources(&self) -> Result<Vec<RemoteResource>, FeatureError> {
        let listed = self
            .service
            .peer()
            .list_all_resources()
            .await
            .map_err(|e| request_error("resources/list", e))?;
        Ok(listed
            .into_iter()
            .map(|r| RemoteResource {
                info: ResourceInfo {
                    size: r.size,
                    ..ResourceInfo::from_mcp(
                        r.name,
                        r.title,
                        r.description,
                        r.mime_type,
                        r.annotations.as_ref(),
                        r.icons.as_deref(),
                    )
                },
                uri: r.uri,
            })
            .collect())
    }

    /// The server's resource templates (every page).
    pub async fn list_resource_templates(&self) -> Result<Vec<RemoteTemplate>, FeatureError> {
        let listed = self
            .service
            .peer()
            .list_all_resource_templates()
            .await
            .map_err(|e| request_error("resources/templates/list", e))?;
        Ok(listed
            .into_iter()
            .map(|t| RemoteTemplate {
                info: ResourceInfo::from_mcp(
                    t.name,
                    t.title,
                    t.description,
                    t.mime_type,
                    t.annotations.as_ref(),
                    t.icons.as_deref(),
                ),
                template: t.uri_template,
            })
            .collect())
    }

    /// The contents of the resource at `uri` (a listed URI, or one a template matches).
    /// A URI the server has nothing at is [`FeatureError::not_found`] on 2025
    /// servers, and an invalid-arguments error naming the URI from 2026-07-28.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContent>, FeatureError> {
        let read = self
            .service
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| request_error("resources/read", e))?;
        Ok(read
            .contents
            .into_iter()
            .map(|contents| match contents {
                ResourceContents::TextResourceContents {
                    uri,
                    mime_type,
                    text,
                    ..
                } => ResourceContent {
                    uri: Some(uri),
                    mime_type,
                    body: ResourceBody::Text(text),
                },
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => ResourceContent {
                    uri: Some(uri),
                    mime_type,
                    body: ResourceBody::Blob(blob),
                },
                // A kind of contents added to MCP later still reaches the caller, as its
                // JSON form in text, rather than being dropped.
                other => ResourceContent::text(serde_json::to_string(&other).unwrap_or_default()),
            })
            .collect())
    }

    /// The resource at `uri` as content blocks an agent can put before its model (as
    /// context in a message, or a tool's result): one embedded resource per item.
    pub async fn resource_content(&self, uri: &str) -> Result<Vec<Content>, FeatureError> {
        let contents = self.read_resource(uri).await?;
        Ok(contents
            .into_iter()
            .map(|content| {
                let (text, blob) = match content.body {
                    ResourceBody::Text(text) => (Some(text), None),
                    ResourceBody::Blob(blob) => (None, Some(blob)),
                };
                Content::Resource {
                    uri: content.uri.unwrap_or_else(|| uri.to_owned()),
                    mime_type: content.mime_type,
                    text,
                    blob,
                }
            })
            .collect())
    }

    /// The server's prompts (every page).
    pub async fn list_prompts(&self) -> Result<Vec<RemotePrompt>, FeatureError> {
        let listed = self
            .service
            .peer()
            .list_all_prompts()
            .await
            .map_err(|e| request_error("prompts/list", e))?;
        Ok(listed
            .into_iter()
            .map(|p| RemotePrompt {
                icons: icons_from_mcp(p.icons.as_deref()),
                name: p.name,
                title: p.title,
                description: p.description,
                arguments: p
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| PromptArgument {
                        name: a.name,
                        description: a.description,
                        required: a.required.unwrap_or(false),
                    })
                    .collect(),
            })
            .collect())
    }

    /// The messages of the prompt `name` for `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &PromptArguments,
    ) -> Result<Vec<PromptMessage>, FeatureError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            let arguments: Map<String, Value> = arguments
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            params.arguments = Some(arguments);
        }
        let got = self
            .service
            .peer()
            .get_prompt(params)
            .await
            .map_err(|e| request_error("prompts/get", e))?;
        Ok(got
            .messages
            .into_iter()
            .map(|m| PromptMessage {
                role: match m.role {
                    Role::Assistant => PromptRole::Assistant,
                    _ => PromptRole::User,
                },
                content: content_from_mcp(m.content),
            })
            .collect())
    }

    /// Values the server suggests for the argument `argument` of the prompt `prompt`,
    /// given `value` typed so far.
    pub async fn complete_prompt_argument(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, FeatureError> {
        self.complete(Reference::for_prompt(prompt), argument, value)
            .await
    }

    /// Values the server suggests for the variable `variable` of the resource template
    /// `template` (as listed), given `value` typed so far.
    pub async fn complete_template_variable(
        &self,
        template: &str,
        variable: &str,
        value: &str,
    ) -> Result<Vec<String>, FeatureError> {
        self.complete(Reference::for_resource(template), variable, value)
            .await
    }

    async fn complete(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
    ) -> Result<Vec<String>, FeatureError> {
        let completed = self
            .service
            .peer()
            .complete(CompleteRequestParams::new(
                reference,
                ArgumentInfo::new(argument, value),
            ))
            .await
            .map_err(|e| request_error("completion/complete", e))?;
        Ok(completed.completion.values)
    }
}

//! Prompts: message templates an MCP server offers its clients' users, filled in with
//! arguments (`prompts/list`, `prompts/get`), and completion of those arguments. A
//! [`Prompt`] is an object-safe trait, like `Tool`, so a [`PromptSet`] holds them as
//! `Arc<dyn Prompt>` and a macro can generate the impl from an async fn.

use super::resources::{FeatureError, Icon};
use async_trait::async_trait;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use toolwright_core::{Content, ToolContext};

/// One argument a prompt takes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    pub description: Option<String>,
    /// Whether a `prompts/get` without it is refused.
    pub required: bool,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: Some(description.into()),
            required: true,
        }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            required: false,
            ..Self::required(name, description)
        }
    }
}

/// Who a prompt message speaks as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRole {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt: text, an image, audio or an embedded resource, as
/// [`Content`] holds them.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: PromptRole,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// A message from the user.
    pub fn user(content: impl Into<Content>) -> Self {
        Self {
            role: PromptRole::User,
            content: content.into(),
        }
    }

    /// A message from the assistant.
    pub fn assistant(content: impl Into<Content>) -> Self {
        Self {
            role: PromptRole::Assistant,
            content: content.into(),
        }
    }

    pub(crate) fn into_mcp(self) -> rmcp::model::PromptMessage {
        let role = match self.role {
            PromptRole::User => rmcp::model::Role::User,
            PromptRole::Assistant => rmcp::model::Role::Assistant,
        };
        rmcp::model::PromptMessage::new(role, crate::convert::content_to_mcp(self.content))
    }
}

/// The arguments a `prompts/get` gave, by name.
pub type PromptArguments = BTreeMap<String, String>;

/// A prompt: a name, a description, the arguments it takes, and the messages it makes
/// of them.
#[async_trait]
pub trait Prompt: Send + Sync {
    /// Its name, unique in the server.
    fn name(&self) -> &str;

    /// A human-readable title. Default: none.
    fn title(&self) -> Option<&str> {
        None
    }

    /// What it is for.
    fn description(&self) -> Option<&str>;

    /// The arguments it takes.
    fn arguments(&self) -> &[PromptArgument];

    /// Icons a client may show beside it. Default: none.
    fn icons(&self) -> &[Icon] {
        &[]
    }

    /// The scopes a caller's principal needs to see and get it (only enforced when the
    /// transport authenticates, as for tools). Default: none.
    fn scopes(&self) -> &[String] {
        &[]
    }

    /// Its messages for `arguments`, which the server has checked: every required
    /// argument is present and none is unknown.
    async fn get(
        &self,
        arguments: &PromptArguments,
        ctx: &ToolContext,
    ) -> Result<Vec<PromptMessage>, FeatureError>;

    /// Values the argument `argument` could take that begin like `value`
    /// (`completion/complete`); `resolved` holds arguments already chosen. Default: no
    /// suggestions.
    async fn complete(
        &self,
        argument: &str,
        value: &str,
        resolved: &PromptArguments,
    ) -> Result<Vec<String>, FeatureError> {
        let _ = (argument, value, resolved);
        Ok(Vec::new())
    }
}

/// Checks `given` against what `prompt` takes: every required argument present, no
/// argument it does not take.
pub(crate) fn check_arguments(
    prompt: &dyn Prompt,
    given: &PromptArguments,
) -> Result<(), FeatureError> {
    let takes = prompt.arguments();
    let names = || {
        let names: Vec<&str> = takes.iter().map(|a| a.name.as_str()).collect();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    if let Some(unknown) = given.keys().find(|k| !takes.iter().any(|a| &a.name == *k)) {
        return Err(FeatureError::invalid_arguments(format!(
            "prompt `{}` takes no argument `{unknown}`; its arguments are: {}",
            prompt.name(),
            names()
        )));
    }
    let missing: Vec<&str> = takes
        .iter()
        .filter(|a| a.required && !given.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(FeatureError::invalid_arguments(format!(
            "prompt `{}` needs the argument(s) {}; its arguments are: {}",
            prompt.name(),
            missing.join(", "),
            names()
        )));
    }
    Ok(())
}

/// The prompts a server offers. Each name is offered once: adding a second prompt with
/// a taken name is an error.
#[derive(Clone, Default)]
pub struct PromptSet {
    prompts: Vec<Arc<dyn Prompt>>,
}

impl PromptSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a prompt; an error if its name is taken.
    pub fn add(&mut self, prompt: impl Prompt + 'static) -> Result<(), FeatureError> {
        self.add_arc(Arc::new(prompt))
    }

    /// Adds a shared prompt; an error if its name is taken.
    pub fn add_arc(&mut self, prompt: Arc<dyn Prompt>) -> Result<(), FeatureError> {
        if self.get(prompt.name()).is_some() {
            return Err(FeatureError::invalid_arguments(format!(
                "a prompt named `{}` is already in the set; each name is offered once",
                prompt.name()
            )));
        }
        self.prompts.push(prompt);
        Ok(())
    }

    /// The prompt named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Prompt>> {
        self.prompts.iter().find(|p| p.name() == name)
    }

    /// Every prompt, in the order added.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Prompt>> {
        self.prompts.iter()
    }

    /// How many prompts it holds.
    pub fn len(&self) -> usize {
        self.prompts.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }
}

impl fmt::Debug for PromptSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.prompts.iter().map(|p| p.name()))
            .finish()
    }
}

/// The completion function of an [`FnPrompt`]: argument, value typed so far, the
/// arguments already chosen.
type CompleteFn = dyn Fn(&str, &str, &PromptArguments) -> Vec<String> + Send + Sync;

/// A prompt from a closure.
///
/// ```
/// use toolwright_mcp::prompts::{FnPrompt, PromptArgument, PromptMessage, PromptSet};
/// use toolwright_core::Content;
/// let mut set = PromptSet::new();
/// set.add(FnPrompt::new(
///     "review",
///     "Asks for a code review.",
///     vec![PromptArgument::required("code", "The code to review")],
///     |args, _ctx| async move {
///         Ok(vec![PromptMessage::user(Content::text(format!("Review:\n{}", args["code"])))])
///     },
/// ))
/// .unwrap();
/// ```
pub struct FnPrompt<F> {
    name: String,
    description: String,
    arguments: Vec<PromptArgument>,
    get: F,
    complete: Option<Box<CompleteFn>>,
    scopes: Vec<String>,
    icons: Vec<Icon>,
}

impl<F, Fut> FnPrompt<F>
where
    F: Fn(PromptArguments, ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<PromptMessage>, FeatureError>> + Send,
{
    /// A prompt named `name` made by `get`.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        arguments: Vec<PromptArgument>,
        get: F,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            arguments,
            get,
            complete: None,
            scopes: Vec::new(),
            icons: Vec::new(),
        }
    }

    /// With an icon a client may show beside it.
    pub fn with_icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Completes its arguments with `complete(argument, value, resolved)`.
    pub fn with_completion(
        mut self,
        complete: impl Fn(&str, &str, &PromptArguments) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.complete = Some(Box::new(complete));
        self
    }

    /// Usable only by principals granted every one of `scopes`.
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }
}

#[async_trait]
impl<F, Fut> Prompt for FnPrompt<F>
where
    F: Fn(PromptArguments, ToolContext) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<PromptMessage>, FeatureError>> + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> Option<&str> {
        Some(&self.description)
    }

    fn arguments(&self) -> &[PromptArgument] {
        &self.arguments
    }

    fn icons(&self) -> &[Icon] {
        &self.icons
    }

    fn scopes(&self) -> &[String] {
        &self.scopes
    }

    async fn get(
        &self,
        arguments: &PromptArguments,
        ctx: &ToolContext,
    ) -> Result<Vec<PromptMessage>, FeatureError> {
        (self.get)(arguments.clone(), ctx.clone()).await
    }

    async fn complete(
        &self,
        argument: &str,
        value: &str,
        resolved: &PromptArguments,
    ) -> Result<Vec<String>, FeatureError> {
        if !self.arguments.iter().any(|a| a.name == argument) {
            return Err(FeatureError::invalid_arguments(format!(
                "prompt `{}` takes no argument `{argument}`",
                self.name
            )));
        }
        Ok(self
            .complete
            .as_ref()
            .map(|complete| complete(argument, value, resolved))
            .unwrap_or_default())
    }
}

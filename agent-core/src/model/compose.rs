//! Composing tool sets: prefix, rename or filter one. The result is an ordinary
//! [`ToolSet`], so it goes wherever a set goes (an agent, an MCP server, another
//! composition), and two sources that both have a `search` can be used side by side:
//!
//! ```
//! # use toolwright_core::{tool, tools, ToolSet};
//! /// Searches the web.
//! #[tool]
//! async fn search(query: String) -> String { query }
//! # fn demo() -> toolwright_core::AgentResult<()> {
//! let mut both = tools![search].prefixed("web")?;
//! both.extend(tools![search].prefixed("docs")?)?;
//! assert!(both.get("web_search").is_some() && both.get("docs_search").is_some());
//! # Ok(()) }
//! # demo().unwrap();
//! ```

use crate::Content;
use crate::model::context::{ActivationContext, ToolContext};
use crate::model::error::AgentResult;
use crate::model::set::ToolSet;
use crate::model::tool::{
    ApprovalPolicy, ErrorPolicy, TaskSupport, Tool, ToolAnnotations, ToolConcurrency, ToolExposure,
    ToolMetadata,
};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

impl ToolSet {
    /// The same tools, each named `{prefix}_{name}`. Fails if a new name is not a valid
    /// tool name (too long, for one); the error names it.
    pub fn prefixed(self, prefix: &str) -> AgentResult<ToolSet> {
        self.compose(|name| Some(format!("{prefix}_{name}")))
    }

    /// The same tools, those named in `renames` (old name, new name) renamed. Fails if
    /// two tools end up with one name, or a new name is invalid.
    pub fn renamed<'a>(
        self,
        renames: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> AgentResult<ToolSet> {
        let renames: HashMap<&str, &str> = renames.into_iter().collect();
        self.compose(|name| Some(renames.get(name).copied().unwrap_or(name).to_owned()))
    }

    /// Only the tools for which `keep` is true.
    pub fn filtered(self, keep: impl Fn(&dyn Tool) -> bool) -> ToolSet {
        let keep_names: Vec<String> = self
            .iter()
            .filter(|tool| keep(tool.as_ref()))
            .map(|tool| tool.name().to_owned())
            .collect();
        self.compose(|name| {
            keep_names
                .iter()
                .any(|kept| kept == name)
                .then(|| name.to_owned())
        })
        // Names are kept as they were, so they are valid and distinct.
        .unwrap_or_default()
    }

    /// A set of this set's tools, each under the name `name_of` gives it (`None` leaves
    /// it out). Each tool keeps this set's state, as it had here.
    fn compose(self, name_of: impl Fn(&str) -> Option<String>) -> AgentResult<ToolSet> {
        let source = Arc::new(self);
        let mut composed = ToolSet::new();
        for tool in source.iter() {
            let Some(name) = name_of(tool.name()) else {
                continue;
            };
            composed.register_tool(Composed {
                name: name.into(),
                tool: tool.clone(),
                source: source.clone(),
            })?;
        }
        Ok(composed)
    }
}

/// A tool of another set, maybe under another name; everything else is the tool's own.
struct Composed {
    name: Arc<str>,
    tool: Arc<dyn Tool>,
    /// The set the tool came from, for its state.
    source: Arc<ToolSet>,
}

#[async_trait]
impl Tool for Composed {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        self.tool.description()
    }

    fn schema(&self) -> Value {
        self.tool.schema()
    }

    async fn call(&self, args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let ctx = self.source.context_for(ctx);
        self.tool.call(args, &ctx).await
    }

    fn timeout_ms(&self) -> Option<u64> {
        self.tool.timeout_ms()
    }

    fn metadata(&self) -> ToolMetadata {
        ToolMetadata {
            name: self.name.to_string(),
            ..self.tool.metadata()
        }
    }

    fn exposure(&self) -> ToolExposure {
        self.tool.exposure()
    }

    async fn should_activate(&self, ctx: &ActivationContext) -> bool {
        self.tool.should_activate(ctx).await
    }

    fn approval(&self, args: &Value) -> ApprovalPolicy {
        self.tool.approval(args)
    }

    fn on_error(&self) -> ErrorPolicy {
        self.tool.on_error()
    }

    fn output_schema(&self) -> Option<Value> {
        self.tool.output_schema()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.tool.annotations()
    }

    fn concurrency(&self) -> ToolConcurrency {
        self.tool.concurrency()
    }

    fn is_external(&self) -> bool {
        self.tool.is_external()
    }

    fn validate_output(&self, output: &[Content]) -> Result<(), String> {
        self.tool.validate_output(output)
    }

    fn validate_progress(&self, progress: &Value) -> Result<(), String> {
        self.tool.validate_progress(progress)
    }

    fn uses_context(&self) -> bool {
        self.tool.uses_context()
    }

    fn task_support(&self) -> TaskSupport {
        self.tool.task_support()
    }

    fn input_examples(&self) -> Vec<Value> {
        self.tool.input_examples()
    }

    fn strict(&self) -> Option<bool> {
        self.tool.strict()
    }
}

#[cfg(test)]
mod tests {
    use crate::{State, ToolContext, ToolSet, tool, tools};
    use serde_json::json;

    /// Searches.
    #[tool(crate = crate, read_only)]
    async fn search(query: String, corpus: State<&'static str>) -> String {
        format!("{} results for {query}", *corpus)
    }

    /// Fetches a page.
    #[tool(crate = crate)]
    async fn fetch(url: String) -> String {
        url
    }

    async fn text(set: &ToolSet, name: &str, args: serde_json::Value) -> String {
        let out = set
            .call(name, &args, &ToolContext::default())
            .await
            .unwrap();
        out[0].as_text().unwrap().to_owned()
    }

    #[tokio::test]
    async fn two_sets_with_a_search_are_usable_together_each_with_its_own_state() {
        let web = tools![search, fetch]
            .with_state("web")
            .prefixed("web")
            .unwrap();
        let docs = tools![search].with_state("docs").prefixed("docs").unwrap();
        let mut both = web;
        both.extend(docs).unwrap();
        let mut names: Vec<_> = both.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        assert_eq!(names, ["docs_search", "web_fetch", "web_search"]);
        let q = json!({"query": "rust"});
        assert_eq!(
            text(&both, "web_search", q.clone()).await,
            "web results for rust"
        );
        assert_eq!(text(&both, "docs_search", q).await, "docs results for rust");
        // Everything but the name is the tool's own.
        let tool = both.get("web_search").unwrap();
        assert!(tool.annotations().is_read_only());
        assert_eq!(tool.metadata().name, "web_search");
        // The original name is gone.
        assert!(
            both.call("search", &json!({}), &ToolContext::default())
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn renaming_and_filtering_give_sets_and_refuse_clashes() {
        let set = tools![search, fetch].with_state("web");
        let renamed = set.renamed([("fetch", "get_page")]).unwrap();
        assert!(renamed.get("get_page").is_some() && renamed.get("fetch").is_none());
        assert_eq!(text(&renamed, "get_page", json!({"url": "u"})).await, "u");
        let only_reads = renamed.filtered(|tool| tool.annotations().is_read_only());
        let names: Vec<_> = only_reads.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["search"]);
        // Two tools under one name is an error, as in any set.
        let clash = tools![search, fetch].renamed([("fetch", "search")]);
        assert!(clash.is_err());
        // So is a name no provider accepts.
        assert!(tools![search].prefixed(&"x".repeat(64)).is_err());
    }
}

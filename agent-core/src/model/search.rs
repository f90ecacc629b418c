//! Tool search: tools the model finds when it needs them instead of reading every
//! definition on every turn.
//!
//! [`ToolSearch`] says which tools are searchable. A client whose provider searches
//! natively ([`LlmClient::native_tool_search`](crate::LlmClient::native_tool_search)) is
//! sent them as [`LlmRequest::deferred`](crate::agent_loop::llm::LlmRequest::deferred) (Anthropic's `defer_loading` with its search tool, OpenAI
//! Responses' `tool_search`); any other client is offered the [`SEARCH_TOOL`] tool, a
//! BM25 search ([`ToolIndex`]) over names, descriptions and parameter docs, and each
//! tool it found is offered in full from the next turn on. Either way a found tool is
//! an ordinary tool of the set: it runs through the same pipeline (approval, timeouts,
//! limits) as a direct one, and a Deferred tool stays callable only while
//! `activate_when` agrees.
//!
//! Which tools the fallback search loaded is read back from the conversation (the
//! search calls and their queries, searched again), so a paused or exported run needs
//! no state of its own for it.

use crate::model::content::Content;
use crate::model::context::{ActivationContext, ToolContext};
use crate::model::error::{AgentResult, ToolError};
use crate::model::message::Message;
use crate::model::set::{ToolDefinition, ToolSet};
use crate::model::tool::{Tool, ToolAnnotations, ToolExposure};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The name of the built-in search tool offered to models whose provider has no native
/// tool search.
pub const SEARCH_TOOL: &str = "search_tools";

/// How many tools one search answers with unless the model asks for another number.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;

/// The most tools one search answers with.
pub const MAX_SEARCH_LIMIT: usize = 20;

/// Which of an agent's tools the model finds by searching instead of reading them on
/// every turn (see [`AgentBuilder::tool_search`](crate::agent_loop::agent::AgentBuilder::tool_search)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolSearch {
    /// Every offered tool is sent in full on every turn.
    #[default]
    Off,
    /// [`Deferred`](ToolExposure::Deferred) tools (while `activate_when` agrees) are
    /// searchable; Direct tools are sent in full.
    Deferred,
    /// Every Direct and active Deferred tool is searchable, tools from MCP servers
    /// included.
    All,
}

impl ToolSearch {
    /// Whether a tool of this exposure is searchable in this mode.
    pub fn covers(self, exposure: ToolExposure) -> bool {
        match self {
            Self::Off => false,
            Self::Deferred => exposure == ToolExposure::Deferred,
            Self::All => matches!(exposure, ToolExposure::Direct | ToolExposure::Deferred),
        }
    }
}

/// BM25 parameters: the usual ones (Robertson and Zaragoza's `k1 = 1.2`, `b = 0.75`).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words too common in tool descriptions to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "the", "this", "to", "with", "e", "g",
];

/// A search index over tool definitions: Okapi BM25 over each tool's name (counted
/// twice, being the densest description of it), title, description, and its
/// parameters' names and descriptions.
#[derive(Debug, Clone, Default)]
pub struct ToolIndex {
    docs: Vec<Doc>,
    /// In how many tools each term occurs.
    document_frequency: HashMap<String, u32>,
    average_length: f64,
}

#[derive(Debug, Clone)]
struct Doc {
    definition: Arc<ToolDefinition>,
    terms: HashMap<String, u32>,
    length: u32,
}

/// One tool a search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit<'a> {
    /// The tool's definition.
    pub definition: &'a Arc<ToolDefinition>,
    /// Its BM25 score for the query (higher is better).
    pub score: f64,
}

impl ToolIndex {
    /// An index over these definitions.
    pub fn new(definitions: impl IntoIterator<Item = Arc<ToolDefinition>>) -> Self {
        let mut docs = Vec::new();
        let mut document_frequency: HashMap<String, u32> = HashMap::new();
        let mut total = 0u64;
        for definition in definitions {
            let mut terms: HashMap<String, u32> = HashMap::new();
            let mut length = 0u32;
            for term in document_terms(&definition) {
                *terms.entry(term).or_default() += 1;
                length += 1;
            }
            for term in terms.keys() {
                *document_frequency.entry(term.clone()).or_default() += 1;
            }
            total += u64::from(length);
            docs.push(Doc {
                definition,
                terms,
                length,
            });
        }
        let average_length = if docs.is_empty() {
            0.0
        } else {
            total as f64 / docs.len() as f64
        };
        Self {
            docs,
            document_frequency,
            average_length,
        }
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether the index holds no tool.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The definitions indexed, in the order given.
    pub fn definitions(&self) -> impl Iterator<Item = &Arc<ToolDefinition>> {
        self.docs.iter().map(|doc| &doc.definition)
    }

    /// The at most `limit` tools that best match `query`, best first; tools that share
    /// no word with it are left out, and equal scores keep the index's order. A query
    /// naming a tool exactly finds that tool first.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit<'_>> {
        let mut query_terms: Vec<String> = terms(query).collect();
        query_terms.sort();
        query_terms.dedup();
        let n = self.docs.len() as f64;
        let mut hits: Vec<SearchHit<'_>> = self
            .docs
            .iter()
            .filter_map(|doc| {
                let mut score = 0.0;
                for term in &query_terms {
                    let Some(&tf) = doc.terms.get(term) else {
                        continue;
                    };
                    let df = f64::from(self.document_frequency[term]);
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    let tf = f64::from(tf);
                    let norm = 1.0 - B + B * f64::from(doc.length) / self.average_length.max(1.0);
                    score += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
                }
                if doc.definition.name.eq_ignore_ascii_case(query.trim()) {
                    // Above any score a word match can reach.
                    score += 1_000.0;
                }
                (score > 0.0).then_some(SearchHit {
                    definition: &doc.definition,
                    score,
                })
            })
            .collect();
        // A stable sort: equal scores keep the order tools were registered in.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        hits.truncate(limit);
        hits
    }
}

/// Every term of a tool's definition, the name's counted twice.
fn document_terms(definition: &ToolDefinition) -> Vec<String> {
    let mut out: Vec<String> = terms(&definition.name).collect();
    out.extend(terms(&definition.name));
    if let Some(title) = &definition.title {
        out.extend(terms(title));
    }
    out.extend(terms(&definition.description));
    parameter_terms(&definition.parameters, &mut out, 0);
    out
}

/// The names and descriptions of a schema's properties, nested ones included (to a
/// depth that real argument types do not exceed).
fn parameter_terms(schema: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(description) = object.get("description").and_then(Value::as_str)
        && depth > 0
    {
        out.extend(terms(description));
    }
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            out.extend(terms(name));
            parameter_terms(property, out, depth + 1);
        }
    }
    for key in ["items", "$defs", "definitions"] {
        match object.get(key) {
            Some(Value::Object(map)) if key != "items" => {
                for nested in map.values() {
                    parameter_terms(nested, out, depth + 1);
                }
            }
            Some(nested) => parameter_terms(nested, out, depth + 1),
            None => {}
        }
    }
}

/// The words of `text`, lowercased, split at anything not alphanumeric and at
/// camelCase humps, stop words dropped and a plural `s` taken off, so `get_forecasts`,
/// `getForecast` and "forecast" meet.
fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            previous_lower = c.is_lowercase() || c.is_numeric();
            word.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(stem)
}

/// A light plural stem: `cities` → `city`, `forecasts` → `forecast`; `class`, `bus` and
/// short words stay.
fn stem(word: String) -> String {
    if word.len() > 4
        && let Some(base) = word.strip_suffix("ies")
    {
        return format!("{base}y");
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        let mut word = word;
        word.pop();
        return word;
    }
    word
}

/// The built-in search tool: [`SEARCH_TOOL`], answering with the definitions of the
/// searchable tools that match the model's query and are offered in the caller's
/// context (an inactive Deferred tool is never found).
pub struct SearchTool {
    index: ToolIndex,
    tools: HashMap<String, Arc<dyn Tool>>,
    description: String,
}

impl std::fmt::Debug for SearchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchTool")
            .field("tools", &self.index.len())
            .finish_non_exhaustive()
    }
}

impl SearchTool {
    /// A search over the tools of `set` that `mode` makes searchable; `None` when there
    /// are none.
    pub fn over(set: &ToolSet, mode: ToolSearch) -> Option<Self> {
        let mut tools = HashMap::new();
        let mut definitions = Vec::new();
        for tool in set.iter() {
            if tool.name() == SEARCH_TOOL || !mode.covers(tool.exposure()) {
                continue;
            }
            if let Some(definition) = set.definition(tool.name()) {
                definitions.push(definition.clone());
                tools.insert(tool.name().to_owned(), tool.clone());
            }
        }
        if definitions.is_empty() {
            return None;
        }
        let description = format!(
            "Search the {} further tools available to you by what they do; the tools found \
             can be called from your next step on. Search whenever no tool you have fits the task.",
            definitions.len()
        );
        Some(Self {
            index: ToolIndex::new(definitions),
            tools,
            description,
        })
    }

    /// The index searched.
    pub fn index(&self) -> &ToolIndex {
        &self.index
    }

    /// The names of the tools a search call with these arguments found, offered in
    /// `ctx`'s session and workspace.
    pub async fn found(
        &self,
        args: &Value,
        ctx: &ActivationContext,
    ) -> Result<Vec<String>, ToolError> {
        let (query, limit) = search_arguments(args)?;
        let mut found = Vec::new();
        for hit in self.index.search(query, limit) {
            let name = &hit.definition.name;
            let Some(tool) = self.tools.get(name) else {
                continue;
            };
            if tool.exposure() == ToolExposure::Direct || tool.should_activate(ctx).await {
                found.push(name.clone());
            }
        }
        Ok(found)
    }
}

/// The query and limit of a search call, or what was wrong with them.
fn search_arguments(args: &Value) -> Result<(&str, usize), ToolError> {
    let Some(object) = args.as_object() else {
        return Err(ToolError::invalid_arguments(
            "expected an object with a string `query`",
        ));
    };
    if let Some(unknown) = object.keys().find(|k| *k != "query" && *k != "limit") {
        return Err(ToolError::invalid_arguments(format!(
            "unknown property `{unknown}`: expected `query` and optionally `limit`"
        )));
    }
    let query = match object.get("query") {
        Some(Value::String(query)) if !query.trim().is_empty() => query.as_str(),
        Some(Value::String(_)) => {
            return Err(ToolError::invalid_arguments(
                "`query` is empty: expected words describing the tool you need",
            ));
        }
        Some(_) => return Err(ToolError::invalid_arguments("`query` must be a string")),
        None => return Err(ToolError::invalid_arguments("missing property `query`")),
    };
    let limit = match object.get("limit") {
        None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
        Some(value) => match value.as_u64() {
            Some(n @ 1..) => (n as usize).min(MAX_SEARCH_LIMIT),
            _ => {
                return Err(ToolError::invalid_arguments(format!(
                    "`limit` must be an integer from 1 to {MAX_SEARCH_LIMIT}"
                )));
            }
        },
    };
    Ok((query, limit))
}

#[async_trait]
impl Tool for SearchTool {
    fn name(&self) -> &str {
        SEARCH_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Words describing what the tool should do, or a tool's name"
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_SEARCH_LIMIT,
                    "description": "How many tools to return at most (default 5)"
                }
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    async fn call(&self, args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let activation = ActivationContext {
            session_id: ctx.session_id().to_owned(),
            current_tools: Vec::new(),
            workspace: ctx.workspace().map(Into::into).unwrap_or_default(),
        };
        let found = self.found(args, &activation).await?;
        if found.is_empty() {
            return Ok(vec![Content::text(
                "No tool matches; try other words, or the name of what you want to act on.",
            )]);
        }
        let tools: Vec<Value> = found
            .iter()
            .filter_map(|name| self.index.definitions().find(|d| &d.name == name))
            .map(|d| json!({"name": d.name, "description": d.description, "parameters": d.parameters}))
            .collect();
        Ok(vec![Content::text(json!({ "tools": tools }).to_string())])
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(true),
            idempotent: Some(true),
            ..ToolAnnotations::default()
        }
    }

    fn uses_context(&self) -> bool {
        // Deferred tools are filtered by the caller's session and workspace.
        true
    }
}

/// The tools to send on one turn.
#[derive(Debug, Clone, Default)]
pub struct TurnTools {
    /// Sent in full.
    pub tools: Vec<Arc<ToolDefinition>>,
    /// Sent for the provider's native search
    /// ([`LlmRequest::deferred`](crate::agent_loop::llm::LlmRequest::deferred)).
    pub deferred: Vec<Arc<ToolDefinition>>,
    /// The names the model may call this turn: both lists.
    pub offered: Vec<String>,
}

impl ToolSearch {
    /// Splits the `active` definitions of `set` for one turn. With `native` search the
    /// searchable ones go to [`TurnTools::deferred`] and the built-in `search` tool is
    /// left out; without it they stay out of the request until a search call in
    /// `messages` found them.
    pub async fn turn_tools(
        self,
        set: &ToolSet,
        search: Option<&SearchTool>,
        active: Vec<Arc<ToolDefinition>>,
        messages: &[Message],
        native: bool,
        activation: &ActivationContext,
    ) -> TurnTools {
        let mut turn = TurnTools::default();
        let loaded: HashSet<String> = match (native, search) {
            (false, Some(search)) => {
                // Collected first: an iterator of closures held across an await makes
                // the run's future lose `Send`.
                let mut queries: Vec<&Value> = Vec::new();
                for message in messages {
                    if let Message::Assistant(answer) = message {
                        for call in &answer.tool_calls {
                            if call.name == SEARCH_TOOL {
                                queries.push(&call.arguments);
                            }
                        }
                    }
                }
                let mut loaded = HashSet::new();
                for arguments in queries {
                    if let Ok(found) = search.found(arguments, activation).await {
                        loaded.extend(found);
                    }
                }
                loaded
            }
            _ => HashSet::new(),
        };
        for definition in active {
            let searchable = set
                .get(&definition.name)
                .is_some_and(|tool| self.covers(tool.exposure()))
                && definition.name != SEARCH_TOOL;
            // Without a search of ours, a tool of that name is the application's own.
            if definition.name == SEARCH_TOOL && native && search.is_some() {
                continue;
            }
            if !searchable || loaded.contains(&definition.name) {
                turn.offered.push(definition.name.clone());
                turn.tools.push(definition);
            } else if native {
                turn.offered.push(definition.name.clone());
                turn.deferred.push(definition);
            }
        }
        turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str, parameters: Value) -> Arc<ToolDefinition> {
        Arc::new(ToolDefinition {
            name: name.to_owned(),
            title: None,
            description: description.to_owned(),
            parameters,
            output_schema: None,
            annotations: ToolAnnotations::default(),
            ..Default::default()
        })
    }

    fn names(hits: &[SearchHit<'_>]) -> Vec<String> {
        hits.iter().map(|h| h.definition.name.clone()).collect()
    }

    fn catalog() -> ToolIndex {
        ToolIndex::new([
            tool(
                "get_weather",
                "Get the current weather for a city.",
                json!({"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}}),
            ),
            tool(
                "get_forecast",
                "Get a ten-day weather forecast.",
                json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}),
            ),
            tool(
                "send_email",
                "Send an email message to a recipient.",
                json!({"type": "object", "properties": {"to": {"type": "string", "description": "Recipient address"}, "subject": {"type": "string"}}}),
            ),
            tool(
                "createInvoice",
                "Bill a customer.",
                json!({"type": "object", "properties": {"customer": {"type": "object", "properties": {"vat_number": {"type": "string", "description": "Tax registration of the company"}}}}}),
            ),
            tool(
                "list_files",
                "List the files in a directory of the workspace.",
                json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            ),
        ])
    }

    #[test]
    fn the_tool_whose_words_match_most_ranks_first() {
        let index = catalog();
        assert_eq!(
            names(&index.search("weather forecast for tomorrow", 5)),
            ["get_forecast", "get_weather"]
        );
        assert_eq!(names(&index.search("email someone", 5)), ["send_email"]);
    }

    #[test]
    fn parameter_names_and_nested_descriptions_are_searched() {
        let index = catalog();
        assert_eq!(names(&index.search("recipient", 5)), ["send_email"]);
        assert_eq!(
            names(&index.search("tax registration", 5)),
            ["createInvoice"]
        );
        assert_eq!(names(&index.search("vat", 5)), ["createInvoice"]);
    }

    #[test]
    fn camel_case_snake_case_and_plurals_meet() {
        let index = catalog();
        assert_eq!(names(&index.search("invoices", 5)), ["createInvoice"]);
        assert_eq!(
            names(&index.search("create invoice", 5))[0],
            "createInvoice"
        );
        assert_eq!(names(&index.search("FILES", 5)), ["list_files"]);
    }

    #[test]
    fn rare_words_outweigh_common_ones() {
        // "get" is in two tools, "weather" in two, "current" in one: the tool with the
        // rare word wins.
        let index = catalog();
        assert_eq!(names(&index.search("get current", 5))[0], "get_weather");
    }

    #[test]
    fn an_exact_name_is_found_first_and_no_match_finds_nothing() {
        let index = catalog();
        assert_eq!(names(&index.search("get_weather", 1)), ["get_weather"]);
        assert!(index.search("kubernetes", 5).is_empty());
        assert!(index.search("", 5).is_empty());
        assert!(index.search("the of and", 5).is_empty());
        assert_eq!(index.search("weather", 1).len(), 1);
        assert!(ToolIndex::default().search("weather", 5).is_empty());
    }

    #[test]
    fn search_arguments_are_checked() {
        assert!(search_arguments(&json!({"query": "x"})).is_ok());
        assert_eq!(
            search_arguments(&json!({"query": "x", "limit": 3}))
                .unwrap()
                .1,
            3
        );
        assert_eq!(
            search_arguments(&json!({"query": "x", "limit": 999}))
                .unwrap()
                .1,
            MAX_SEARCH_LIMIT
        );
        for bad in [
            json!("x"),
            json!({}),
            json!({"query": 1}),
            json!({"query": "  "}),
            json!({"query": "x", "limit": 0}),
            json!({"query": "x", "limit": -1}),
            json!({"query": "x", "other": 1}),
        ] {
            let error = search_arguments(&bad).unwrap_err();
            assert!(!error.to_string().is_empty(), "{bad}");
        }
    }

    /// A tool of the given exposure, active or not.
    struct Gated {
        name: &'static str,
        exposure: ToolExposure,
        active: bool,
    }

    #[async_trait]
    impl Tool for Gated {
        fn name(&self) -> &str {
            self.name
        }
        fn description(&self) -> &str {
            "Export the ledger of payments."
        }
        fn schema(&self) -> Value {
            json!({"type": "object", "properties": {}})
        }
        async fn call(&self, _: &Value, _: &ToolContext) -> AgentResult<Vec<Content>> {
            Ok(vec![Content::text("done")])
        }
        fn exposure(&self) -> ToolExposure {
            self.exposure
        }
        async fn should_activate(&self, _: &ActivationContext) -> bool {
            self.active
        }
    }

    fn gated_set() -> ToolSet {
        let mut set = ToolSet::new();
        for (name, exposure, active) in [
            ("direct_ledger", ToolExposure::Direct, true),
            ("open_ledger", ToolExposure::Deferred, true),
            ("secret_ledger", ToolExposure::Deferred, false),
            ("hidden_ledger", ToolExposure::Hidden, true),
        ] {
            set.register_tool(Gated {
                name,
                exposure,
                active,
            })
            .unwrap();
        }
        set
    }

    #[tokio::test]
    async fn inactive_and_hidden_tools_are_never_found_nor_offered() {
        let set = gated_set();
        let search = SearchTool::over(&set, ToolSearch::All).unwrap();
        // Hidden tools are not even indexed.
        assert!(
            search
                .index()
                .definitions()
                .all(|d| d.name != "hidden_ledger")
        );
        let found = search
            .found(&json!({"query": "ledger"}), &ActivationContext::default())
            .await
            .unwrap();
        assert_eq!(found, ["direct_ledger", "open_ledger"]);
        let text = search
            .call(&json!({"query": "secret_ledger"}), &ToolContext::default())
            .await
            .unwrap();
        assert!(!text[0].as_text().unwrap().contains("secret"), "{text:?}");
    }

    #[tokio::test]
    async fn deferred_mode_searches_deferred_tools_only() {
        let set = gated_set();
        let activation = ActivationContext::default();
        let active = set.active_definitions(&activation).await;
        let names = |defs: &[Arc<ToolDefinition>]| -> Vec<String> {
            defs.iter().map(|d| d.name.clone()).collect()
        };
        // Native search: the Direct tool in full, the active Deferred one deferred.
        let turn = ToolSearch::Deferred
            .turn_tools(&set, None, active.clone(), &[], true, &activation)
            .await;
        assert_eq!(names(&turn.tools), ["direct_ledger"]);
        assert_eq!(names(&turn.deferred), ["open_ledger"]);
        assert_eq!(turn.offered, ["direct_ledger", "open_ledger"]);
        // Off: everything active in full, as without search.
        let turn = ToolSearch::Off
            .turn_tools(&set, None, active, &[], true, &activation)
            .await;
        assert_eq!(names(&turn.tools), ["direct_ledger", "open_ledger"]);
        assert!(turn.deferred.is_empty());
        // Search off, a tool of the application's own named `search_tools` is offered.
        let mut own = ToolSet::new();
        own.register_tool(Gated {
            name: SEARCH_TOOL,
            exposure: ToolExposure::Direct,
            active: true,
        })
        .unwrap();
        let active = own.active_definitions(&activation).await;
        let turn = ToolSearch::Off
            .turn_tools(&own, None, active, &[], true, &activation)
            .await;
        assert_eq!(turn.offered, [SEARCH_TOOL]);
        assert!(ToolSearch::Deferred.covers(ToolExposure::Deferred));
        assert!(!ToolSearch::Deferred.covers(ToolExposure::Direct));
        assert!(!ToolSearch::All.covers(ToolExposure::Hidden));
    }
}

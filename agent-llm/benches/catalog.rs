//! A catalog of many tools, for measuring what tool search saves: the forecast tools
//! `scripts/compile-bench.sh` generates (a city, a number of days, an optional unit,
//! each documented), as many as asked. Shared by the `tool_search` bench and test.

use agent_benches::dispatch::{ForecastArgs, forecast};
use async_trait::async_trait;
use std::sync::Arc;
use toolwright_core::{
    AgentResult, ToolContext, ToolSet, tool::TypedTool, toolset::ToolDefinition,
};

/// How many tools the measurement offers.
pub const CATALOG_SIZE: usize = 500;

/// The `i`th forecast tool, `forecast_{i}`.
pub struct Forecast {
    name: String,
    description: String,
}

impl Forecast {
    /// Forecast tool number `i`.
    pub fn new(i: usize) -> Self {
        Self {
            name: format!("forecast_{i}"),
            description: format!("Forecast number {i} for a city."),
        }
    }
}

#[async_trait]
impl TypedTool for Forecast {
    type Args = ForecastArgs;
    type Output = String;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    async fn call_typed(&self, args: ForecastArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(forecast(args.city, args.days, args.unit).await)
    }
}

/// A set of `n` forecast tools.
pub fn catalog_set(n: usize) -> ToolSet {
    let mut set = ToolSet::new();
    for i in 0..n {
        set.register_tool(Forecast::new(i))
            .expect("the names are distinct and valid");
    }
    set
}

/// The definitions of [`catalog_set`]`(n)`, in order.
pub fn catalog(n: usize) -> Vec<Arc<ToolDefinition>> {
    let set = catalog_set(n);
    (0..n)
        .map(|i| set.definition(&format!("forecast_{i}")).unwrap().clone())
        .collect()
}

/// Bytes of tool definitions in one request, measured on the body a client posts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolBytes {
    /// Every tool sent in full: the whole `tools` array, serialized.
    pub all: usize,
    /// Provider-native search, on the wire: the whole `tools` array (the deferred tools'
    /// schemas still travel, for the provider to search).
    pub native_wire: usize,
    /// Provider-native search, what the model is shown up front: the entries not marked
    /// `defer_loading`, plus each deferred tool's name and description where the
    /// provider shows those (OpenAI Responses does, Anthropic does not).
    pub native_shown: usize,
    /// The built-in search tool on the first turn: the whole `tools` array.
    pub search_first_turn: usize,
    /// The built-in search tool after one search loaded five tools.
    pub search_after_search: usize,
}

impl ToolBytes {
    /// A rough token count for `bytes` of JSON: one token per four bytes, OpenAI's rule
    /// of thumb for English text. Linear, so ratios of estimates are ratios of bytes.
    pub fn tokens(bytes: usize) -> usize {
        bytes.div_ceil(4)
    }
}

/// The bytes of `body`'s `tools` array, serialized as sent.
pub fn tools_bytes(body: &serde_json::Value) -> usize {
    body.get("tools")
        .map_or(0, |tools| serde_json::to_vec(tools).unwrap().len())
}

/// What the model is shown of `body`'s tools before it searches (see
/// [`ToolBytes::native_shown`]).
pub fn shown_bytes(body: &serde_json::Value, shows_deferred_names: bool) -> usize {
    let Some(tools) = body.get("tools").and_then(serde_json::Value::as_array) else {
        return 0;
    };
    tools
        .iter()
        .map(|tool| {
            if tool.get("defer_loading") == Some(&serde_json::Value::Bool(true)) {
                if shows_deferred_names {
                    let summary = serde_json::json!({
                        "name": tool["name"],
                        "description": tool["description"],
                    });
                    serde_json::to_vec(&summary).unwrap().len()
                } else {
                    0
                }
            } else {
                serde_json::to_vec(tool).unwrap().len()
            }
        })
        .sum()
}

/// Measures [`ToolBytes`] for `n` catalog tools with the client whose request bodies
/// `body` makes (`native` the client's own search, `shows_deferred_names` whether its
/// provider shows deferred tools' names and descriptions).
pub async fn measure(
    n: usize,
    body: impl Fn(&toolwright_core::llm::LlmRequest<'_>) -> serde_json::Value,
    shows_deferred_names: bool,
) -> ToolBytes {
    use toolwright_core::search::{SearchTool, ToolSearch};
    use toolwright_core::{
        Message,
        llm::{AssistantMessage, LlmRequest, ToolCall, ToolResultMessage},
        tool::ActivationContext,
    };

    let messages = [Message::user(
        "What will the weather be in Paris in two days?",
    )];
    let definitions = catalog(n);
    let all = tools_bytes(&body(&LlmRequest::new(&messages, &definitions)));
    let native = body(&LlmRequest::new(&messages, &[]).with_deferred(&definitions));

    let mut set = catalog_set(n);
    let search = Arc::new(SearchTool::over(&set, ToolSearch::All).unwrap());
    set.register_arc(search.clone()).unwrap();
    let activation = ActivationContext::default();
    let body = &body;
    let turn = |history: Vec<Message>| {
        let set = &set;
        let search = search.clone();
        let activation = activation.clone();
        async move {
            let active = set.active_definitions(&activation).await;
            let tools = ToolSearch::All
                .turn_tools(set, Some(&search), active, &history, false, &activation)
                .await;
            tools_bytes(&body(&LlmRequest::new(&history, &tools.tools)))
        }
    };
    let search_first_turn = turn(messages.to_vec()).await;
    let searched = vec![
        messages[0].clone(),
        Message::Assistant(AssistantMessage {
            tool_calls: vec![ToolCall::new(
                "call_1",
                toolwright_core::search::SEARCH_TOOL,
                serde_json::json!({"query": "forecast number 42", "limit": 5}),
            )],
            ..AssistantMessage::default()
        }),
        Message::Tool(ToolResultMessage {
            call_id: "call_1".into(),
            name: toolwright_core::search::SEARCH_TOOL.into(),
            content: vec![toolwright_core::Content::text("{\"tools\": []}")],
            is_error: false,
        }),
    ];
    let search_after_search = turn(searched).await;
    ToolBytes {
        all,
        native_wire: tools_bytes(&native),
        native_shown: shown_bytes(&native, shows_deferred_names),
        search_first_turn,
        search_after_search,
    }
}

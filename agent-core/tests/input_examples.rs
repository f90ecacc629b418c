//! A tool's input examples and its own strict choice, from `#[tool]` and from a
//! hand-written `Tool`: on its definition, in the dialects that carry them, and checked
//! by `assert_dialects`.

use serde_json::{Value, json};
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolSet, async_trait,
    dialect::{Dialect, assert_dialects, dialect_report},
    tool, tools,
};

/// Forecast for a city.
#[tool(
    example(city = "Paris", days = 3),
    example(city = "Oslo", days = "three")
)]
async fn forecast(city: String, #[arg(default = 1)] days: u8) -> String {
    format!("{city}: sunny for {days} days")
}

/// Forecast, with good examples.
#[tool(example(city = "Paris", days = 3), example(city = "Oslo"))]
async fn good_forecast(city: String, #[arg(default = 1)] days: u8) -> String {
    format!("{city}: sunny for {days} days")
}

/// A tool written by hand, with examples and its own strict choice.
struct Lookup {
    examples: Vec<Value>,
}

#[async_trait]
impl Tool for Lookup {
    fn name(&self) -> &str {
        "lookup"
    }

    fn description(&self) -> &str {
        "Look a word up."
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "word": {"type": "string"},
                "language": {"type": "string", "enum": ["en", "fr"]},
            },
            "required": ["word"],
            "additionalProperties": false,
        })
    }

    async fn call(&self, args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        Ok(vec![Content::text(args["word"].to_string())])
    }

    fn input_examples(&self) -> Vec<Value> {
        self.examples.clone()
    }

    fn strict(&self) -> Option<bool> {
        Some(true)
    }
}

#[test]
fn assert_dialects_names_the_tool_the_example_and_the_problem() {
    let report = dialect_report(&tools![forecast], &Dialect::ALL);
    assert_eq!(
        report,
        [
            "tool `forecast` has an example that does not match its schema: example 2 \
             {\"city\":\"Oslo\",\"days\":\"three\"}: at `/days`: expected integer, found \"three\""
        ]
    );
    let panic = std::panic::catch_unwind(|| assert_dialects(&tools![forecast])).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(message.contains("example 2"), "{message}");
}

#[test]
fn good_examples_pass_and_reach_the_definition() {
    let set = tools![good_forecast];
    assert_dialects(&set);
    let definition = set.definition("good_forecast").unwrap();
    assert_eq!(
        definition.input_examples,
        [json!({"city": "Paris", "days": 3}), json!({"city": "Oslo"})]
    );
    assert_eq!(definition.strict, None);
}

#[test]
fn a_hand_written_tool_gives_examples_and_strict() {
    let mut set = ToolSet::new();
    set.register_tool(Lookup {
        examples: vec![json!({"word": "chat", "language": "fr"})],
    })
    .unwrap();
    assert_dialects(&set);
    let definition = set.definition("lookup").unwrap();
    assert_eq!(definition.strict, Some(true));

    // Anthropic shows the examples; the tool is strict in a plain Anthropic client too.
    let anthropic = Dialect::Anthropic.render(definition).unwrap();
    assert_eq!(
        anthropic["input_examples"],
        json!([{"word": "chat", "language": "fr"}])
    );
    assert_eq!(anthropic["strict"], json!(true));
    // OpenAI has no field for them; the tool is strict in a plain OpenAI client.
    let openai = Dialect::OpenAi.render(definition).unwrap();
    assert!(openai.get("input_examples").is_none());
    assert!(openai["function"].get("input_examples").is_none());
    assert_eq!(openai["function"]["strict"], json!(true));
    // In the strict dialect: the optional is required too (and nullable).
    assert_eq!(
        openai["function"]["parameters"]["required"],
        json!(["word", "language"])
    );
    // Gemini and MCP have neither.
    for dialect in [Dialect::Gemini, Dialect::Mcp] {
        let rendered = dialect.render(definition).unwrap().to_string();
        assert!(!rendered.contains("chat"), "{dialect}: {rendered}");
        assert!(!rendered.contains("strict"), "{dialect}: {rendered}");
    }

    let mut bad = ToolSet::new();
    bad.register_tool(Lookup {
        examples: vec![
            json!({"word": "chat", "language": "de"}),
            json!({"language": "en"}),
        ],
    })
    .unwrap();
    let report = dialect_report(&bad, &[Dialect::Anthropic]);
    assert_eq!(
        report,
        [
            "tool `lookup` has an example that does not match its schema: example 1 \
             {\"word\":\"chat\",\"language\":\"de\"}: at `/language`: \"de\" is not one of [\"en\",\"fr\"]",
            "tool `lookup` has an example that does not match its schema: example 2 \
             {\"language\":\"en\"}: the required property `word` is missing",
        ]
    );
}

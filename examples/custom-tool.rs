//! A complete runnable example with a calculator tool, written both ways a tool can be
//! written by hand: `TypedTool` (schema from types) and the raw `Tool` trait.
//!
//! Run: `cargo run --example custom-tool`

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolError, ToolSet,
    tool::{ToolMetadata, TypedTool},
};

/// Which arithmetic operation to apply.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Operation {
    Add,
    Subtract,
    Multiply,
    Divide,
}

#[derive(Deserialize, JsonSchema)]
struct CalculatorArgs {
    /// The operation to apply to `a` and `b`
    operation: Operation,
    /// The left operand
    a: f64,
    /// The right operand
    b: f64,
}

/// Arithmetic on two numbers, with the schema derived from `CalculatorArgs`.
struct Calculator;

#[async_trait]
impl TypedTool for Calculator {
    type Args = CalculatorArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "calculator"
    }

    fn description(&self) -> &'static str {
        "Add, subtract, multiply or divide two numbers"
    }

    async fn call_typed(&self, args: CalculatorArgs, _ctx: &ToolContext) -> AgentResult<String> {
        let CalculatorArgs { operation, a, b } = args;
        let result = match operation {
            Operation::Add => a + b,
            Operation::Subtract => a - b,
            Operation::Multiply => a * b,
            Operation::Divide if b == 0.0 => {
                return Err(ToolError::execution(format!(
                    "cannot divide {a} by zero; ask for a non-zero divisor"
                ))
                .into());
            }
            Operation::Divide => a / b,
        };
        Ok(format!("{a} {} {b} = {result}", symbol(operation)))
    }

    fn metadata(&self) -> ToolMetadata {
        ToolMetadata {
            name: "calculator".into(),
            description: TypedTool::description(self).into(),
            origin: "examples".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            requirements: vec![],
        }
    }
}

fn symbol(operation: Operation) -> char {
    match operation {
        Operation::Add => '+',
        Operation::Subtract => '-',
        Operation::Multiply => '×',
        Operation::Divide => '÷',
    }
}

/// The square root, written against the raw `Tool` trait: the schema by hand, the
/// arguments validated by hand (never trust the model's input).
struct SquareRoot;

#[async_trait]
impl Tool for SquareRoot {
    fn name(&self) -> &'static str {
        "square_root"
    }

    fn description(&self) -> &'static str {
        "The square root of a non-negative number"
    }

    fn schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "x": { "type": "number", "minimum": 0, "description": "The radicand" }
            },
            "required": ["x"]
        })
    }

    async fn call(&self, args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let x = args.get("x").and_then(Value::as_f64).ok_or_else(|| {
            ToolError::invalid_arguments("Invalid arguments: `x` must be a number")
        })?;
        if x < 0.0 {
            return Err(ToolError::execution(format!(
                "{x} is negative; the square root is defined here for x >= 0 only"
            ))
            .into());
        }
        Ok(vec![Content::text(format!("√{x} = {}", x.sqrt()))])
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(1_000)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> AgentResult<()> {
    let mut tools = ToolSet::new();
    tools.register_tool(Calculator)?.register_tool(SquareRoot)?;

    println!("Tool definitions sent to the model:");
    for tool in &tools {
        let definition = tools.definition(tool.name()).expect("registered above");
        println!(
            "{}",
            serde_json::to_string_pretty(&**definition).expect("serializable")
        );
    }

    let ctx = ToolContext::new("example-session");
    let calls = [
        ("calculator", json!({"operation": "add", "a": 2, "b": 3})),
        (
            "calculator",
            json!({"operation": "subtract", "a": 10, "b": 4.5}),
        ),
        (
            "calculator",
            json!({"operation": "multiply", "a": 6, "b": 7}),
        ),
        ("calculator", json!({"operation": "divide", "a": 1, "b": 8})),
        ("calculator", json!({"operation": "divide", "a": 1, "b": 0})),
        ("calculator", json!({"operation": "modulo", "a": 1, "b": 2})),
        ("square_root", json!({"x": 2})),
        ("square_root", json!({"x": -4})),
        ("cube_root", json!({"x": 8})),
    ];
    println!("\nCalls:");
    for (name, args) in calls {
        match tools.call(name, &args, &ctx).await {
            Ok(content) => {
                let text: Vec<&str> = content.iter().filter_map(Content::as_text).collect();
                println!("  {name} {args} -> {}", text.join(" "));
            }
            Err(error) => println!("  {name} {args} -> error: {error}"),
        }
    }
    Ok(())
}

use toolwright_core::{AgentResult, ToolContext, async_trait, tools, tool::TypedTool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

struct Echo;

#[async_trait]
impl TypedTool for Echo {
    type Args = EchoArgs;
    type Output = String;

    fn name(&self) -> &'static str {
        "echo"
    }

    fn description(&self) -> &'static str {
        "Echo the text."
    }

    async fn call_typed(&self, args: EchoArgs, _ctx: &ToolContext) -> AgentResult<String> {
        Ok(args.text)
    }
}

fn main() {
    let _ = tools![Echo];
}

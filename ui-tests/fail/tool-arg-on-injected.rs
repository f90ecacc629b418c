use toolwright_core::{ToolContext, tool};

/// Run.
#[tool]
async fn run(#[arg(rename = "context")] ctx: &ToolContext) -> String {
    ctx.session_id().to_owned()
}

fn main() {}

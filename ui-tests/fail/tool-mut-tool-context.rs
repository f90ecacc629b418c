use toolwright_core::{ToolContext, tool};

/// Run.
#[tool]
async fn run(ctx: &mut ToolContext) -> String {
    ctx.session_id().to_owned()
}

fn main() {}

use toolwright_core::{tool, tool::ActivationContext};

fn in_workspace(ctx: &ActivationContext) -> bool {
    !ctx.workspace.as_os_str().is_empty()
}

/// Deploy the site.
#[tool(exposure = "deferred", activate_when = in_workspace)]
async fn deploy() -> String {
    "deployed".into()
}

fn main() {}

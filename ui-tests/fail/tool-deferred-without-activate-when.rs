use toolwright_core::tool;

/// Deploy the site.
#[tool(exposure = "deferred")]
async fn deploy() -> String {
    "deployed".into()
}

fn main() {}

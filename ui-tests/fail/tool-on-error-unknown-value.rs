use toolwright_core::tool;

/// Deploy the site.
#[tool(on_error = "abort")]
async fn deploy() -> String {
    "deployed".into()
}

fn main() {}

use toolwright_core::tool;

/// Deploy the site.
#[tool(exposure = "defered")]
async fn deploy() -> String {
    "deployed".into()
}

fn main() {}

use toolwright_core::tool;

/// Deploy the site.
#[tool(max_in_flight = 0)]
async fn deploy() -> String {
    "deployed".into()
}

fn main() {}

use toolwright_mcp::resource;

/// The app's settings.
#[resource(uri = "config://app", tags = ["config"])]
async fn settings() -> String {
    "debug = false".into()
}

fn main() {}

use toolwright_mcp::resource;

/// The app's settings.
#[resource(register, uri = "config://app", tags = ["config", "config"])]
async fn settings() -> String {
    "debug = false".into()
}

fn main() {}

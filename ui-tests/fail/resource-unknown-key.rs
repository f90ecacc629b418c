use toolwright_mcp::resource;

/// The app's settings.
#[resource(uri = "config://app", mime = "text/plain")]
async fn settings() -> String {
    "debug = false".into()
}

fn main() {}

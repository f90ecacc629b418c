use toolwright_mcp::resource;

/// The app's settings.
#[resource]
async fn settings() -> String {
    "debug = false".into()
}

fn main() {}

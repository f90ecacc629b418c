use toolwright_mcp::resource;

/// The app's settings.
#[resource(uri = "config://app", template = "config://{name}")]
async fn settings(name: String) -> String {
    name
}

fn main() {}

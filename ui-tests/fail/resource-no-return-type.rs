use toolwright_mcp::resource;

/// The app's settings.
#[resource(uri = "config://app")]
async fn settings() {}

fn main() {}

use toolwright_mcp::{resource, resources};

/// The app's settings.
#[resource(uri = "config://app")]
async fn settings() -> String {
    "debug = false".into()
}

/// The same URI again.
#[resource(uri = "config://app")]
async fn defaults() -> String {
    "debug = true".into()
}

/// A profile.
#[resource(template = "users://{id}")]
async fn profile(id: u64) -> String {
    id.to_string()
}

fn main() {
    let _ = resources![settings, profile, defaults];
}

use toolwright_core::{tool, toolbox};
use toolwright_mcp::resource;

struct Settings;

#[toolbox]
impl Settings {
    /// The app's settings.
    #[resource(uri = "config://app")]
    #[tool]
    async fn settings(&self) -> String {
        "debug = false".into()
    }
}

fn main() {}

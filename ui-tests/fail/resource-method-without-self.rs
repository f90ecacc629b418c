use toolwright_core::toolbox;
use toolwright_mcp::resource;

struct Settings;

#[toolbox]
impl Settings {
    /// The app's settings.
    #[resource(uri = "config://app")]
    async fn settings() -> String {
        "debug = false".into()
    }
}

fn main() {}

use toolwright_core::toolbox;
use toolwright_mcp::{prompt, resource};

struct Settings;

#[toolbox]
impl Settings {
    /// The app's settings.
    #[resource(uri = "config://app")]
    async fn settings(&self) -> String {
        "debug = false".into()
    }

    /// The same settings again.
    #[resource(uri = "config://app")]
    async fn again(&self) -> String {
        "debug = false".into()
    }

    /// Asks about the settings.
    #[prompt(name = "ask")]
    async fn ask(&self) -> String {
        "What are the settings?".into()
    }

    /// Asks again, under the same name.
    #[prompt(name = "ask")]
    async fn ask_again(&self) -> String {
        "What are the settings now?".into()
    }
}

fn main() {}

use toolwright_core::toolbox;
use toolwright_mcp::resource;

#[derive(Default)]
struct Settings {
    debug: bool,
}

#[toolbox(register)]
impl Settings {
    /// Whether debugging is on.
    #[resource(uri = "config://debug", tags = ["config"])]
    async fn debug(&self) -> String {
        self.debug.to_string()
    }
}

fn main() {}

use toolwright_core::toolbox;
use toolwright_mcp::resource;

#[derive(Default)]
struct Settings {
    debug: bool,
}

#[toolbox]
impl Settings {
    /// Whether debugging is on.
    #[resource(register, uri = "config://debug")]
    async fn debug(&self) -> String {
        self.debug.to_string()
    }
}

fn main() {}

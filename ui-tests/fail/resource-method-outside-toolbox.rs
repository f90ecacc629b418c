use toolwright_mcp::resource;

struct Settings {
    debug: bool,
}

impl Settings {
    /// Whether debugging is on.
    #[resource(uri = "config://debug")]
    async fn debug(&self) -> String {
        self.debug.to_string()
    }
}

fn main() {}

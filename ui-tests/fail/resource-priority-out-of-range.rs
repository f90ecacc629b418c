use toolwright_mcp::resource;

/// The handbook.
#[resource(uri = "handbook://current", priority = 1.5)]
async fn handbook() -> String {
    "Be kind.".into()
}

fn main() {}

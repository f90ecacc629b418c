use toolwright_mcp::resource;

/// The handbook.
#[resource(uri = "handbook://current", audience = ["user", "model"])]
async fn handbook() -> String {
    "Be kind.".into()
}

fn main() {}

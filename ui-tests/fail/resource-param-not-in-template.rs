use toolwright_mcp::resource;

/// A user's profile.
#[resource(template = "users://{id}/profile")]
async fn profile(id: u64, verbose: bool) -> String {
    format!("{id} {verbose}")
}

fn main() {}

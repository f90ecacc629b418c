use toolwright_mcp::{resource, resources};

/// A user's profile: not async, a parameter the template lacks, a variable with no
/// parameter. Every mistake is reported, and `resources![]` still takes the fn.
#[resource(template = "users://{id}/posts/{post}")]
fn profile(id: u64, verbose: bool) -> String {
    format!("{id} {verbose}")
}

fn main() {
    let _ = resources![profile];
    let _ = profile(1, true);
}

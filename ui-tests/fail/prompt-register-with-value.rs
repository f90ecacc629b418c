use toolwright_mcp::prompt;

/// Asks for a review.
#[prompt(register = true)]
async fn review() -> String {
    "Review this.".into()
}

fn main() {}

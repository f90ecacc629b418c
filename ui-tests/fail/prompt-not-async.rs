use toolwright_mcp::prompt;

/// Asks for a review.
#[prompt]
fn review(
    /// The code.
    code: String,
) -> String {
    code
}

fn main() {}

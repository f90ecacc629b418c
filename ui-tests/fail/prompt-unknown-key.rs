use toolwright_mcp::prompt;

/// Asks for a review.
#[prompt(titel = "Review")]
async fn review(
    /// The code.
    code: String,
) -> String {
    code
}

fn main() {}

use toolwright_mcp::prompt;

/// Asks for a review.
#[prompt]
async fn review(
    /// The code.
    code: String,
) -> u32 {
    code.len() as u32
}

fn main() {}

use toolwright_mcp::prompt;

struct Code {
    text: String,
}

/// Asks for a review.
#[prompt]
async fn review(
    /// The code.
    code: Code,
    /// What to look at.
    focus: Option<Code>,
) -> String {
    format!("{}{}", code.text, focus.map(|c| c.text).unwrap_or_default())
}

fn main() {}

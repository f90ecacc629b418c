use toolwright_mcp::prompt;

/// Asks for a summary.
#[prompt(tags = ["writing"])]
async fn summarize(
    /// What to summarize.
    text: String,
) -> String {
    text
}

fn main() {}

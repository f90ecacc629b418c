use toolwright_mcp::{prompt, prompts};

/// Asks for a review.
#[prompt]
async fn review() -> String {
    "Review this.".into()
}

/// Another prompt with the same name.
#[prompt(name = "review")]
async fn careful_review() -> String {
    "Review this carefully.".into()
}

fn main() {
    let _ = prompts![review, careful_review];
}

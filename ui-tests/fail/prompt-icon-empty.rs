use toolwright_mcp::prompt;

/// Plans a trip.
#[prompt(icons = ["https://example.com/trip.svg", " "])]
async fn plan(
    /// Where to.
    city: String,
) -> String {
    city
}

fn main() {}

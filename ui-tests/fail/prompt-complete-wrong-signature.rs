use toolwright_mcp::prompt;

fn cities() -> Vec<String> {
    Vec::new()
}

/// Plans a trip.
#[prompt]
async fn plan(
    /// Where to.
    #[arg(complete = cities)]
    city: String,
) -> String {
    city
}

fn main() {}

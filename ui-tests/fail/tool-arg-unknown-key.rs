use toolwright_core::tool;

/// Greet someone.
#[tool]
async fn greet(#[arg(descripion = "Who to greet")] name: String) -> String {
    format!("hello {name}")
}

fn main() {}

use toolwright_core::tool;

/// Greet someone.
#[tool]
async fn greet(#[arg(rename = "who")] #[arg(default)] name: String) -> String {
    format!("hello {name}")
}

fn main() {}

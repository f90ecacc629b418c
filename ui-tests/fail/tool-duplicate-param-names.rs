use toolwright_core::tool;

/// Move a file.
#[tool]
async fn move_file(from: String, #[arg(rename = "from")] to: String) -> String {
    format!("{from} -> {to}")
}

fn main() {}

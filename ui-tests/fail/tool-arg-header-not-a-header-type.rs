use toolwright_core::tool;

/// Tags a note.
#[tool]
async fn tag(#[arg(header = "Tags")] tags: Vec<String>) -> String {
    tags.join(",")
}

fn main() {}

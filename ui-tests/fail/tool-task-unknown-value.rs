use toolwright_core::tool;

/// Export the archive.
#[tool(task = "background")]
async fn export_archive() -> String {
    "exported".into()
}

fn main() {}

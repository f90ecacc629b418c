use toolwright_core::tool;

/// Export the archive.
#[tool(task = false)]
async fn export_archive() -> String {
    "exported".into()
}

fn main() {}

use toolwright_mcp::resource;

/// A search.
#[resource(template = "search://{?query}")]
async fn search(query: String) -> String {
    query
}

/// A file.
#[resource(template = "file:///{path")]
async fn file(path: String) -> String {
    path
}

fn main() {}

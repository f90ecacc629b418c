use toolwright_mcp::resource;

/// A file.
#[resource(template = "file:///{+path}", size = 1024)]
async fn file(path: String) -> String {
    path
}

fn main() {}

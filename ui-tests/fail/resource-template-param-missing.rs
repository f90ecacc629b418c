use toolwright_mcp::resource;

/// A line of a file.
#[resource(template = "files://{name}/lines/{line}")]
async fn line(name: String) -> String {
    name
}

fn main() {}

use toolwright_mcp::resource;

struct Point {
    x: i32,
}

/// A point.
#[resource(template = "points://{at}")]
async fn point(at: Point) -> String {
    at.x.to_string()
}

fn main() {}

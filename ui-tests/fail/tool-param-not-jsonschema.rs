use toolwright_core::tool;

#[derive(serde::Deserialize)]
struct Point {
    x: f64,
}

/// Read a point.
#[tool]
async fn read(label: String, point: Point) -> String {
    format!("{label} {}", point.x)
}

fn main() {}

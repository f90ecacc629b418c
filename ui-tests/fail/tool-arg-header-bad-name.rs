use toolwright_core::tool;

/// Runs in a region.
#[tool]
async fn regional(#[arg(header = "Region Name")] region: String) -> String {
    region
}

fn main() {}

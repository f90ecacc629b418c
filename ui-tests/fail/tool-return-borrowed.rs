use toolwright_core::tool;

static NAME: String = String::new();

/// Name.
#[tool]
async fn name() -> &'static String {
    &NAME
}

fn main() {}

use toolwright_core::tool;

/// Echo a value.
#[tool]
async fn echo(value: impl std::fmt::Display) -> String {
    value.to_string()
}

fn main() {}

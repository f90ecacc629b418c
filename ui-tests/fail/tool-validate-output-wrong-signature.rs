use toolwright_core::tool;

fn not_empty(text: &str) -> bool {
    !text.is_empty()
}

/// Say hi.
#[tool(validate_output = not_empty)]
async fn hi() -> String {
    "hi".into()
}

fn main() {}

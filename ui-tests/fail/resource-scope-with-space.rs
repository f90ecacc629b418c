use toolwright_mcp::{prompt, resource};

/// Payroll.
#[resource(uri = "payroll://all", scopes = ["payroll read"])]
async fn payroll() -> String {
    "all of it".into()
}

/// A letter.
#[prompt(scopes = [""])]
async fn letter() -> String {
    "Draft a letter.".into()
}

fn main() {}

use toolwright_core::tool;

fn is_big(amount: u64) -> bool {
    amount > 100
}

/// Pay someone.
#[tool(require_approval = is_big)]
async fn pay(amount: u64) -> String {
    format!("paid {amount}")
}

fn main() {}

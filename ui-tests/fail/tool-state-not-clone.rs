use toolwright_core::{State, tool};

struct Pool;

/// Query.
#[tool]
async fn query(pool: State<Pool>, sql: String) -> String {
    let _ = pool;
    sql
}

fn main() {}

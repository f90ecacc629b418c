use toolwright_core::{tool, toolbox};

struct Db;

#[toolbox]
impl Db {
    /// Count rows.
    #[tool]
    async fn count(&self, table: String) -> usize {
        table.len()
    }

    /// Count rows, faster.
    #[tool(name = "count")]
    async fn count_fast(&self, table: String) -> usize {
        table.len()
    }
}

fn main() {
    let _ = Db;
}

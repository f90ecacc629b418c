use toolwright_core::{tool, toolbox};

struct Db;

#[toolbox]
impl Db {
    /// Count rows.
    #[tool]
    async fn count(table: String) -> usize {
        table.len()
    }
}

fn main() {
    let _ = Db;
}

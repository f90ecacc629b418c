use toolwright_core::tool;

struct Db;

impl Db {
    /// Count rows.
    #[tool]
    async fn count(&self, table: String) -> usize {
        table.len()
    }
}

fn main() {
    let _ = Db;
}

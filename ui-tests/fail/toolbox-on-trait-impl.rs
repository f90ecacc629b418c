use toolwright_core::toolbox;

struct Db;

#[toolbox]
impl Default for Db {
    fn default() -> Self {
        Db
    }
}

fn main() {}

use toolwright_core::toolbox;
use toolwright_mcp::prompt;

struct Greeter {
    greeted: u64,
}

#[toolbox]
impl Greeter {
    /// Greets someone.
    #[prompt]
    async fn greet(
        &mut self,
        /// Whom to greet.
        name: String,
    ) -> String {
        self.greeted += 1;
        format!("Greet {name}.")
    }
}

fn main() {}

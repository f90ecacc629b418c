//! A tool is exactly as private as its fn: outside the fn's module, neither is visible.
use toolwright_core::tools;

mod inner {
    use toolwright_core::tool;

    /// Private to `inner`.
    #[tool]
    async fn hidden_away() {}
}

fn main() {
    let _ = tools![inner::hidden_away];
}

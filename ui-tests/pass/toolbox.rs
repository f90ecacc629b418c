//! `#[toolbox]`.
use toolwright_core::{ToolContext, tool, toolbox};
use std::sync::Arc;

struct Library {
    books: Vec<String>,
}

#[toolbox]
impl Library {
    /// Search the library.
    #[tool(read_only)]
    async fn search(&self, /// Words to find
        query: String) -> Vec<String> {
        self.books.iter().filter(|b| b.contains(&query)).cloned().collect()
    }

    /// Count books.
    #[toolwright_core::tool(name = "count_books")]
    pub async fn count(&self, ctx: &ToolContext) -> usize {
        let _ = ctx;
        self.books.len()
    }

    /// Not a tool.
    fn helper(&self) -> usize {
        self.books.len()
    }
}

struct Other;

#[toolbox(crate = ::toolwright_core)]
impl Other {
    /// Ping, with `crate` on the toolbox.
    #[tool(activate_when = crate::always, exposure = "deferred")]
    async fn ping(&self) -> &'static str {
        "pong"
    }
}

async fn always(_: &toolwright_core::tool::ActivationContext) -> bool {
    true
}

fn main() {
    assert_eq!(Arc::new(Other).into_toolset().len(), 1);
    let library = Arc::new(Library { books: vec!["Dune".into()] });
    assert_eq!(library.helper(), 1);
    let set = library.clone().into_toolset();
    assert_eq!(set.len(), 2);
    let _tool = LibrarySearchTool(library.clone());
    let _tool = LibraryCountTool(library);
}

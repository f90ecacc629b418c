//! A tool type has the visibility of its fn, whatever form it is written in, and can
//! take parameters of types as private as the fn.
use toolwright_core::{ToolSet, tool, tools};

mod outer {
    pub mod inner {
        use toolwright_core::tool;

        /// Seen by the whole crate.
        #[tool]
        pub(crate) async fn crate_wide() {}

        /// Seen by `outer` and below.
        #[tool]
        pub(super) async fn parent_wide() {}

        /// Seen by `outer` and below, written as a path.
        #[tool]
        pub(in crate::outer) async fn path_wide() {}

        /// Seen by `inner` only.
        #[tool]
        pub(self) async fn own() {}

        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct Private {
            n: u8,
        }

        /// Takes a type private to `inner`.
        #[tool]
        async fn private_arg(p: Private) -> u8 {
            p.n
        }

        pub fn own_tools() -> toolwright_core::ToolSet {
            toolwright_core::tools![own, private_arg]
        }
    }

    pub fn parent_tools() -> toolwright_core::ToolSet {
        toolwright_core::tools![inner::parent_wide, inner::path_wide]
    }
}

/// Seen everywhere.
#[tool]
pub async fn public() {}

fn main() {
    let set: ToolSet = tools![public, outer::inner::crate_wide];
    assert_eq!(set.len(), 2);
    assert_eq!(outer::parent_tools().len(), 2);
    assert_eq!(outer::inner::own_tools().len(), 2);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Local {
        text: String,
    }

    /// A tool in a fn body, over a type of that body.
    #[tool]
    async fn local(l: Local) -> String {
        l.text
    }
    assert_eq!(tools![local].len(), 1);
}

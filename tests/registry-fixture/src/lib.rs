//! Tools registered from a library crate with `#[tool(register)]` and
//! `#[toolbox(register = ...)]`: the registry test's binary sees them beside its own.

#![forbid(unsafe_code)]

use toolwright_core::{tool, toolbox};

/// The names of this crate's registered tools. Calling it also makes sure the linker
/// keeps the crate (and its registrations) in a binary that uses nothing else of it.
pub fn registered_names() -> [&'static str; 3] {
    ["fixture_echo", "fixture_count", "fixture_greet"]
}

pub mod billing {
    //! Tools in a module of their own, for the filter by module.

    use toolwright_core::tool;

    /// Echo the text back.
    #[tool(register, tags = ["billing", "read"])]
    pub async fn fixture_echo(
        /// The text to echo
        text: String,
    ) -> String {
        text
    }
}

/// Count the words of a text.
#[tool(register, tags = ["read"])]
pub async fn fixture_count(
    /// The text
    text: String,
) -> usize {
    text.split_whitespace().count()
}

/// A greeter holding its greeting: a toolbox registered through its constructor.
pub struct Greeter {
    greeting: String,
}

impl Greeter {
    /// The greeter the registry makes.
    pub fn for_registry() -> Self {
        Self {
            greeting: "Hello".to_owned(),
        }
    }
}

#[toolbox(register = Greeter::for_registry, tags = ["people"])]
impl Greeter {
    /// Greet someone.
    #[tool(name = "fixture_greet")]
    async fn greet(
        &self,
        /// Who to greet
        who: String,
    ) -> String {
        format!("{}, {who}!", self.greeting)
    }
}

/// Not registered: `ToolSet::registered()` must leave it out.
#[tool]
pub async fn fixture_unregistered() -> String {
    "never registered".to_owned()
}

//! Tools, resources and prompts registered from a library crate with
//! `#[tool(register)]`, `#[resource(register)]`, `#[prompt(register)]` and
//! `#[toolbox(register = ...)]`: the registry tests' binaries see them beside their own.

#![forbid(unsafe_code)]

use toolwright_core::{tool, toolbox};
use toolwright_mcp::resource;

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

    /// The greeting this greeter says.
    #[resource(uri = "fixture://greeting")]
    async fn greeting(&self) -> String {
        self.greeting.clone()
    }
}

/// The URIs and names of this crate's registered resources and prompts (see
/// [`registered_names`]).
pub fn registered_features() -> ([&'static str; 3], [&'static str; 1]) {
    (
        [
            "fixture://greeting",
            "fixture://motd",
            "fixture://notes/{day}",
        ],
        ["fixture_summary"],
    )
}

pub mod features {
    //! Resources and prompts in a module of their own.

    use toolwright_mcp::{prompt, resource};

    /// The message of the day.
    #[resource(register, uri = "fixture://motd", tags = ["read"])]
    pub async fn motd() -> String {
        "Ship it.".to_owned()
    }

    /// A day's notes.
    #[resource(register, template = "fixture://notes/{day}")]
    pub async fn notes(day: u32) -> String {
        format!("notes of day {day}")
    }

    /// Asks for a summary.
    #[prompt(register, name = "fixture_summary", tags = ["read"])]
    pub async fn summary(
        /// What to summarize.
        text: String,
    ) -> String {
        format!("Summarize: {text}")
    }
}

/// Not registered: `ToolSet::registered()` must leave it out.
#[tool]
pub async fn fixture_unregistered() -> String {
    "never registered".to_owned()
}

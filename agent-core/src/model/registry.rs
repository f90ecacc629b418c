//! Tools collected at link time: `#[tool(register)]` and `#[toolbox(register)]` add a
//! tool to a registry every crate of the binary shares, and [`ToolSet::registered`]
//! builds a set of them, so a large application need not list its tools in `tools![]`.
//!
//! ```
//! use toolwright_core::{ToolSet, tool, toolset::RegisteredTool};
//!
//! /// Look up an invoice.
//! #[tool(register, tags = ["billing"])]
//! async fn find_invoice(id: u64) -> String {
//!     format!("invoice {id}")
//! }
//!
//! /// Refund an invoice.
//! #[tool(register, tags = ["billing", "write"])]
//! async fn refund_invoice(id: u64) -> String {
//!     format!("refunded {id}")
//! }
//!
//! let all = ToolSet::registered().unwrap();
//! assert!(all.get("find_invoice").is_some());
//!
//! let read_only = ToolSet::registered_where(|tool| !tool.has_tag("write")).unwrap();
//! assert!(read_only.get("find_invoice").is_some());
//! assert!(read_only.get("refund_invoice").is_none());
//! ```
//!
//! The registry is built before `main` runs (by the `inventory` crate: a static
//! constructor per registered tool, on Linux, macOS, Windows, the BSDs and WebAssembly).
//! A tool's value is made only when a set takes it.
//!
//! A crate linked into the binary only for its registered tools must still be linked:
//! the linker leaves out a library none of whose items the program uses, and its
//! registrations with it. Name one of its items somewhere (`my_tools::init()`, a type, a
//! constant): `use my_tools as _;` alone does not link it.

use crate::model::error::{AgentError, AgentResult};
use crate::model::set::ToolSet;
use crate::model::tool::Tool;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// One registered tool: where it was defined, its tags, and how to make it.
///
/// `#[tool(register)]` and `#[toolbox(register)]` write these; an application reads them
/// through [`RegisteredTool::all`] or the filters of [`ToolSet::registered_where`].
pub struct RegisteredTool {
    name: &'static str,
    module_path: &'static str,
    file: &'static str,
    line: u32,
    tags: &'static [&'static str],
    make: fn() -> Arc<dyn Tool>,
}

inventory::collect!(RegisteredTool);

impl RegisteredTool {
    /// A registration, as the macros write it.
    #[doc(hidden)]
    pub const fn new(
        name: &'static str,
        module_path: &'static str,
        file: &'static str,
        line: u32,
        tags: &'static [&'static str],
        make: fn() -> Arc<dyn Tool>,
    ) -> Self {
        Self {
            name,
            module_path,
            file,
            line,
            tags,
            make,
        }
    }

    /// Every registered tool in the binary, across crates, in no particular order.
    pub fn all() -> impl Iterator<Item = &'static RegisteredTool> {
        inventory::iter::<RegisteredTool>.into_iter()
    }

    /// The tool's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The module that defines the tool, as `module_path!()` writes it
    /// (`my_app::billing`).
    pub fn module_path(&self) -> &'static str {
        self.module_path
    }

    /// Whether the tool is defined in `module` or a module inside it: `"my_app::billing"`
    /// takes `my_app::billing` and `my_app::billing::refunds`, not `my_app::billing_v2`.
    pub fn is_in_module(&self, module: &str) -> bool {
        let module = module.trim_end_matches("::");
        self.module_path
            .strip_prefix(module)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    }

    /// The source file that defines the tool, as `file!()` writes it.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The line of the `register` key in [`file`](Self::file).
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The tags given with `tags = [...]`.
    pub fn tags(&self) -> &'static [&'static str] {
        self.tags
    }

    /// Whether `tag` is one of the tool's tags.
    pub fn has_tag(&self, tag: &str) -> bool {
        self.tags.contains(&tag)
    }

    /// A new value of the tool (for a toolbox, holding the impl's one shared value).
    pub fn tool(&self) -> Arc<dyn Tool> {
        (self.make)()
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.name)
            .field("module_path", &self.module_path)
            .field("file", &self.file)
            .field("line", &self.line)
            .field("tags", &self.tags)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RegisteredTool {
    /// `src/billing.rs:12 (my_app::billing)`: where the tool was registered.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.line, self.module_path)
    }
}

impl ToolSet {
    /// Every tool registered with `#[tool(register)]` or `#[toolbox(register)]` in the
    /// binary, across crates, in name order. Two registered tools with the same name are
    /// an error naming where each was registered.
    pub fn registered() -> AgentResult<ToolSet> {
        Self::registered_where(|_| true)
    }

    /// The registered tools `keep` accepts, in name order: a filter by module
    /// ([`RegisteredTool::is_in_module`]), tag ([`RegisteredTool::has_tag`]), name or
    /// anything else the entry says. Two accepted tools with the same name are an error
    /// naming where each was registered; tools left out are not checked, so two crates
    /// may each register a `search` that different sets take.
    pub fn registered_where(mut keep: impl FnMut(&RegisteredTool) -> bool) -> AgentResult<ToolSet> {
        let mut chosen: Vec<&'static RegisteredTool> =
            RegisteredTool::all().filter(|entry| keep(entry)).collect();
        // Name order, then place, so the set and any error read the same on every run.
        chosen.sort_by_key(|entry| (entry.name, entry.file, entry.line));
        check_distinct(&chosen)?;
        let mut set = ToolSet::new();
        for entry in chosen {
            set.register_arc(entry.tool())?;
        }
        Ok(set)
    }

    /// The registered tools tagged `tag`; see [`registered_where`](Self::registered_where).
    pub fn registered_with_tag(tag: &str) -> AgentResult<ToolSet> {
        Self::registered_where(|entry| entry.has_tag(tag))
    }

    /// The registered tools defined in `module` or inside it (`"my_app::billing"`); see
    /// [`registered_where`](Self::registered_where).
    pub fn registered_in_module(module: &str) -> AgentResult<ToolSet> {
        Self::registered_where(|entry| entry.is_in_module(module))
    }
}

/// The first name two entries share, as an error naming both places. `entries` are in
/// name order.
fn check_distinct(entries: &[&RegisteredTool]) -> AgentResult<()> {
    let mut first: HashMap<&str, &RegisteredTool> = HashMap::new();
    for entry in entries {
        if let Some(earlier) = first.insert(entry.name, entry) {
            return Err(AgentError::InvalidTool {
                tool: entry.name.to_owned(),
                reason: format!(
                    "two registered tools have this name, one at {earlier} and one at {entry}: \
                     give one another name with #[tool(name = \"...\")], or take one of them \
                     with ToolSet::registered_where"
                ),
            });
        }
    }
    Ok(())
}

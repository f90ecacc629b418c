//! Resources and prompts collected at link time, as tools are: `#[resource(register)]`,
//! `#[prompt(register)]` and `#[toolbox(register)]` add an item to a registry every
//! crate of the binary shares, and [`ResourceSet::registered`] /
//! [`PromptSet::registered`] build a set of them, so a large application need not list
//! its items in `resources![]` and `prompts![]`.
//!
//! ```
//! use toolwright_mcp::prompts::PromptSet;
//! use toolwright_mcp::resources::ResourceSet;
//! use toolwright_mcp::{prompt, resource};
//!
//! /// The app's settings.
//! #[resource(register, uri = "config://app")]
//! async fn settings() -> String {
//!     "debug = false".into()
//! }
//!
//! /// A user's profile.
//! #[resource(register, template = "users://{id}/profile")]
//! async fn profile(id: u64) -> String {
//!     format!("user {id}")
//! }
//!
//! /// Asks for a code review.
//! #[prompt(register)]
//! async fn review(
//!     /// The code to review.
//!     code: String,
//! ) -> String {
//!     format!("Review this code:\n{code}")
//! }
//!
//! let resources = ResourceSet::registered().unwrap();
//! assert!(resources.resource("config://app").is_some());
//! assert!(resources.template("users://{id}/profile").is_some());
//!
//! let prompts = PromptSet::registered().unwrap();
//! assert!(prompts.get("review").is_some());
//! ```
//!
//! The registry is built before `main` runs (by the `inventory` crate, as the tool
//! registry is), and an item's value is made only when a set takes it. A crate linked
//! only for its registered items must still be linked: name one of its items somewhere
//! (`use my_resources as _;` alone does not link it).

use super::prompts::{Prompt, PromptSet};
use super::resources::{FeatureError, Resource, ResourceSet, ResourceTemplate};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use toolwright_core::__private::inventory;

/// Where an item was registered.
#[derive(Debug, Clone, Copy)]
struct Site {
    module_path: &'static str,
    file: &'static str,
    line: u32,
    tags: &'static [&'static str],
}

impl Site {
    fn is_in_module(&self, module: &str) -> bool {
        let module = module.trim_end_matches("::");
        self.module_path
            .strip_prefix(module)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.line, self.module_path)
    }
}

/// How a registered resource is made.
#[derive(Clone, Copy)]
enum MakeResource {
    Fixed(fn() -> Arc<dyn Resource>),
    Template(fn() -> Arc<dyn ResourceTemplate>),
}

/// One registered resource or resource template: its URI (or template), where it was
/// defined, and how to make it.
///
/// `#[resource(register)]` and `#[toolbox(register)]` write these; an application reads
/// them through [`RegisteredResource::all`] or the filter of
/// [`ResourceSet::registered_where`].
pub struct RegisteredResource {
    uri: &'static str,
    site: Site,
    make: MakeResource,
}

inventory::collect!(RegisteredResource);

impl RegisteredResource {
    /// A resource at one URI, as the macros register it.
    #[doc(hidden)]
    pub const fn fixed(
        uri: &'static str,
        module_path: &'static str,
        file: &'static str,
        line: u32,
        tags: &'static [&'static str],
        make: fn() -> Arc<dyn Resource>,
    ) -> Self {
        Self {
            uri,
            site: Site {
                module_path,
                file,
                line,
                tags,
            },
            make: MakeResource::Fixed(make),
        }
    }

    /// A resource template, as the macros register it.
    #[doc(hidden)]
    pub const fn template(
        template: &'static str,
        module_path: &'static str,
        file: &'static str,
        line: u32,
        tags: &'static [&'static str],
        make: fn() -> Arc<dyn ResourceTemplate>,
    ) -> Self {
        Self {
            uri: template,
            site: Site {
                module_path,
                file,
                line,
                tags,
            },
            make: MakeResource::Template(make),
        }
    }

    /// Every registered resource and template in the binary, across crates, in no
    /// particular order.
    pub fn all() -> impl Iterator<Item = &'static RegisteredResource> {
        inventory::iter::<RegisteredResource>.into_iter()
    }

    /// The resource's URI, or the template as written (`users://{id}/profile`).
    pub fn uri(&self) -> &'static str {
        self.uri
    }

    /// Whether it is a template rather than a resource at one URI.
    pub fn is_template(&self) -> bool {
        matches!(self.make, MakeResource::Template(_))
    }

    /// The module that defines it, as `module_path!()` writes it.
    pub fn module_path(&self) -> &'static str {
        self.site.module_path
    }

    /// Whether it is defined in `module` or a module inside it: `"my_app::docs"` takes
    /// `my_app::docs` and `my_app::docs::api`, not `my_app::docs_v2`.
    pub fn is_in_module(&self, module: &str) -> bool {
        self.site.is_in_module(module)
    }

    /// The source file that defines it, as `file!()` writes it.
    pub fn file(&self) -> &'static str {
        self.site.file
    }

    /// The line of the `register` key in [`file`](Self::file).
    pub fn line(&self) -> u32 {
        self.site.line
    }

    /// Its `tags = [...]` (for a toolbox's item, the toolbox's).
    pub fn tags(&self) -> &'static [&'static str] {
        self.site.tags
    }

    /// Whether `tags` names `tag`.
    pub fn has_tag(&self, tag: &str) -> bool {
        self.site.tags.contains(&tag)
    }

    /// Adds a new value of it to `set`.
    fn add_to(&self, set: &mut ResourceSet) -> Result<(), FeatureError> {
        match self.make {
            MakeResource::Fixed(make) => set.add_resource_arc(make()),
            MakeResource::Template(make) => set.add_template_arc(make()),
        }
    }
}

impl fmt::Debug for RegisteredResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredResource")
            .field("uri", &self.uri)
            .field("is_template", &self.is_template())
            .field("module_path", &self.site.module_path)
            .field("file", &self.site.file)
            .field("line", &self.site.line)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RegisteredResource {
    /// `src/docs.rs:12 (my_app::docs)`: where it was registered.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.site.fmt(f)
    }
}

/// One registered prompt: its name, where it was defined, and how to make it.
///
/// `#[prompt(register)]` and `#[toolbox(register)]` write these; an application reads
/// them through [`RegisteredPrompt::all`] or the filter of
/// [`PromptSet::registered_where`].
pub struct RegisteredPrompt {
    name: &'static str,
    site: Site,
    make: fn() -> Arc<dyn Prompt>,
}

inventory::collect!(RegisteredPrompt);

impl RegisteredPrompt {
    /// A registration, as the macros write it.
    #[doc(hidden)]
    pub const fn new(
        name: &'static str,
        module_path: &'static str,
        file: &'static str,
        line: u32,
        tags: &'static [&'static str],
        make: fn() -> Arc<dyn Prompt>,
    ) -> Self {
        Self {
            name,
            site: Site {
                module_path,
                file,
                line,
                tags,
            },
            make,
        }
    }

    /// Every registered prompt in the binary, across crates, in no particular order.
    pub fn all() -> impl Iterator<Item = &'static RegisteredPrompt> {
        inventory::iter::<RegisteredPrompt>.into_iter()
    }

    /// The prompt's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The module that defines it, as `module_path!()` writes it.
    pub fn module_path(&self) -> &'static str {
        self.site.module_path
    }

    /// Whether it is defined in `module` or a module inside it (see
    /// [`RegisteredResource::is_in_module`]).
    pub fn is_in_module(&self, module: &str) -> bool {
        self.site.is_in_module(module)
    }

    /// The source file that defines it, as `file!()` writes it.
    pub fn file(&self) -> &'static str {
        self.site.file
    }

    /// The line of the `register` key in [`file`](Self::file).
    pub fn line(&self) -> u32 {
        self.site.line
    }

    /// Its `tags = [...]` (for a toolbox's item, the toolbox's).
    pub fn tags(&self) -> &'static [&'static str] {
        self.site.tags
    }

    /// Whether `tags` names `tag`.
    pub fn has_tag(&self, tag: &str) -> bool {
        self.site.tags.contains(&tag)
    }

    /// A new value of the prompt (for a toolbox, holding the impl's one shared value).
    pub fn prompt(&self) -> Arc<dyn Prompt> {
        (self.make)()
    }
}

impl fmt::Debug for RegisteredPrompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredPrompt")
            .field("name", &self.name)
            .field("module_path", &self.site.module_path)
            .field("file", &self.site.file)
            .field("line", &self.site.line)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RegisteredPrompt {
    /// `src/prompts.rs:12 (my_app::prompts)`: where it was registered.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.site.fmt(f)
    }
}

impl ResourceSet {
    /// Every resource and template registered with `#[resource(register)]` or
    /// `#[toolbox(register)]` in the binary, across crates, in URI order. Two registered
    /// at one URI (or two templates written alike) are an error naming where each was
    /// registered.
    pub fn registered() -> Result<ResourceSet, FeatureError> {
        Self::registered_where(|_| true)
    }

    /// The registered resources and templates `keep` accepts, in URI order: a filter by
    /// module ([`RegisteredResource::is_in_module`]), URI or anything else the entry
    /// says. Two accepted at one URI are an error naming where each was registered;
    /// those left out are not checked, so two crates may each register a `config://app`
    /// that different sets take.
    pub fn registered_where(
        keep: impl FnMut(&RegisteredResource) -> bool,
    ) -> Result<ResourceSet, FeatureError> {
        let key = |e: &RegisteredResource| (e.uri, e.is_template());
        let chosen = choose(RegisteredResource::all(), keep, key, |e| e.site).map_err(
            |(earlier, entry)| {
                let what = if entry.is_template() {
                    "two registered resource templates are written"
                } else {
                    "two registered resources are at"
                };
                FeatureError::invalid_arguments(format!(
                    "{what} `{}`, one at {} and one at {}: each is offered once; give one \
                     another URI, or take one of them with ResourceSet::registered_where",
                    entry.uri, earlier.site, entry.site
                ))
            },
        )?;
        let mut set = ResourceSet::new();
        for entry in chosen {
            entry.add_to(&mut set)?;
        }
        Ok(set)
    }

    /// The registered resources and templates defined in `module` or inside it
    /// (`"my_app::docs"`); see [`registered_where`](Self::registered_where).
    pub fn registered_in_module(module: &str) -> Result<ResourceSet, FeatureError> {
        Self::registered_where(|entry| entry.is_in_module(module))
    }
}

impl PromptSet {
    /// Every prompt registered with `#[prompt(register)]` or `#[toolbox(register)]` in
    /// the binary, across crates, in name order. Two registered prompts with the same
    /// name are an error naming where each was registered.
    pub fn registered() -> Result<PromptSet, FeatureError> {
        Self::registered_where(|_| true)
    }

    /// The registered prompts `keep` accepts, in name order: a filter by module
    /// ([`RegisteredPrompt::is_in_module`]), name or anything else the entry says. Two
    /// accepted prompts with the same name are an error naming where each was
    /// registered; prompts left out are not checked.
    pub fn registered_where(
        keep: impl FnMut(&RegisteredPrompt) -> bool,
    ) -> Result<PromptSet, FeatureError> {
        let chosen = choose(RegisteredPrompt::all(), keep, |e| e.name, |e| e.site).map_err(
            |(earlier, entry)| {
                FeatureError::invalid_arguments(format!(
                    "two registered prompts are named `{}`, one at {} and one at {}: give one \
                     another name with #[prompt(name = \"...\")], or take one of them with \
                     PromptSet::registered_where",
                    entry.name, earlier.site, entry.site
                ))
            },
        )?;
        let mut set = PromptSet::new();
        for entry in chosen {
            set.add_arc(entry.prompt())?;
        }
        Ok(set)
    }

    /// The registered prompts defined in `module` or inside it; see
    /// [`registered_where`](Self::registered_where).
    pub fn registered_in_module(module: &str) -> Result<PromptSet, FeatureError> {
        Self::registered_where(|entry| entry.is_in_module(module))
    }
}

/// The entries `keep` accepts, or the first two that share a key.
type Chosen<T> = Result<Vec<&'static T>, (&'static T, &'static T)>;

/// The entries `keep` accepts, in `key` order, then by place, so the set and any error
/// read the same on every run; or the first two that share a key.
fn choose<T, K: Ord + std::hash::Hash>(
    all: impl Iterator<Item = &'static T>,
    mut keep: impl FnMut(&T) -> bool,
    key: impl Fn(&T) -> K,
    site: impl Fn(&T) -> Site,
) -> Chosen<T> {
    let mut chosen: Vec<&'static T> = all.filter(|entry| keep(entry)).collect();
    chosen.sort_by(|a, b| {
        let (sa, sb) = (site(a), site(b));
        key(a)
            .cmp(&key(b))
            .then_with(|| (sa.file, sa.line).cmp(&(sb.file, sb.line)))
    });
    let mut first: HashMap<K, &'static T> = HashMap::new();
    for entry in &chosen {
        if let Some(earlier) = first.insert(key(entry), entry) {
            return Err((earlier, entry));
        }
    }
    Ok(chosen)
}

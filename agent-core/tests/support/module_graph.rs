//! The module tree of a crate's `src/`, read from its files, and which module names
//! which: `crate::`, `super::` and `self::` paths, `use` of a child module, and the
//! re-exports they pass through. The layers tests of this crate and of toolwright-mcp
//! read it to check that imports point down and that no modules import each other in a
//! cycle, at any depth of the tree (two files of one folder as much as two top-level
//! modules).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module's path from the crate root, one segment a name (`[]` is the root).
pub type ModPath = Vec<String>;

/// The modules of a crate and the modules each names.
pub struct ModuleGraph {
    /// Every module, with the file that holds it.
    modules: BTreeMap<ModPath, PathBuf>,
    /// For each module, the modules its code names (resolved through re-exports).
    uses: BTreeMap<ModPath, BTreeSet<ModPath>>,
}

impl ModuleGraph {
    /// Reads every `.rs` file under `src` (`lib.rs` the root).
    pub fn read(src: &Path) -> Self {
        let mut modules = BTreeMap::new();
        for file in rust_files(src) {
            modules.insert(module_of(src, &file), file);
        }
        let known: BTreeSet<ModPath> = modules.keys().cloned().collect();
        let code: BTreeMap<ModPath, String> = modules
            .iter()
            .map(|(module, file)| (module.clone(), code(file)))
            .collect();
        // What each module re-exports, by name: `pub use options::HttpOptions` in `http`
        // maps (`http`, `HttpOptions`) to `http::options`.
        let mut exports: BTreeMap<(ModPath, String), ModPath> = BTreeMap::new();
        for (module, text) in &code {
            for statement in use_statements(text).into_iter().filter(|s| s.public) {
                for path in path_tree(&statement.path) {
                    let Some(name) = path.last().cloned() else {
                        continue;
                    };
                    if let Some(target) = resolve(module, &path, &known, &BTreeMap::new(), true)
                        && target != *module
                    {
                        exports.insert((module.clone(), name), target);
                    }
                }
            }
        }
        let mut uses: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (module, text) in &code {
            let mut named = BTreeSet::new();
            for path in anchored_paths(text) {
                named.extend(resolve(module, &path, &known, &exports, false));
            }
            for statement in use_statements(text) {
                for path in path_tree(&statement.path) {
                    named.extend(resolve(module, &path, &known, &exports, true));
                }
            }
            named.remove(module);
            uses.insert(module.clone(), named);
        }
        Self { modules, uses }
    }

    /// The top-level modules, by name.
    pub fn top_level(&self) -> BTreeSet<String> {
        self.modules
            .keys()
            .filter(|m| m.len() == 1)
            .map(|m| m[0].clone())
            .collect()
    }

    /// For each top-level module, the other top-level modules its files name.
    pub fn top_level_imports(&self) -> BTreeMap<String, BTreeSet<String>> {
        self.child_imports(&[])
    }

    /// For each child of `parent` (a module path, `&[]` the root), the other children of
    /// `parent` that its files name.
    pub fn child_imports(&self, parent: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
        let depth = parent.len();
        let under = |m: &ModPath| m.len() > depth && m.iter().zip(parent).all(|(a, b)| a == b);
        let mut imports: BTreeMap<String, BTreeSet<String>> = self
            .modules
            .keys()
            .filter(|m| m.len() == depth + 1 && under(m))
            .map(|m| (m[depth].clone(), BTreeSet::new()))
            .collect();
        for (module, named) in &self.uses {
            if !under(module) {
                continue;
            }
            let from = &module[depth];
            for target in named {
                if under(target) && target[depth] != *from {
                    imports
                        .entry(from.clone())
                        .or_default()
                        .insert(target[depth].clone());
                }
            }
        }
        imports
    }

    /// Each cycle among the children of one module: modules of one parent that name
    /// each other, directly or around a loop, each import counted for the child of
    /// their lowest common ancestor that holds it. A module naming its own ancestor or
    /// descendant is no cycle (a parent re-exports its children; a child uses its
    /// parent's items).
    pub fn sibling_cycles(&self) -> Vec<Vec<String>> {
        let mut by_parent: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for (module, named) in &self.uses {
            for target in named {
                let common = module
                    .iter()
                    .zip(target)
                    .take_while(|(a, b)| a == b)
                    .count();
                if common == module.len() || common == target.len() {
                    continue;
                }
                by_parent
                    .entry(module[..common].to_vec())
                    .or_default()
                    .entry(module[common].clone())
                    .or_default()
                    .insert(target[common].clone());
            }
        }
        let mut cycles = Vec::new();
        for (parent, graph) in &by_parent {
            if let Some(cycle) = first_cycle(graph) {
                cycles.push(
                    cycle
                        .into_iter()
                        .map(|child| {
                            let mut path = parent.clone();
                            path.push(child);
                            path.join("::")
                        })
                        .collect(),
                );
            }
        }
        cycles
    }
}

/// A cycle of `graph`, if it has one, as the modules around it (the first repeated).
fn first_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        node: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| *m == node) {
            let mut cycle: Vec<String> = path[at..].iter().map(|m| (*m).to_owned()).collect();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if !done.insert(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

fn rust_files(src: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// `src/http/mod.rs` and `src/http.rs` are `http`; `src/http/router.rs` is
/// `http::router`; `src/lib.rs` is the root.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut path: ModPath = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if path.last().is_some_and(|last| last == "mod") || path == ["lib"] {
        path.pop();
    }
    path
}

/// The code of a file without comments (doc links name any module, and may) and
/// without its `#[cfg(test)]` module, whose `super::` is the file's own module.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut kept = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        kept.push(match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        });
    }
    kept.join("\n")
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// One `use` statement: its path (after `use `) and whether it re-exports.
struct UseStatement {
    path: String,
    public: bool,
}

fn use_statements(code: &str) -> Vec<UseStatement> {
    let mut found = Vec::new();
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let start = offset + (line.len() - trimmed.len());
        offset += line.len();
        // Formatted code starts each `use` item on a line of its own.
        let (public, rest) = if let Some(rest) = trimmed.strip_prefix("use ") {
            (false, rest)
        } else if let Some(vis) = trimmed.strip_prefix("pub") {
            let vis = match vis.strip_prefix('(') {
                Some(inner) => inner.split_once(')').map_or("", |(_, after)| after),
                None => vis,
            };
            match vis.trim_start().strip_prefix("use ") {
                Some(rest) => (true, rest),
                None => continue,
            }
        } else {
            continue;
        };
        let from = start + (trimmed.len() - rest.len());
        let end = code[from..].find(';').map_or(code.len(), |e| from + e);
        found.push(UseStatement {
            path: code[from..end].to_owned(),
            public,
        });
    }
    found
}

/// The paths anywhere in the code that start at `crate::`, `super::` or `self::`
/// (`$crate::` is a macro's, resolved where it expands).
fn anchored_paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for anchor in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(anchor) {
            let start = from + at;
            from = start + anchor.len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| is_ident_char(c) || c == '$' || c == ':') {
                continue;
            }
            found.extend(path_tree(&code[start..]));
        }
    }
    found
}

/// The leaf paths of a path tree: `a::{b::C, d}` gives `a::b::C` and `a::d`; reading
/// stops at the first character that cannot continue a path.
fn path_tree(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    read_tree(text, &[], &mut out);
    out
}

/// Reads one path tree of `text` under `prefix` into `out`; returns the bytes read.
fn read_tree(text: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let skip_space = |i: usize| i + (text[i..].len() - text[i..].trim_start().len());
    let mut path = prefix.to_vec();
    let mut i = skip_space(0);
    loop {
        if text[i..].starts_with('{') {
            i += 1;
            loop {
                i = skip_space(i);
                if text[i..].starts_with('}') {
                    return i + 1;
                }
                i += read_tree(&text[i..], &path, out);
                i = skip_space(i);
                if text[i..].starts_with(',') {
                    i += 1;
                } else {
                    return if text[i..].starts_with('}') { i + 1 } else { i };
                }
            }
        }
        let end = text[i..]
            .find(|c: char| !is_ident_char(c))
            .map_or(text.len(), |e| i + e);
        if end == i {
            break;
        }
        path.push(text[i..end].to_owned());
        i = end;
        if text[i..].starts_with("::") {
            i += 2;
        } else {
            break;
        }
    }
    if path.len() > prefix.len() {
        out.push(path);
    }
    i
}

/// The module a path names, from `module`: the deepest module along it, or where a
/// re-export on the way leads. `relative` paths (a `use` item's) may also start at a
/// child module of `module`. `None` for paths outside the crate.
fn resolve(
    module: &ModPath,
    path: &[String],
    known: &BTreeSet<ModPath>,
    exports: &BTreeMap<(ModPath, String), ModPath>,
    relative: bool,
) -> Option<ModPath> {
    let (mut at, rest): (ModPath, &[String]) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super") => (
            module[..module.len().saturating_sub(1)].to_vec(),
            &path[1..],
        ),
        Some("self") => (module.clone(), &path[1..]),
        Some(first) if relative => {
            let mut child = module.clone();
            child.push(first.to_owned());
            if !known.contains(&child) {
                return None;
            }
            (module.clone(), path)
        }
        _ => return None,
    };
    for segment in rest {
        if segment == "super" {
            at.pop();
            continue;
        }
        let mut child = at.clone();
        child.push(segment.clone());
        if known.contains(&child) {
            at = child;
        } else if let Some(target) = exports.get(&(at.clone(), segment.clone())) {
            return Some(target.clone());
        } else {
            break;
        }
    }
    Some(at)
}

#[cfg(test)]
mod reader {
    use super::*;

    #[test]
    fn paths_are_read_with_their_groups() {
        let trees = path_tree("crate::{a::X, b::{c, D}}; rest");
        assert_eq!(
            trees,
            [
                vec!["crate", "a", "X"],
                vec!["crate", "b", "c"],
                vec!["crate", "b", "D"]
            ]
        );
    }
}

//! toolwright-core's modules form three layers, and imports only point down (or sideways,
//! without a cycle): the tool model, then the execution of calls, then the agent loop.
//! This test reads every top-level module's `crate::` paths and fails on an import that
//! points up, on a cycle, and on a module missing from the table, so a new module
//! declares its layer here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every top-level module and its layer: 1 the model, 2 execution, 3 the agent loop.
const LAYERS: &[(&str, u8)] = &[
    ("__private", 1),
    ("args", 1),
    ("compose", 1),
    ("config", 1),
    ("content", 1),
    ("context", 1),
    ("dialect", 1),
    ("error", 1),
    ("extract", 1),
    ("llm_error", 1),
    ("locate", 1),
    ("message", 1),
    ("outcome", 1),
    ("principal", 1),
    ("registry", 1),
    ("retry", 1),
    ("schema", 1),
    ("set", 1),
    ("tool", 1),
    ("truncate", 1),
    ("typed", 1),
    ("usage", 1),
    ("control", 2),
    ("events", 2),
    ("executor", 2),
    ("inflight", 2),
    ("pipeline", 2),
    ("agent", 3),
    ("checkpoint", 3),
    ("llm", 3),
    ("review", 3),
    ("run", 3),
    ("seal", 3),
    ("store", 3),
    ("stream", 3),
    ("testing", 3),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The code of a file without its comments (doc links name any layer, and may).
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every file of top-level module `name`: `name.rs`, or everything under `name/`.
fn files(name: &str) -> Vec<PathBuf> {
    let single = src().join(format!("{name}.rs"));
    if single.exists() {
        return vec![single];
    }
    let mut found = Vec::new();
    let mut dirs = vec![src().join(name)];
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

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The first segment of each path a `crate::` reaches: `crate::set::ToolSet` gives
/// `set`, `crate::{a::X, B}` gives `a` and `B`.
fn crate_paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        // `$crate::` is the macros' path, resolved where they expand.
        let is_dollar = rest[..at].ends_with('$');
        rest = &rest[at + "crate::".len()..];
        if is_dollar {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if item_start && depth == 1 && !c.is_whitespace() => {
                        found.push(ident(&group[i..]).to_owned());
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.push(ident(rest).to_owned());
        }
    }
    found
}

/// What the crate root re-exports, by name: `pub use set::{ToolDefinition, ToolSet}`
/// maps both names to `set`.
fn root_exports() -> BTreeMap<String, String> {
    let lib = code(&src().join("lib.rs"));
    let mut exports = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let path = statement[at + "pub use ".len()..].trim();
        let module = ident(path);
        let Some(names) = path.strip_prefix(module).and_then(|p| p.strip_prefix("::")) else {
            continue;
        };
        let names = names.trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim();
            let last = name.rsplit("::").next().unwrap_or(name);
            if !last.is_empty() {
                exports.insert(ident(last).to_owned(), module.to_owned());
            }
        }
    }
    exports
}

/// The modules lib.rs declares.
fn declared() -> BTreeSet<String> {
    code(&src().join("lib.rs"))
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("mod "))?;
            rest.strip_suffix(';').map(str::to_owned)
        })
        .collect()
}

/// Each module's imports of other modules.
fn imports() -> BTreeMap<&'static str, BTreeSet<String>> {
    let exports = root_exports();
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    LAYERS
        .iter()
        .map(|&(module, _)| {
            let mut used = BTreeSet::new();
            for file in files(module) {
                for first in crate_paths(&code(&file)) {
                    let target = if layer.contains_key(first.as_str()) {
                        first
                    } else {
                        match exports.get(&first) {
                            Some(target) => target.clone(),
                            // A macro or item of the root itself.
                            None => continue,
                        }
                    };
                    if target != module {
                        used.insert(target);
                    }
                }
            }
            (module, used)
        })
        .collect()
}

#[test]
fn every_module_has_a_layer() {
    let table: BTreeSet<String> = LAYERS.iter().map(|(m, _)| (*m).to_owned()).collect();
    let declared = declared();
    let missing: Vec<_> = declared.difference(&table).collect();
    let stale: Vec<_> = table.difference(&declared).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "modules without a layer: {missing:?}; layers of modules that are gone: {stale:?} \
         (see LAYERS in {})",
        file!()
    );
}

#[test]
fn imports_never_point_up() {
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut upward = Vec::new();
    for (module, used) in imports() {
        for target in used {
            if layer[target.as_str()] > layer[module] {
                upward.push(format!(
                    "{module} (layer {}) imports {target} (layer {})",
                    layer[module],
                    layer[target.as_str()]
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that point up a layer: {upward:#?}; a lower module that must reach up \
         holds a trait object defined in its own layer"
    );
}

#[test]
fn modules_form_no_cycle() {
    let graph = imports();
    // Depth-first search, remembering the path, so a cycle is reported as one.
    fn visit<'a>(
        module: &'a str,
        graph: &'a BTreeMap<&'static str, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| *m == module) {
            let mut cycle: Vec<String> = path[at..].iter().map(|m| (*m).to_owned()).collect();
            cycle.push(module.to_owned());
            return Some(cycle);
        }
        if !done.insert(module) {
            return None;
        }
        path.push(module);
        for next in graph.get(module).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(cycle) = visit(module, &graph, &mut Vec::new(), &mut done) {
            panic!("modules import each other: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_path_reader_sees_grouped_and_root_imports() {
    let paths = crate_paths("use crate::{set::ToolSet, Tool};\nlet x = crate::tool::X; $crate::no");
    assert_eq!(paths, ["set", "Tool", "tool"]);
    assert_eq!(
        root_exports().get("ToolSet").map(String::as_str),
        Some("set")
    );
}

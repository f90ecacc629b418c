//! The crate root stays small: what a first program needs, the modules by concept, and
//! `prelude`. A name added to the root must push another out (or belong in a module).

use std::collections::BTreeSet;

/// At most this many names at the root, `prelude` aside.
const MAX_ROOT_NAMES: usize = 40;

/// The names `lib.rs` makes public at the crate root: `pub use` (each name, or the
/// `as` rename), `pub mod`, and `#[macro_export]` macros. Items nested in the root's
/// inline modules are indented, so only lines at column 0 count.
fn root_names() -> BTreeSet<String> {
    let lib = include_str!("../src/lib.rs");
    let mut names = BTreeSet::new();
    let mut statement: Option<String> = None;
    let mut macro_export = false;
    for line in lib.lines() {
        if let Some(text) = statement.as_mut() {
            text.push_str(line);
        } else if line.starts_with("pub use ") {
            statement = Some(line.to_owned());
        } else if let Some(rest) = line.strip_prefix("pub mod ") {
            names.insert(rest.trim_end_matches([';', ' ', '{']).to_owned());
        } else if line == "#[macro_export]" {
            macro_export = true;
        } else if let Some(rest) = line.strip_prefix("macro_rules! ")
            && macro_export
        {
            names.insert(rest.trim_end_matches([' ', '{']).to_owned());
            macro_export = false;
        }
        if statement.as_ref().is_some_and(|s| s.ends_with(';')) {
            let text = statement.take().unwrap_or_default();
            let path = text.trim_start_matches("pub use ").trim_end_matches(';');
            let leaves = match path.split_once('{') {
                Some((_, group)) => group.trim_end_matches('}').to_owned(),
                None => path.to_owned(),
            };
            for leaf in leaves.split(',').map(str::trim).filter(|l| !l.is_empty()) {
                let name = match leaf.split_once(" as ") {
                    Some((_, alias)) => alias,
                    None => leaf.rsplit("::").next().unwrap_or(leaf),
                };
                names.insert(name.trim().to_owned());
            }
        }
    }
    names
}

#[test]
fn the_root_exports_at_most_forty_names_plus_prelude() {
    let names = root_names();
    assert!(names.contains("prelude"), "no prelude: {names:?}");
    // What the count rests on: the reader sees the root's names, machinery left it.
    for expected in [
        "Tool", "ToolSet", "Agent", "tool", "tools", "toolbox", "exec", "run",
    ] {
        assert!(
            names.contains(expected),
            "`{expected}` not seen at the root: {names:?}"
        );
    }
    for machinery in ["ToolLimits", "CallPermit", "ScopedFuture", "normalize_root"] {
        assert!(
            !names.contains(machinery),
            "`{machinery}` is at the root: {names:?}"
        );
    }
    let counted = names.len() - 1;
    assert!(
        counted <= MAX_ROOT_NAMES,
        "{counted} names at the crate root (at most {MAX_ROOT_NAMES} besides `prelude`): {names:?}"
    );
}

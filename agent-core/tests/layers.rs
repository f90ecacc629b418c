//! toolwright-core's modules form three layers, and imports only point down (or sideways,
//! without a cycle): the tool model, then the execution of calls, then the agent loop.
//! This test reads every module's paths (`support/module_graph.rs`) and fails on an
//! import that points up, on modules of one parent that import each other in a cycle
//! (top-level modules, or two files of one folder), and on a top-level module missing
//! from the table, so a new module declares its layer here.

#[path = "support/module_graph.rs"]
mod module_graph;

use module_graph::ModuleGraph;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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
    ("pending", 1),
    ("principal", 1),
    ("registry", 1),
    ("retry", 1),
    ("schema", 1),
    ("search", 1),
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

fn graph() -> ModuleGraph {
    ModuleGraph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn every_module_has_a_layer() {
    let table: BTreeSet<String> = LAYERS.iter().map(|(m, _)| (*m).to_owned()).collect();
    let declared = graph().top_level();
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
    for (module, used) in graph().top_level_imports() {
        for target in used {
            if layer[target.as_str()] > layer[module.as_str()] {
                upward.push(format!(
                    "{module} (layer {}) imports {target} (layer {})",
                    layer[module.as_str()],
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
fn modules_of_one_parent_form_no_cycle() {
    let cycles = graph().sibling_cycles();
    assert!(
        cycles.is_empty(),
        "modules import each other: {:#?}",
        cycles
            .iter()
            .map(|cycle| cycle.join(" -> "))
            .collect::<Vec<_>>()
    );
}

#[test]
fn the_graph_sees_grouped_relative_and_reexported_imports() {
    let graph = graph();
    let imports = graph.top_level_imports();
    // `use crate::{...}` groups and the root's re-exports (`crate::ToolSet` is `set`'s).
    assert!(imports["executor"].contains("pipeline"), "{imports:#?}");
    assert!(imports["agent"].contains("set"), "{imports:#?}");
    assert!(!imports["set"].contains("agent"), "{imports:#?}");
}

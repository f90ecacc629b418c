//! toolwright-core's modules form three layers, and imports only point down (or sideways,
//! without a cycle): the tool model, then the execution of calls, then the agent loop.
//! The layers are the folders of `src/`: `model`, `execution`, `agent_loop`. This test
//! reads every module's paths (`support/module_graph.rs`) and fails on an import that
//! points up, on modules of one parent that import each other in a cycle
//! (top-level modules, or two files of one folder), and on a top-level module missing
//! from the table, so a new module declares its layer here.

#[path = "support/module_graph.rs"]
mod module_graph;

use module_graph::ModuleGraph;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every top-level module and its layer: 1 the model, 2 execution, 3 the agent loop.
/// The layers are the folders of `src/`; `__private` (what the macros expand to) sits on
/// the model.
const LAYERS: &[(&str, u8)] = &[
    ("__private", 1),
    ("model", 1),
    ("execution", 2),
    ("agent_loop", 3),
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
    assert!(imports["agent_loop"].contains("execution"), "{imports:#?}");
    assert!(!imports["model"].contains("agent_loop"), "{imports:#?}");
    // `use crate::{...}` groups and the root's re-exports (`crate::ToolSet` is
    // `model::set`'s), one folder down.
    let execution = graph.child_imports(&["execution"]);
    assert!(execution["executor"].contains("pipeline"), "{execution:#?}");
    let model = graph.child_imports(&["model"]);
    assert!(model["set"].contains("tool"), "{model:#?}");
    assert!(!model["tool"].contains("set"), "{model:#?}");
}

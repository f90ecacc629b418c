//! toolwright-mcp in two layers the source tree shows: the protocol (`server/`, with the
//! MCP <-> core conversions and the crate's HTTP client settings beside it), and the
//! transports on top (`http/`, `stdio/`, `client/`). Transports import the protocol
//! layer, never the reverse; where the protocol must reach a transport (the HTTP session
//! table hearing that a session initialized), it holds a trait object it defines. No
//! modules of one parent import each other in a cycle, at any depth.

#[path = "../../agent-core/tests/support/module_graph.rs"]
mod module_graph;

use module_graph::ModuleGraph;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every top-level module and its layer: 1 the protocol, 2 the transports.
const LAYERS: &[(&str, u8)] = &[
    ("convert", 1),
    ("server", 1),
    ("tls", 1),
    // What `#[resource]` and `#[prompt]` expand to: glue over the protocol's traits.
    ("__private", 1),
    ("client", 2),
    ("http", 2),
    ("stdio", 2),
];

fn graph() -> ModuleGraph {
    ModuleGraph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn every_module_has_a_layer() {
    let table: BTreeSet<String> = LAYERS.iter().map(|(m, _)| (*m).to_owned()).collect();
    let declared = graph().top_level();
    assert_eq!(
        declared,
        table,
        "the modules of src/ and the LAYERS table of {} differ",
        file!()
    );
}

#[test]
fn the_protocol_never_imports_a_transport() {
    let layer: BTreeMap<&str, u8> = LAYERS.iter().copied().collect();
    let imports = graph().top_level_imports();
    let upward: Vec<String> = imports
        .iter()
        .flat_map(|(module, used)| used.iter().map(move |target| (module, target)))
        .filter(|(module, target)| layer[target.as_str()] > layer[module.as_str()])
        .map(|(module, target)| format!("{module} imports {target}"))
        .collect();
    assert!(
        upward.is_empty(),
        "the protocol layer imports a transport: {upward:#?}"
    );
    // The transports do stand on the protocol layer: the graph sees their imports.
    assert!(imports["http"].contains("server"), "{imports:#?}");
    assert!(imports["stdio"].contains("server"), "{imports:#?}");
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

//! The link-time registry across crates: this test binary registers tools of its own,
//! and sees them beside those of `agent_registry_fixture`.

use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use toolwright_core::{
    AgentError, Tool, ToolContext, ToolSet, tool, toolbox, toolset::RegisteredTool,
};

/// Add two numbers.
#[tool(register, tags = ["math"])]
async fn local_add(a: i64, b: i64) -> i64 {
    a + b
}

/// Not registered.
#[tool]
async fn local_unregistered() -> String {
    String::new()
}

/// How many `Counter`s were made.
static COUNTERS_MADE: AtomicUsize = AtomicUsize::new(0);

struct Counter {
    start: i64,
}

impl Default for Counter {
    fn default() -> Self {
        COUNTERS_MADE.fetch_add(1, Ordering::SeqCst);
        Self { start: 0 }
    }
}

#[toolbox(register)]
impl Counter {
    /// The counter's start plus one.
    #[tool(tags = ["math"])]
    async fn local_next(&self) -> i64 {
        self.start + 1
    }
}

mod clash_a {
    /// A tool whose name another module also registers.
    #[toolwright_core::tool(register, name = "local_clash", tags = ["clash"])]
    pub async fn clash() -> String {
        "a".to_owned()
    }
}

mod clash_b {
    /// The other tool with that name.
    #[toolwright_core::tool(register, name = "local_clash", tags = ["clash"])]
    pub async fn clash() -> String {
        "b".to_owned()
    }
}

fn names(set: &ToolSet) -> Vec<&str> {
    set.iter().map(|tool| tool.name()).collect()
}

fn without_clash() -> Result<ToolSet, AgentError> {
    ToolSet::registered_where(|entry| !entry.has_tag("clash"))
}

#[tokio::test]
async fn the_set_holds_the_registered_tools_of_both_crates_and_no_others() {
    let fixture = agent_registry_fixture::registered_names();
    let set = without_clash().unwrap();
    let mut expected = vec!["local_add", "local_next"];
    expected.extend(fixture);
    expected.sort_unstable();
    assert_eq!(names(&set), expected);
    // A tool without `register` is a tool, but not in the registry.
    assert_eq!(local_unregistered {}.name(), "local_unregistered");
    assert!(set.get("local_unregistered").is_none());
    assert!(set.get("fixture_unregistered").is_none());

    let ctx = ToolContext::default();
    let out = set
        .call("local_add", &json!({"a": 2, "b": 3}), &ctx)
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("5"));
    let out = set
        .call("fixture_greet", &json!({"who": "Ada"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out[0].as_text(), Some("Hello, Ada!"));
    let out = set.call("local_next", &json!({}), &ctx).await.unwrap();
    assert_eq!(out[0].as_text(), Some("1"));
}

#[test]
fn two_registered_tools_with_one_name_are_an_error_naming_both_places() {
    let Err(error) = ToolSet::registered() else {
        panic!("the clash must be refused")
    };
    let message = error.to_string();
    assert!(message.contains("local_clash"), "{message}");
    assert!(message.contains("registry::clash_a"), "{message}");
    assert!(message.contains("registry::clash_b"), "{message}");
    assert!(message.contains("tests/registry.rs:"), "{message}");

    let Err(clash) = ToolSet::registered_with_tag("clash") else {
        panic!("the clash must be refused")
    };
    assert_eq!(clash.to_string(), message);
    // Taking one of them is fine.
    let one = ToolSet::registered_where(|e| e.is_in_module("registry::clash_b")).unwrap();
    assert_eq!(names(&one), ["local_clash"]);
}

#[test]
fn filters_take_part_of_the_registry_by_tag_and_by_module() {
    let math = ToolSet::registered_with_tag("math").unwrap();
    assert_eq!(names(&math), ["local_add", "local_next"]);
    let read = ToolSet::registered_with_tag("read").unwrap();
    assert_eq!(names(&read), ["fixture_count", "fixture_echo"]);
    // A toolbox's tags are every one of its tools'.
    let people = ToolSet::registered_with_tag("people").unwrap();
    assert_eq!(names(&people), ["fixture_greet"]);

    let billing = ToolSet::registered_in_module("agent_registry_fixture::billing").unwrap();
    assert_eq!(names(&billing), ["fixture_echo"]);
    let fixture = ToolSet::registered_in_module("agent_registry_fixture").unwrap();
    assert_eq!(names(&fixture).len(), 3);
    // A module prefix matches whole segments only.
    let none = ToolSet::registered_in_module("agent_registry_fix").unwrap();
    assert!(none.is_empty());
}

#[test]
fn an_entry_says_where_its_tool_was_registered() {
    let add = RegisteredTool::all()
        .find(|e| e.name() == "local_add")
        .expect("registered");
    assert_eq!(add.module_path(), "registry");
    assert!(add.file().ends_with("tests/registry.rs"), "{}", add.file());
    // The line of the `register` key, found in this file's own text.
    let line = include_str!("registry.rs")
        .lines()
        .position(|l| l.starts_with("#[tool(register, tags = [\"math\"])]"))
        .expect("the attribute of local_add")
        + 1;
    assert_eq!(add.line() as usize, line);
    assert_eq!(add.tags(), ["math"]);
    assert_eq!(add.tool().name(), "local_add");
    assert_eq!(add.to_string(), format!("{}:{line} (registry)", add.file()));
}

#[tokio::test]
async fn a_registered_toolbox_makes_its_value_once_for_every_set() {
    let ctx = ToolContext::default();
    for _ in 0..3 {
        let set = ToolSet::registered_with_tag("math").unwrap();
        let out = set.call("local_next", &json!({}), &ctx).await.unwrap();
        assert_eq!(out[0].as_text(), Some("1"));
    }
    assert_eq!(COUNTERS_MADE.load(Ordering::SeqCst), 1);
}

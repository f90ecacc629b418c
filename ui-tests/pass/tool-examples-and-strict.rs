//! `example(...)` with every form of JSON value, on a free fn and a toolbox method, and
//! `strict` / `strict = false`.
use serde_json::json;
use toolwright_core::{Tool, tool, toolbox};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Window {
    from: i32,
    to: i32,
}

/// Every kind of value.
#[tool(
    strict,
    example(
        r#type = "point",
        offset = -3,
        scale = 2.5,
        small = -0.125,
        big = 1_000,
        on = true,
        note = null,
        tags = ["a", "b\"c", ],
        window = {"from": -1, to: 2},
        label = "tab\there",
    ),
    example(r#type = "line", offset = 0, scale = 1e3, on = false, window = {"from": 0, "to": 0}),
)]
async fn shapes(
    r#type: String,
    offset: i64,
    scale: f64,
    #[arg(default)] small: f64,
    #[arg(default)] big: u32,
    on: bool,
    note: Option<String>,
    #[arg(default)] tags: Vec<String>,
    window: Window,
    #[arg(rename = "display-label", default)] label: String,
) -> String {
    let _ = (offset, scale, small, big, on, note, tags, window.from, window.to, label);
    r#type
}

/// Not strict, whatever the client says.
#[tool(strict = false)]
async fn loose(text: String) -> String {
    text
}

/// Says nothing.
#[tool(example())]
async fn nothing() {}

struct Notes;

#[toolbox]
impl Notes {
    /// Find notes.
    #[tool(example(query = "rust"), strict = true)]
    async fn find(&self, query: String, limit: Option<u32>) -> String {
        format!("{query} {limit:?}")
    }
}

fn main() {
    assert_eq!(
        shapes {}.input_examples(),
        [
            json!({
                "type": "point", "offset": -3, "scale": 2.5, "small": -0.125, "big": 1000,
                "on": true, "note": null, "tags": ["a", "b\"c"],
                "window": {"from": -1, "to": 2}, "display-label": "tab\there"
            }),
            json!({"type": "line", "offset": 0, "scale": 1000.0, "on": false, "window": {"from": 0, "to": 0}}),
        ]
    );
    assert_eq!(shapes {}.strict(), Some(true));
    assert_eq!(loose {}.strict(), Some(false));
    assert!(loose {}.input_examples().is_empty());
    assert_eq!(nothing {}.input_examples(), [json!({})]);
    assert_eq!(nothing {}.strict(), None);
    let set = std::sync::Arc::new(Notes).into_toolset();
    let find = set.get("find").unwrap();
    assert_eq!(find.input_examples(), [json!({"query": "rust"})]);
    assert_eq!(find.strict(), Some(true));
    toolwright_core::dialect::assert_dialects(&toolwright_core::tools![shapes, loose, nothing]);
}

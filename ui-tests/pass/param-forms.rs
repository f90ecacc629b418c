//! Every parameter form.
use toolwright_core::{Progress, State, ToolContext, tool};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Clone)]
struct Db;

/// A type whose name is a common generic parameter's.
#[derive(Deserialize, JsonSchema)]
struct D {
    value: u8,
}

/// Every form.
///
/// # Arguments
///
/// * `from_section` - Described in the section.
#[tool]
async fn forms(
    /// Doc comment.
    documented: String,
    #[arg(description = "Attribute.")] described: String,
    #[arg(rename = "type")] kind: String,
    #[arg(default)] count: u32,
    #[arg(default = 7)] days: u8,
    #[arg(default = String::from("x"), description = "Both.")] label: String,
    unit: Option<Unit>,
    point: Point,
    nested: Vec<Option<Point>>,
    from_section: bool,
    mut counter: i64,
    r#match: String,
    ctx: &ToolContext,
    db: State<Db>,
    progress: Progress,
    _ignored: Option<u8>,
    d: D,
) -> String {
    let _ = d.value;
    counter += 1;
    let _ = (documented, described, kind, count, days, label, unit, point.x, point.y, nested);
    let _ = (from_section, counter, r#match, ctx, db.0, progress);
    String::new()
}

/// No parameters.
#[tool]
async fn nothing() {}

/// Only injected.
#[tool]
async fn injected(ctx: &toolwright_core::ToolContext, _db: toolwright_core::State<Db>) -> String {
    ctx.session_id().to_owned()
}

fn main() {
    let _ = (forms {}, nothing {}, injected {});
}

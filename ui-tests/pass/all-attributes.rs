//! Every `#[tool]` key at once, and each alone.
use toolwright_core::{Content, Tool, tool, tool::ActivationContext};

async fn in_workspace(ctx: &ActivationContext) -> bool {
    !ctx.workspace.as_os_str().is_empty()
}

fn big_amount(args: &serde_json::Value) -> bool {
    args["amount"].as_u64().unwrap_or(0) > 100
}

fn not_empty(output: &[Content]) -> Result<(), String> {
    if output.is_empty() { Err("empty".into()) } else { Ok(()) }
}

fn small_progress(value: &serde_json::Value) -> Result<(), String> {
    if value.to_string().len() < 100 { Ok(()) } else { Err("too big".into()) }
}

/// Everything.
#[tool(
    name = "every_key",
    description = "Uses every key.",
    title = "Every key",
    timeout = "2m",
    exposure = "deferred",
    activate_when = in_workspace,
    origin = "ui-tests",
    version = "9.9.9",
    requirements = ["network", "filesystem"],
    require_approval = big_amount,
    on_error = "fail_run",
    read_only,
    destructive,
    idempotent,
    open_world,
    max_in_flight = 2,
    exclusive = "db",
    sequential,
    validate_output = not_empty,
    validate_progress = small_progress,
    crate = ::toolwright_core,
)]
async fn everything(amount: u64) -> String {
    amount.to_string()
}

/// Timeout in milliseconds.
#[tool(timeout_ms = 1500)]
async fn ms() {}

/// Timeout in seconds.
#[tool(timeout = "30s")]
async fn secs() {}

/// Timeout in milliseconds, as text.
#[tool(timeout = "500ms")]
async fn half() {}

/// Timeout of an hour.
#[tool(timeout = "1h")]
async fn hour() {}

/// Hidden.
#[tool(exposure = "hidden")]
async fn hidden() {}

/// Direct.
#[tool(exposure = "direct", on_error = "return_to_model")]
async fn direct() {}

/// Always asks.
#[tool(require_approval)]
async fn asks() {}

fn main() {
    assert_eq!(everything {}.name(), "every_key");
    assert_eq!(ms {}.timeout_ms(), Some(1500));
    assert_eq!(secs {}.timeout_ms(), Some(30_000));
    assert_eq!(half {}.timeout_ms(), Some(500));
    assert_eq!(hour {}.timeout_ms(), Some(3_600_000));
    let _ = (hidden {}, direct {}, asks {});
}

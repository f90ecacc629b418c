//! `task`, `task = "optional"`, `task = "required"` and `task = "on_demand"`, on a fn
//! and on a toolbox method.
use toolwright_core::{Tool, tool, tool::TaskSupport, toolbox};

/// Runs as a task when the caller supports tasks.
#[tool(task)]
async fn report() -> String {
    "done".into()
}

/// The same, said in full.
#[tool(task = "optional")]
async fn spelled_out() {}

/// Runs only as a task.
#[tool(task = "required", timeout = "1h")]
async fn export() {}

/// Asks first, then runs as a task from where it says so.
#[tool(task = "on_demand")]
async fn archive() {}

/// An ordinary tool.
#[tool]
async fn quick() {}

struct Jobs;

#[toolbox]
impl Jobs {
    /// Reindexes, as a task.
    #[tool(task = "required")]
    async fn reindex(&self) {}
}

fn main() {
    assert_eq!(report {}.task_support(), TaskSupport::Optional);
    assert_eq!(spelled_out {}.task_support(), TaskSupport::Optional);
    assert_eq!(export {}.task_support(), TaskSupport::Required);
    assert_eq!(archive {}.task_support(), TaskSupport::OnDemand);
    assert_eq!(quick {}.task_support(), TaskSupport::Forbidden);
    let tools = std::sync::Arc::new(Jobs).into_toolset();
    assert_eq!(
        tools.get("reindex").map(|tool| tool.task_support()),
        Some(TaskSupport::Required)
    );
}

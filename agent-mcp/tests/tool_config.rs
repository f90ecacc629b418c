//! The server runs calls under its `ToolConfig` as the executor does: failed calls of
//! read-only tools are retried, each attempt with its own timeout and token, and no more
//! calls than `max_concurrency` run at once.

#[path = "support/events.rs"]
mod events;

use events::{Counter, Flag, PolledCalls, within};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Semaphore;
use toolwright_core::{
    AgentResult, Content, Tool, ToolContext, ToolError, ToolSet, async_trait,
    tool::{ToolAnnotations, ToolConcurrency},
    toolset::ToolConfig,
};
use toolwright_mcp::{McpServer, ServerOptions};

/// Fails its first `failures` runs (the first by panicking), then answers; counts its
/// runs.
struct Flaky {
    name: &'static str,
    read_only: bool,
    failures: usize,
    runs: Arc<AtomicUsize>,
}

#[async_trait]
impl Tool for Flaky {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        "Fails, then works."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(self.read_only),
            ..ToolAnnotations::default()
        }
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        if run <= self.failures {
            // Its first run panics, later ones fail: a panic is a failure like another.
            assert!(run > 1, "run 1 panicked");
            return Err(ToolError::execution(format!("run {run} failed")).into());
        }
        Ok(vec![Content::text(format!("worked on run {run}"))])
    }
}

/// Its first run never finishes, so its 100 ms timeout ends it, leaving work behind that
/// waits for the run's cancellation; later runs answer at once, saying whether their
/// token was already cancelled.
struct StallsOnce {
    runs: Arc<AtomicUsize>,
    first_run_told_to_stop: Flag,
}

#[async_trait]
impl Tool for StallsOnce {
    fn name(&self) -> &'static str {
        "stalls_once"
    }

    fn description(&self) -> &'static str {
        "Stalls once."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(true),
            ..ToolAnnotations::default()
        }
    }

    fn timeout_ms(&self) -> Option<u64> {
        Some(100)
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        if self.runs.fetch_add(1, Ordering::SeqCst) == 0 {
            let (ctx, told) = (ctx.clone(), self.first_run_told_to_stop.clone());
            tokio::spawn(async move {
                ctx.cancellation().cancelled().await;
                told.set();
            });
            std::future::pending::<()>().await;
        }
        Ok(vec![Content::text(format!(
            "cancelled: {}",
            ctx.is_cancelled()
        ))])
    }
}

/// Runs until the test lets it finish; counts the calls that entered it, and the most it
/// saw in flight at once.
struct Busy {
    entered: Counter,
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    finish: Arc<Semaphore>,
}

#[async_trait]
impl Tool for Busy {
    fn name(&self) -> &'static str {
        "busy"
    }

    fn description(&self) -> &'static str {
        "Takes a while."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.entered.add();
        self.finish.acquire().await.unwrap().forget();
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        Ok(vec![Content::text("done")])
    }
}

/// Runs until the test lets it finish, under concurrency rules of its own.
struct Limited {
    name: &'static str,
    concurrency: ToolConcurrency,
    finish: Arc<Semaphore>,
}

#[async_trait]
impl Tool for Limited {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        "Has limits of its own."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    fn concurrency(&self) -> ToolConcurrency {
        self.concurrency.clone()
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        self.finish.acquire().await.unwrap().forget();
        Ok(vec![Content::text("done")])
    }
}

/// Fails with a long message, as a command's stderr can be.
struct Noisy;

#[async_trait]
impl Tool for Noisy {
    fn name(&self) -> &'static str {
        "noisy"
    }

    fn description(&self) -> &'static str {
        "Fails loudly."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(&self, _args: &Value, _ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        Err(ToolError::execution(format!("stderr: {}", "é".repeat(10_000))).into())
    }
}

async fn connect(tools: ToolSet, config: ToolConfig) -> RunningService<RoleClient, ()> {
    let mut options = ServerOptions::default();
    options.tool_config = config;
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = McpServer::with_options(tools, options)
            .serve(server_end)
            .await
            .unwrap();
        let _ = running.waiting().await;
    });
    ().serve(client_end).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, ()>, name: &'static str) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(name))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn failed_calls_of_read_only_tools_are_retried_others_are_not() {
    let runs: Vec<Arc<AtomicUsize>> = (0..3).map(|_| Arc::default()).collect();
    let flaky = |name, read_only, failures, runs: &Arc<AtomicUsize>| Flaky {
        name,
        read_only,
        failures,
        runs: runs.clone(),
    };
    let mut tools = ToolSet::new();
    tools
        .register_tool(flaky("reads", true, 2, &runs[0]))
        .unwrap()
        .register_tool(flaky("writes", false, 1, &runs[1]))
        .unwrap()
        .register_tool(flaky("always_fails", true, usize::MAX, &runs[2]))
        .unwrap();
    let client = connect(tools, ToolConfig::default().with_max_retries(2)).await;

    let reads = call(&client, "reads").await;
    assert_eq!(reads.is_error, Some(false));
    assert_eq!(text(&reads), "worked on run 3");

    let writes = call(&client, "writes").await;
    assert_eq!(writes.is_error, Some(true));
    assert_eq!(runs[1].load(Ordering::SeqCst), 1, "a write was retried");

    let fails = call(&client, "always_fails").await;
    assert_eq!(fails.is_error, Some(true));
    assert!(text(&fails).contains("run 3 failed"), "{}", text(&fails));
    assert_eq!(runs[2].load(Ordering::SeqCst), 3);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_timed_out_attempt_is_told_to_stop_and_the_next_has_its_own_time_and_token() {
    let (runs, told) = (Arc::new(AtomicUsize::new(0)), Flag::default());
    let mut tools = ToolSet::new();
    tools
        .register_tool(StallsOnce {
            runs: runs.clone(),
            first_run_told_to_stop: told.clone(),
        })
        .unwrap();
    let client = connect(tools, ToolConfig::default().with_max_retries(1)).await;

    let result = call(&client, "stalls_once").await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text(&result), "cancelled: false");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    told.wait("the first attempt's work was told to stop").await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn no_more_calls_than_max_concurrency_run_at_once() {
    // Everything runs on this test's thread, where this subscriber sees the pipeline's
    // `tool_call` spans.
    let polled = PolledCalls::default();
    let _traced = polled.install();
    let (entered, most) = (Counter::default(), Arc::new(AtomicUsize::new(0)));
    let finish = Arc::new(Semaphore::new(0));
    let mut tools = ToolSet::new();
    tools
        .register_tool(Busy {
            entered: entered.clone(),
            in_flight: Arc::default(),
            most: most.clone(),
            finish: finish.clone(),
        })
        .unwrap();
    let client = connect(tools, ToolConfig::default().with_max_concurrency(2)).await;

    let calls = futures::future::join_all((0..6).map(|_| call(&client, "busy")));
    let referee = async {
        // Every call is at its permits or past them: without the limit, all six would
        // be in the tool now, none of them being let finish.
        polled.reach("busy", 6).await;
        assert_eq!(
            entered.get(),
            2,
            "not the two calls max_concurrency = 2 lets run at once"
        );
        finish.add_permits(6);
    };
    let (results, ()) = tokio::join!(calls, referee);
    assert!(
        results.iter().all(|r| r.is_error == Some(false)),
        "{results:?}"
    );
    assert_eq!(entered.get(), 6, "every call ran");
    assert_eq!(
        most.load(Ordering::SeqCst),
        2,
        "more calls than max_concurrency ran at once"
    );
    client.cancel().await.unwrap();
}

/// `calls` calls of a tool of `concurrency` on a server whose limit is `max`, all
/// answered. Each waits in the tool until every call has reached its permits, so the
/// calls contend for them.
async fn all_answered(name: &'static str, concurrency: ToolConcurrency, max: usize, calls: usize) {
    let polled = PolledCalls::default();
    let _traced = polled.install();
    let finish = Arc::new(Semaphore::new(0));
    let mut tools = ToolSet::new();
    tools
        .register_tool(Limited {
            name,
            concurrency,
            finish: finish.clone(),
        })
        .unwrap();
    let client = connect(tools, ToolConfig::default().with_max_concurrency(max)).await;
    let answered = futures::future::join_all((0..calls).map(|_| call(&client, name)));
    let referee = async {
        polled.reach(name, calls).await;
        finish.add_permits(calls);
    };
    let what = format!("{calls} calls of `{name}` under a server limit of {max} got their permits");
    let (results, ()) = within(&what, async { tokio::join!(answered, referee) }).await;
    assert!(results.iter().all(|r| text(r) == "done"), "{results:?}");
    client.cancel().await.unwrap();
}

// A tool's own limits are taken before the server's, and the server's only once: a call
// holding a server permit while it waits for its tool's could wait on itself.
#[tokio::test]
async fn a_lone_call_of_a_limited_tool_runs_under_a_server_limit_of_one() {
    let concurrency = ToolConcurrency {
        max_in_flight: Some(1),
        ..ToolConcurrency::default()
    };
    all_answered("one_at_a_time", concurrency, 1, 1).await;
}

// And calls of one exclusive group, more of them than the server's limit, all run.
#[tokio::test]
async fn concurrent_calls_of_an_exclusive_group_run_under_a_small_server_limit() {
    let concurrency = ToolConcurrency {
        exclusive_group: Some("index".to_owned()),
        ..ToolConcurrency::default()
    };
    all_answered("grouped", concurrency, 2, 4).await;
}

#[tokio::test]
async fn a_failed_calls_message_is_held_to_the_output_budget() {
    let mut tools = ToolSet::new();
    tools.register_tool(Noisy).unwrap();
    let client = connect(tools, ToolConfig::default().with_max_output_chars(64)).await;
    let result = call(&client, "noisy").await;
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert_eq!(message.chars().count(), 64, "{message}");
    assert!(message.starts_with("stderr: é"), "{message}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn limits_too_large_to_reach_are_no_limits() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut tools = ToolSet::new();
    tools
        .register_tool(Flaky {
            name: "reads",
            read_only: true,
            failures: 2,
            runs: runs.clone(),
        })
        .unwrap();
    let config = ToolConfig::default()
        .with_default_timeout(std::time::Duration::MAX)
        .with_max_retries(u32::MAX)
        .with_max_concurrency(usize::MAX);
    let client = connect(tools, config).await;
    let reads = call(&client, "reads").await;
    assert_eq!(text(&reads), "worked on run 3");
    client.cancel().await.unwrap();
}

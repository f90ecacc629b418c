//! Progress over MCP: a tool's reports reach the client as `notifications/progress`, in
//! the order made and before the call's result, from whatever thread the tool reports;
//! reports made after the call answered go nowhere.

use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use toolwright_core::{AgentResult, Content, Tool, ToolContext, ToolSet, async_trait};
use toolwright_mcp::McpServer;

/// Reports steps, the first from a thread of its own, and keeps its context.
struct Steps {
    kept: Arc<Mutex<Option<ToolContext>>>,
}

#[async_trait]
impl Tool for Steps {
    fn name(&self) -> &'static str {
        "steps"
    }

    fn description(&self) -> &'static str {
        "Reports steps."
    }

    fn schema(&self) -> Value {
        json!({"type": "object"})
    }

    async fn call(&self, _args: &Value, ctx: &ToolContext) -> AgentResult<Vec<Content>> {
        let from_thread = ctx.clone();
        std::thread::spawn(move || from_thread.emit_progress(json!(1)))
            .join()
            .expect("the reporting thread ends")?;
        ctx.emit_progress(json!(2))?;
        ctx.emit_progress(json!({"progress": 3, "total": 3, "message": "done"}))?;
        // MCP progress only moves forward: a step back is not sent, and a message alone
        // is a step past the last progress.
        ctx.emit_progress(json!(2))?;
        ctx.emit_progress(json!("wrapping up"))?;
        *self.kept.lock().unwrap() = Some(ctx.clone());
        Ok(vec![Content::text("stepped")])
    }
}

/// What the client saw, in order: progress values, then `result`.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl ClientHandler for Seen {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let message = params.message.unwrap_or_default();
        let seen = format!("{}/{:?} {message}", params.progress, params.total);
        self.0.lock().unwrap().push(seen.trim_end().to_owned());
    }
}

#[tokio::test]
async fn progress_arrives_in_order_before_the_result_and_late_reports_go_nowhere() {
    let kept = Arc::new(Mutex::new(None));
    let mut tools = ToolSet::new();
    tools.register_tool(Steps { kept: kept.clone() }).unwrap();
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let running = McpServer::new(tools).serve(server_end).await.unwrap();
        let _ = running.waiting().await;
    });
    let seen = Seen::default();
    let client = seen.clone().serve(client_end).await.unwrap();

    // rmcp's client asks every call for progress.
    let result = client
        .call_tool(CallToolRequestParams::new("steps"))
        .await
        .unwrap();
    seen.0.lock().unwrap().push("result".to_owned());
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        *seen.0.lock().unwrap(),
        [
            "1/None",
            "2/None",
            "3/Some(3.0) done",
            "4/None wrapping up",
            "result"
        ]
    );

    // The tool still holds its context; reporting through it now is harmless...
    let late = kept
        .lock()
        .unwrap()
        .take()
        .expect("the tool kept its context");
    assert!(
        late.emit_progress(json!(100)).is_ok(),
        "a report after the call answered failed"
    );

    // ... and goes nowhere. Every message of the session leaves the server in one
    // stream, in the order sent: a late report, made before the next call was even
    // asked for, would arrive ahead of that call's progress and result.
    let again = client
        .call_tool(CallToolRequestParams::new("steps"))
        .await
        .unwrap();
    seen.0.lock().unwrap().push("result".to_owned());
    assert_eq!(again.is_error, Some(false));
    assert_eq!(
        seen.0.lock().unwrap()[5..],
        [
            "1/None",
            "2/None",
            "3/Some(3.0) done",
            "4/None wrapping up",
            "result"
        ],
        "a report made after its call answered was sent, or the next call's progress \
         is not its own"
    );
    client.cancel().await.unwrap();
}

//! An approval flow on Restate: the run waits on a durable promise until a person
//! approves through Restate's ingress; the worker can die and come back meanwhile.
//!
//! ```text
//! eval "$(bash scripts/restate.sh)"
//! cargo run -p toolwright-restate --example approval -- 127.0.0.1:9080 &
//! bash scripts/restate.sh register http://127.0.0.1:9080
//! curl -X POST $RESTATE_INGRESS_URL/AgentRun/refund-1/run/send -H 'content-type: application/json' -d '{"input": "Refund order 7"}'
//! curl -X POST $RESTATE_INGRESS_URL/AgentRun/refund-1/status
//! curl -X POST $RESTATE_INGRESS_URL/AgentRun/refund-1/approve -H 'content-type: application/json' \
//!   -d '{"call_id": "c1", "decision": "approved", "decider": {"who": "alice", "reason": "customer called"}}'
//! curl $RESTATE_INGRESS_URL/restate/workflow/AgentRun/refund-1/attach
//! ```

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use toolwright_core::llm::{AssistantMessage, LlmClient, LlmRequest, Message, ToolCall};
use toolwright_core::{Agent, AgentResult, ToolContext, tool, tools};
use toolwright_restate::AgentRuns;
use toolwright_restate::restate_sdk::prelude::{Endpoint, HttpServer};

/// Refund an order.
#[tool(destructive)]
async fn refund(
    /// The order to refund.
    order: u32,
    ctx: &ToolContext,
) -> String {
    // A real refund passes the key to the payment service, which refunds once per key.
    format!(
        "refunded order {order} (idempotency key {})",
        ctx.idempotency_key()
    )
}

/// Stands in for a model: asks for the refund, then reports what the tool said. It
/// answers from the conversation alone, as a replayed run needs of anything outside
/// a journaled step.
struct Clerk;

#[async_trait::async_trait]
impl LlmClient for Clerk {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        let said = request.messages.iter().find_map(|m| match m {
            Message::Tool(result) => serde_json::to_string(&result.content).ok(),
            _ => None,
        });
        Ok(match said {
            None => {
                AssistantMessage::tool_calls([ToolCall::new("c1", "refund", json!({"order": 7}))])
            }
            Some(said) => AssistantMessage::text(format!("Done: {said}")),
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:9080".to_owned());
    // `destructive`: every refund waits for a person.
    let agent = Agent::builder(Clerk).tools(tools![refund]).build()?;
    let runs = AgentRuns::new(Arc::new(agent)).approval_timeout(Duration::from_secs(3600));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("serving AgentRun on http://{addr}");
    HttpServer::new(Endpoint::builder().bind(runs).build())
        .serve(listener)
        .await;
    Ok(())
}

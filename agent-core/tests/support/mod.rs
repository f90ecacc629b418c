//! A payment that needs a person's approval: the run the seal and approval tests pause.

#![allow(dead_code)]

use serde_json::json;
use toolwright_core::{
    Agent, RunOutcome, RunState,
    agent::AgentBuilder,
    llm::{AssistantMessage, ToolCall},
    testing::ScriptedLlm,
    tool, tools,
};

pub const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

/// Pay `amount` to `account`.
#[tool(require_approval)]
pub async fn pay(
    /// The account to pay
    account: String,
    /// How much
    amount: u32,
) -> String {
    format!("paid {amount} to {account}")
}

/// An agent whose model asks to pay ACME-1 100 (call `c1`), then says "Done.".
pub fn payment_agent(key: Option<&[u8]>) -> Agent {
    payment_builder(key).build().unwrap()
}

/// The builder of [`payment_agent`].
pub fn payment_builder(key: Option<&[u8]>) -> AgentBuilder {
    let llm = ScriptedLlm::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "c1",
            "pay",
            json!({"account": "ACME-1", "amount": 100}),
        )]),
        AssistantMessage::text("Done."),
    ]);
    let builder = Agent::builder(llm).tools(tools![pay]);
    match key {
        Some(key) => builder.state_key(key),
        None => builder,
    }
}

/// A run paused on the payment, waiting for a person.
pub async fn paused(agent: &Agent) -> RunState {
    let mut run = agent.start("Pay ACME their invoice");
    let outcome = agent.run(&mut run).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Paused { .. }), "{outcome:?}");
    run
}

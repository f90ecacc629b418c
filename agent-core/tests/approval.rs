//! Approving with corrected arguments, and the records of who decided.

mod support;

use serde_json::{Value, json};
use support::{KEY, paused, payment_agent};
use toolwright_core::{
    Agent, AgentError, Message, RunOutcome, RunState, ToolErrorKind,
    llm::{AssistantMessage, ToolCall},
    run::{ApprovalVerdict, Decider},
    testing::ScriptedLlm,
    tools,
};

fn agent() -> Agent {
    payment_agent(Some(KEY))
}

fn tool_output(run: &RunState) -> String {
    run.messages
        .iter()
        .find_map(|m| match m {
            Message::Tool(result) => result.content.iter().find_map(|c| c.as_text()),
            _ => None,
        })
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_corrected_call_runs_with_the_corrected_arguments_and_the_record_keeps_both() {
    let agent = agent();
    let mut run = paused(&agent).await;
    let decider = Decider::new("alice@example.com").reason("ACME's account changed");
    agent
        .approve_with(
            &mut run,
            "c1",
            json!({"account": "ACME-2", "amount": 100}),
            decider,
        )
        .unwrap();
    let record = &run.approvals[0];
    assert_eq!(record.call_id, "c1");
    assert_eq!(record.tool, "pay");
    assert_eq!(record.decision, ApprovalVerdict::Approved);
    assert_eq!(record.who, "alice@example.com");
    assert_eq!(record.reason.as_deref(), Some("ACME's account changed"));
    assert!(record.at_ms > 1_700_000_000_000, "{}", record.at_ms);
    assert_eq!(
        record.corrected_from,
        Some(json!({"account": "ACME-1", "amount": 100}))
    );

    let outcome = agent.run(&mut run).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Finished { .. }));
    assert_eq!(tool_output(&run), "paid 100 to ACME-2");
    assert_eq!(run.approvals.len(), 1, "the record outlives the turn");
}

#[tokio::test]
async fn corrections_that_break_the_schema_are_refused_and_change_nothing() {
    let agent = agent();
    let mut run = paused(&agent).await;
    let before = run.clone();
    let wrong: [(Value, &str); 5] = [
        (json!({"account": "ACME-2", "amount": "a lot"}), "amount"),
        (json!({"amount": 100}), "account"),
        (json!({"account": "ACME-2", "amount": -5}), "amount"),
        (json!(["ACME-2", 100]), "JSON object"),
        (
            json!({"account": "ACME-2", "amount": 100, "memo": "x"}),
            "memo",
        ),
    ];
    for (arguments, named) in wrong {
        let error = agent
            .approve_with(&mut run, "c1", arguments.clone(), Decider::new("bob"))
            .unwrap_err();
        assert!(error.to_string().contains(named), "{arguments}: {error}");
        assert_eq!(
            error.tool_error_kind(),
            Some(ToolErrorKind::InvalidArguments),
            "{arguments}: {error:?}"
        );
        assert_eq!(run, before, "{arguments} changed the state");
    }
}

#[tokio::test]
async fn only_a_call_waiting_for_approval_can_be_corrected() {
    let agent = agent();
    let mut run = paused(&agent).await;
    let error = agent
        .approve_with(
            &mut run,
            "nope",
            json!({"account": "X", "amount": 1}),
            Decider::new("bob"),
        )
        .unwrap_err();
    assert!(
        matches!(&error, AgentError::InvalidState(m) if m.contains("no call `nope`")),
        "{error:?}"
    );
    run.approve("c1").unwrap();
    assert!(
        agent
            .approve_with(
                &mut run,
                "c1",
                json!({"account": "X", "amount": 1}),
                Decider::new("bob")
            )
            .is_err()
    );
}

#[tokio::test]
async fn approve_by_and_reject_by_keep_who_when_and_why() {
    let agent = agent();
    let mut run = paused(&agent).await;
    run.approve_by("c1", Decider::new("carol").reason("invoice checked"))
        .unwrap();
    assert_eq!(run.approvals[0].who, "carol");
    assert_eq!(run.approvals[0].corrected_from, None);
    agent.run(&mut run).await.unwrap();
    assert_eq!(tool_output(&run), "paid 100 to ACME-1");

    let agent = self::agent();
    let mut run = paused(&agent).await;
    run.deny_by("c1", Decider::new("dave").reason("duplicate invoice"))
        .unwrap();
    assert_eq!(run.approvals[0].decision, ApprovalVerdict::Denied);
    agent.run(&mut run).await.unwrap();
    assert!(
        tool_output(&run).contains("duplicate invoice"),
        "the model reads the reason"
    );
}

#[tokio::test]
async fn the_plain_approve_still_works() {
    let agent = agent();
    let mut run = paused(&agent).await;
    run.approve("c1").unwrap();
    agent.run(&mut run).await.unwrap();
    assert_eq!(tool_output(&run), "paid 100 to ACME-1");
}

#[tokio::test]
async fn records_are_sealed_with_the_state() {
    let agent = agent();
    let mut run = paused(&agent).await;
    run.approve_by("c1", Decider::new("carol")).unwrap();
    let text = agent.export_state(&run);
    assert_eq!(agent.import_state(&text).unwrap(), run);
    let forged = text.replacen("\"carol\"", "\"the-ceo\"", 1);
    assert_ne!(forged, text);
    assert!(agent.import_state(&forged).is_err());
}

#[tokio::test]
async fn a_call_that_breaks_its_schema_is_answered_without_asking_anyone() {
    // The model sends the amount as text: a person would approve a call that fails.
    let llm = ScriptedLlm::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "c1",
            "pay",
            json!({"account": "ACME-1", "amount": "a hundred"}),
        )]),
        AssistantMessage::text("Done."),
    ]);
    let agent = Agent::builder(llm)
        .tools(tools![support::pay])
        .build()
        .unwrap();
    let mut run = agent.start("Pay ACME their invoice");
    let outcome = agent.run(&mut run).await.unwrap();
    assert!(
        matches!(outcome, RunOutcome::Finished { .. }),
        "{outcome:?}"
    );
    assert!(run.approvals.is_empty());
    let answer = tool_output(&run);
    assert!(
        answer.contains("Invalid arguments") && answer.contains("`amount` does not fit"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_call_missing_a_required_argument_is_not_put_to_a_person() {
    let llm = ScriptedLlm::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "pay", json!({"amount": 100}))]),
        AssistantMessage::text("Done."),
    ]);
    let agent = Agent::builder(llm)
        .tools(tools![support::pay])
        .build()
        .unwrap();
    let mut run = agent.start("Pay ACME their invoice");
    agent.run(&mut run).await.unwrap();
    assert!(run.pending().is_empty(), "{:?}", run.pending());
    assert!(tool_output(&run).contains("`account` is required and missing"));
}

//! The agent loop: model → tools → model, pauses, resumption, events.

#[path = "runtime_tools.rs"]
mod runtime_tools;

use runtime_tools::{FnTool, first_text};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolwright_core::{
    Agent, AgentError, Content, Message, RunOutcome, RunState, ToolErrorKind,
    agent::{AgentEvent, EventSink},
    exec::{AppContext, HookDecision, RunControl},
    llm::{AssistantMessage, LlmError, LlmRequest, ToolCall, ToolResultMessage},
    run::{PendingKind, RunStatus},
    testing::{FnLlm, RuleLlm, ScriptedLlm},
    tool::{ApprovalPolicy, ExternalTool, NextTurn},
};

fn calls(list: &[(&str, &str, Value)]) -> AssistantMessage {
    AssistantMessage::tool_calls(
        list.iter()
            .map(|(id, name, args)| ToolCall::new(*id, *name, args.clone())),
    )
}

fn tool_results(messages: &[Message]) -> Vec<&ToolResultMessage> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(result) => Some(result),
            _ => None,
        })
        .collect()
}

/// The message of the `InvalidState` error `result` must be; any other outcome fails.
#[track_caller]
fn invalid_state<T: std::fmt::Debug>(result: Result<T, AgentError>) -> String {
    match result {
        Err(AgentError::InvalidState(message)) => message,
        other => panic!("expected AgentError::InvalidState, got {other:?}"),
    }
}

fn event_type(event: &AgentEvent) -> String {
    serde_json::to_value(event).unwrap()["type"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn the_loop_runs_tools_and_returns_the_final_answer_with_events_in_order() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("c1", "weather", json!({"city": "Oslo"}))]),
        AssistantMessage::text("It is sunny in Oslo."),
    ]));
    let events = Arc::new(Mutex::new(Vec::new()));
    let log = events.clone();
    let agent = Agent::builder(llm.clone())
        .system_prompt("You are helpful.")
        .register_tool(FnTool::new("weather", |args, _| async move {
            Ok(vec![Content::text(format!(
                "{}: 22°C, sunny",
                args["city"].as_str().unwrap()
            ))])
        }))
        .on_event(move |event| log.lock().unwrap().push(event))
        .build()
        .unwrap();
    let mut run = agent.start("Weather in Oslo?");
    let outcome = agent.run(&mut run).await.unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            answer: "It is sunny in Oslo.".to_owned()
        }
    );
    assert_eq!(run.status, RunStatus::Finished);
    assert_eq!(run.answer(), Some("It is sunny in Oslo."));
    assert_eq!(run.turn, 2);

    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].tools, ["weather"]);
    assert_eq!(requests[0].messages[0], Message::system("You are helpful."));
    let results = tool_results(&requests[1].messages);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].call_id, "c1");
    assert_eq!(first_text(&results[0].content), "Oslo: 22°C, sunny");

    let kinds: Vec<String> = events.lock().unwrap().iter().map(event_type).collect();
    assert_eq!(
        kinds,
        [
            "turn_started",
            "message",
            "tool_started",
            "tool_finished",
            "turn_started",
            "message",
            "run_finished"
        ]
    );
}

#[tokio::test]
async fn results_join_the_conversation_in_call_order_whatever_order_they_finish_in() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[
            ("a", "sleepy", json!({"ms": 60})),
            ("b", "sleepy", json!({"ms": 1})),
            ("c", "sleepy", json!({"ms": 30})),
        ]),
        AssistantMessage::text("done"),
    ]));
    let agent = Agent::builder(llm.clone())
        .register_tool(
            FnTool::new("sleepy", |args, _| async move {
                let ms = args["ms"].as_u64().unwrap();
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(vec![Content::text(ms.to_string())])
            })
            .read_only(),
        )
        .build()
        .unwrap();
    let mut run = agent.start("go");
    agent.run(&mut run).await.unwrap();
    let ids: Vec<&str> = tool_results(&run.messages)
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b", "c"]);
}

fn approval_agent(
    llm: Arc<ScriptedLlm>,
    ran: Arc<AtomicUsize>,
    deployed: Arc<AtomicUsize>,
) -> Agent {
    Agent::builder(llm)
        .register_tool(FnTool::counting("status", ran))
        .register_tool(FnTool::counting("deploy", deployed).require_approval())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_gated_call_pauses_the_run_after_the_calls_that_need_no_approval() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[
            ("s", "status", json!({})),
            ("d", "deploy", json!({"env": "prod"})),
        ]),
        AssistantMessage::text("Deployed."),
    ]));
    let (ran, deployed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let agent = approval_agent(llm.clone(), ran.clone(), deployed.clone());
    let mut run = agent.start("deploy please");
    let outcome = agent.run(&mut run).await.unwrap();
    let RunOutcome::Paused { pending } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call.id, "d");
    assert_eq!(pending[0].kind, PendingKind::Approval);
    assert_eq!(run.status, RunStatus::WaitingForHuman);
    assert_eq!(
        ran.load(Ordering::SeqCst),
        1,
        "the ungated call ran before the pause"
    );
    assert_eq!(deployed.load(Ordering::SeqCst), 0);

    // Running again without a decision changes nothing.
    assert!(matches!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Paused { .. }
    ));
    assert_eq!(deployed.load(Ordering::SeqCst), 0);

    run.approve("d").unwrap();
    let outcome = agent.run(&mut run).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Finished { .. }));
    assert_eq!(deployed.load(Ordering::SeqCst), 1);
    assert_eq!(
        ran.load(Ordering::SeqCst),
        1,
        "the ungated call did not run twice"
    );
    let ids: Vec<&str> = tool_results(&run.messages)
        .iter()
        .map(|r| r.call_id.as_str())
        .collect();
    assert_eq!(ids, ["s", "d"]);
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn a_rejected_call_never_runs_and_the_model_reads_the_reason() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("d", "deploy", json!({}))]),
        AssistantMessage::text("Understood, not deploying."),
    ]));
    let (ran, deployed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let agent = approval_agent(llm.clone(), ran, deployed.clone());
    let mut run = agent.start("deploy");
    agent.run(&mut run).await.unwrap();
    run.deny("d", "change freeze until Monday").unwrap();
    let outcome = agent.run(&mut run).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Finished { .. }));
    assert_eq!(deployed.load(Ordering::SeqCst), 0);
    let requests = llm.requests();
    let seen = tool_results(&requests[1].messages);
    assert!(seen[0].is_error);
    let body: Value = serde_json::from_str(first_text(&seen[0].content)).unwrap();
    assert_eq!(body["kind"], "denied");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("change freeze until Monday"),
        "{body}"
    );
}

#[tokio::test]
async fn a_call_id_that_is_not_pending_cannot_be_approved() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("d", "deploy", json!({})), ("s", "status", json!({}))]),
        AssistantMessage::text("ok"),
    ]));
    let (ran, deployed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let agent = approval_agent(llm, ran, deployed.clone());
    let mut run = agent.start("deploy");
    // Nothing is pending before the run pauses.
    let message = invalid_state(run.approve("d"));
    assert_eq!(
        message,
        "the run is not waiting for anyone (it is Ready), so call `d` cannot be decided"
    );
    agent.run(&mut run).await.unwrap();
    let before = run.clone();
    for forged in ["forged", "s", ""] {
        assert_eq!(
            invalid_state(run.approve(forged)),
            format!("no call `{forged}` is waiting for approval")
        );
        assert_eq!(
            invalid_state(run.deny(forged, "no")),
            format!("no call `{forged}` is waiting for approval")
        );
        assert_eq!(
            invalid_state(run.supply_output(forged, vec![])),
            format!("no call `{forged}` is waiting for its output")
        );
    }
    // An approval call cannot supply output either.
    assert_eq!(
        invalid_state(run.supply_output("d", vec![Content::text("fake")])),
        "no call `d` is waiting for its output"
    );
    assert_eq!(run, before, "failed decisions change nothing");
    assert!(matches!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Paused { .. }
    ));
    assert_eq!(deployed.load(Ordering::SeqCst), 0);
    // Deciding twice is refused too.
    run.approve("d").unwrap();
    assert_eq!(
        invalid_state(run.approve("d")),
        "no call `d` is waiting for approval"
    );
}

fn rule_agent(deployed: Arc<AtomicUsize>) -> Agent {
    let llm = RuleLlm::new()
        .when("weather", "weather", json!({"city": "Paris"}))
        .when("deploy", "deploy", json!({"env": "prod"}));
    Agent::builder(llm)
        .system_prompt("Be brief.")
        .register_tool(FnTool::new("weather", |args, _| async move {
            Ok(vec![Content::text(format!(
                "{}: rain",
                args["city"].as_str().unwrap()
            ))])
        }))
        .register_tool(FnTool::counting("deploy", deployed).require_approval())
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_run_resumed_from_serialized_state_finishes_identically() {
    let deployed_here = Arc::new(AtomicUsize::new(0));
    let agent = rule_agent(deployed_here.clone());
    let mut run = agent.start("What is the weather? Then deploy.");
    let paused = agent.run(&mut run).await.unwrap();
    assert!(matches!(paused, RunOutcome::Paused { .. }));
    let stored = serde_json::to_string(&run).unwrap();

    // This process goes on.
    run.approve("call_1_2").unwrap();
    let here = agent.run(&mut run).await.unwrap();

    // Another "process": a fresh agent built the same way, and the stored state.
    let deployed_there = Arc::new(AtomicUsize::new(0));
    let other = rule_agent(deployed_there.clone());
    let mut restored: RunState = serde_json::from_str(&stored).unwrap();
    assert_eq!(restored.status, RunStatus::WaitingForHuman);
    restored.approve("call_1_2").unwrap();
    let there = other.run(&mut restored).await.unwrap();

    assert_eq!(here, there);
    assert_eq!(run, restored);
    assert_eq!(deployed_here.load(Ordering::SeqCst), 1);
    assert_eq!(deployed_there.load(Ordering::SeqCst), 1);
    let RunOutcome::Finished { answer } = here else {
        panic!("{here:?}");
    };
    assert!(answer.contains("weather: Paris: rain"), "{answer}");
    assert!(answer.contains("deploy: deploy ran"), "{answer}");
}

#[tokio::test]
async fn external_tools_pause_until_the_application_supplies_output() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("t", "ticket_lookup", json!({"ticket_id": "T-1"}))]),
        AssistantMessage::text("The ticket is about login."),
    ]));
    let agent = Agent::builder(llm.clone())
        .register_tool(ExternalTool::new(
            "ticket_lookup",
            "Load one support ticket",
            json!({"type": "object", "properties": {"ticket_id": {"type": "string"}}}),
        ))
        .build()
        .unwrap();
    let mut run = agent.start("what is T-1?");
    let RunOutcome::Paused { pending } = agent.run(&mut run).await.unwrap() else {
        panic!("expected a pause");
    };
    assert_eq!(pending[0].kind, PendingKind::ExternalOutput);
    // An external call is not approved.
    assert_eq!(
        invalid_state(run.approve("t")),
        "no call `t` is waiting for approval"
    );
    supply_and_finish(&agent, &mut run, &llm, "t", "Cannot log in").await;
}

/// Supplies `output` for the pending call `call_id`, runs to the end, and checks the
/// model read it in its next request.
async fn supply_and_finish(
    agent: &Agent,
    run: &mut RunState,
    llm: &ScriptedLlm,
    call_id: &str,
    output: &str,
) {
    run.supply_output(call_id, vec![Content::text(output)])
        .unwrap();
    assert!(matches!(
        agent.run(run).await.unwrap(),
        RunOutcome::Finished { .. }
    ));
    let requests = llm.requests();
    let seen = tool_results(&requests[1].messages);
    assert_eq!(first_text(&seen[0].content), output);
}

#[tokio::test]
async fn a_fail_run_error_ends_the_run() {
    let llm = ScriptedLlm::new([
        calls(&[("x", "explode", json!({}))]),
        AssistantMessage::text("never"),
    ]);
    let agent = Agent::builder(llm)
        .register_tool(
            FnTool::new("explode", |_, _| async {
                Err(toolwright_core::ToolError::execution("database corrupted").into())
            })
            .fail_run(),
        )
        .build()
        .unwrap();
    let mut run = agent.start("go");
    let error = agent.run(&mut run).await.unwrap_err();
    assert_eq!(error.tool_error_kind(), Some(ToolErrorKind::Execution));
    assert_eq!(error.to_string(), "database corrupted");
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.error.as_deref(), Some("database corrupted"));
    // A failed run stays failed.
    assert_eq!(
        invalid_state(agent.run(&mut run).await),
        "the run is Failed and cannot go on"
    );
}

// The limit counts the turns since the user last spoke: the status says a user message
// lets a run at its limit go on, and so it does.
#[tokio::test]
async fn a_run_at_its_turn_limit_goes_on_after_a_user_message() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("c1", "ping", json!({}))]),
        AssistantMessage::text("pong it is"),
    ]));
    let agent = Agent::builder(llm.clone())
        .register_tool(FnTool::text("ping", "pong"))
        .max_turns(1)
        .build()
        .unwrap();
    let mut run = agent.start("ping once");
    assert_eq!(agent.run(&mut run).await.unwrap(), RunOutcome::TurnLimit);
    run.push_user("go on").unwrap();
    let outcome = agent.run(&mut run).await.unwrap();
    assert_eq!(llm.requests().len(), 2, "the model was asked again");
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            answer: "pong it is".to_owned()
        }
    );
    assert_eq!(run.turn, 2, "the run's own count goes on");
}

#[tokio::test]
async fn a_finished_run_goes_on_after_a_user_message_however_many_turns_it_took() {
    let llm = Arc::new(ScriptedLlm::new([
        AssistantMessage::text("hello"),
        AssistantMessage::text("again"),
    ]));
    let agent = Agent::builder(llm.clone()).max_turns(1).build().unwrap();
    let mut run = agent.start("hi");
    assert!(matches!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Finished { .. }
    ));
    run.push_user("more").unwrap();
    assert_eq!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Finished {
            answer: "again".to_owned()
        }
    );
}

#[tokio::test]
async fn the_turn_limit_stops_a_model_that_never_answers() {
    let llm = FnLlm(|request: &LlmRequest<'_>| {
        let n = request.messages.len();
        Ok(calls(&[(&format!("c{n}"), "ping", json!({}))]))
    });
    let agent = Agent::builder(llm)
        .register_tool(FnTool::text("ping", "pong"))
        .max_turns(3)
        .build()
        .unwrap();
    let mut run = agent.start("loop");
    assert_eq!(agent.run(&mut run).await.unwrap(), RunOutcome::TurnLimit);
    assert_eq!(run.turn, 3);
    assert_eq!(run.status, RunStatus::TurnLimit);
    assert_eq!(tool_results(&run.messages).len(), 3);
}

#[tokio::test]
async fn deferred_tools_are_offered_and_callable_only_while_active() {
    let active = Arc::new(AtomicBool::new(false));
    let flag = active.clone();
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("1", "admin", json!({})), ("2", "unlock", json!({}))]),
        calls(&[("3", "admin", json!({}))]),
        AssistantMessage::text("done"),
    ]));
    let agent = Agent::builder(llm.clone())
        .register_tool(FnTool::new("unlock", move |_, _| {
            let flag = flag.clone();
            async move {
                flag.store(true, Ordering::SeqCst);
                Ok(vec![Content::text("unlocked")])
            }
        }))
        .register_tool(FnTool::text("admin", "admin ran").deferred(active))
        .build()
        .unwrap();
    let mut run = agent.start("go");
    agent.run(&mut run).await.unwrap();
    let requests = llm.requests();
    assert_eq!(requests[0].tools, ["unlock"]);
    assert_eq!(requests[1].tools, ["unlock", "admin"]);
    let results = tool_results(&run.messages);
    let refused: Value = serde_json::from_str(first_text(&results[0].content)).unwrap();
    assert_eq!(refused["kind"], "unknown_tool");
    assert_eq!(first_text(&results[2].content), "admin ran");
}

#[tokio::test(start_paused = true)]
async fn the_last_context_in_call_order_wins_and_later_turns_see_it() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[
            ("a", "set", json!({"v": "first", "ms": 50})),
            ("b", "set", json!({"v": "second", "ms": 1})),
        ]),
        calls(&[("c", "read", json!({}))]),
        AssistantMessage::text("done"),
    ]));
    let agent = Agent::builder(llm.clone())
        .register_tool(
            FnTool::new("set", |args, ctx| async move {
                tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap())).await;
                ctx.set_context(json!({"by": args["v"]}));
                Ok(vec![])
            })
            .read_only(),
        )
        .register_tool(FnTool::new("read", |_, ctx| async move {
            let AppContext(context) = ctx.state::<AppContext>().cloned().unwrap_or_default();
            Ok(vec![Content::text(context.to_string())])
        }))
        .build()
        .unwrap();
    let mut run = agent.start("go");
    agent.run(&mut run).await.unwrap();
    assert_eq!(run.context, json!({"by": "second"}));
    assert_eq!(llm.requests()[1].context, json!({"by": "second"}));
    let results = tool_results(&run.messages);
    assert_eq!(first_text(&results[2].content), r#"{"by":"second"}"#);
}

#[tokio::test(start_paused = true)]
async fn cancelling_one_call_keeps_the_run_going() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("slow", "slow", json!({})), ("fast", "fast", json!({}))]),
        AssistantMessage::text("finished anyway"),
    ]));
    let (sink, mut events) = EventSink::channel();
    let control = RunControl::with_events(sink);
    let agent = Agent::builder(llm.clone())
        .register_tool(
            FnTool::new("slow", |_, _| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(vec![])
            })
            .read_only()
            .timeout_ms(10_000_000),
        )
        .register_tool(FnTool::text("fast", "quick").read_only())
        .build()
        .unwrap();
    let canceller = control.clone();
    tokio::spawn(async move {
        // Cancel once the slow call has started.
        while let Some(event) = events.recv().await {
            if let AgentEvent::ToolStarted { call_id, .. } = event
                && call_id == "slow"
            {
                assert!(canceller.cancel_call("slow"));
            }
        }
    });
    let mut run = agent.start("go");
    let outcome = agent.run_with(&mut run, &control).await.unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            answer: "finished anyway".to_owned()
        }
    );
    let results = tool_results(&run.messages);
    let body: Value = serde_json::from_str(first_text(&results[0].content)).unwrap();
    assert_eq!(body["kind"], "cancelled");
    assert_eq!(first_text(&results[1].content), "quick");
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_run_stops_it() {
    let llm = ScriptedLlm::new([
        calls(&[("slow", "slow", json!({}))]),
        AssistantMessage::text("never"),
    ]);
    let agent = Agent::builder(llm)
        .register_tool(
            FnTool::new("slow", |_, _| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(vec![])
            })
            .timeout_ms(10_000_000),
        )
        .build()
        .unwrap();
    let control = RunControl::new();
    let canceller = control.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        canceller.cancel_run();
    });
    let mut run = agent.start("go");
    let outcome = agent.run_with(&mut run, &control).await.unwrap();
    assert_eq!(outcome, RunOutcome::Cancelled);
    assert_eq!(run.status, RunStatus::Cancelled);
    assert_eq!(
        invalid_state(agent.run(&mut run).await),
        "the run is Cancelled and cannot go on"
    );
}

#[tokio::test]
async fn the_agent_approval_rule_overrides_tools() {
    let llm = ScriptedLlm::new([
        calls(&[("1", "read", json!({})), ("2", "deploy", json!({}))]),
        AssistantMessage::text("ok"),
    ]);
    let (read, deployed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let agent = Agent::builder(llm)
        .register_tool(FnTool::counting("read", read.clone()))
        .register_tool(FnTool::counting("deploy", deployed.clone()).require_approval())
        .approval_rule(|call, _tool| {
            if call.name == "read" {
                ApprovalPolicy::Required
            } else {
                ApprovalPolicy::NotRequired
            }
        })
        .build()
        .unwrap();
    let mut run = agent.start("go");
    let RunOutcome::Paused { pending } = agent.run(&mut run).await.unwrap() else {
        panic!("expected a pause");
    };
    assert_eq!(pending[0].call.name, "read");
    assert_eq!(deployed.load(Ordering::SeqCst), 1);
    assert_eq!(read.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn builder_errors_surface_at_build_and_state_reaches_tools() {
    let duplicate = Agent::builder(ScriptedLlm::default())
        .register_tool(FnTool::text("same", "a"))
        .register_tool(FnTool::text("same", "b"))
        .build();
    assert!(matches!(duplicate, Err(AgentError::DuplicateTool(name)) if name == "same"));

    #[derive(Clone)]
    struct Greeting(&'static str);
    let llm = ScriptedLlm::new([
        calls(&[("1", "greet", json!({}))]),
        AssistantMessage::text("ok"),
    ]);
    let agent = Agent::builder(llm)
        .register_tool(FnTool::new("greet", |_, ctx| async move {
            Ok(vec![Content::text(
                ctx.state::<Greeting>().map_or("none", |g| g.0),
            )])
        }))
        .state(Greeting("hej"))
        .build()
        .unwrap();
    let mut run = agent.start("go");
    agent.run(&mut run).await.unwrap();
    assert_eq!(first_text(&tool_results(&run.messages)[0].content), "hej");
}

#[tokio::test]
async fn a_model_failure_is_an_error_and_the_run_can_be_retried() {
    let llm = Arc::new(ScriptedLlm::default());
    llm.push_error("503 overloaded");
    llm.push(AssistantMessage::text("hello"));
    let agent = Agent::builder(llm.clone()).build().unwrap();
    let mut run = agent.start("hi");
    let error = agent.run(&mut run).await.unwrap_err();
    assert!(
        matches!(&error, AgentError::Model(LlmError::Other { message }) if message.contains("503 overloaded")),
        "{error:?}"
    );
    assert_eq!(run.status, RunStatus::Ready);
    assert_eq!(run.turn, 0);
    assert_eq!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Finished {
            answer: "hello".to_owned()
        }
    );
    // A finished run goes on with a new user message, not without one.
    let message = invalid_state(agent.run(&mut run).await);
    assert!(
        message.contains("the run has ended") && message.contains("push_user"),
        "{message}"
    );
    llm.push(AssistantMessage::text("again"));
    run.push_user("more").unwrap();
    assert!(matches!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Finished { .. }
    ));
}

#[test]
fn run_state_and_events_serialize_in_a_stable_shape() {
    let state = RunState::new(vec![Message::user("hi")]).with_session_id("s");
    let value = serde_json::to_value(&state).unwrap();
    assert_eq!(value["status"], "ready");
    assert_eq!(
        value["messages"][0],
        json!({"role": "user", "content": "hi"})
    );
    let event = AgentEvent::ToolProgress {
        call_id: "c".into(),
        name: "t".into(),
        value: json!(1),
    };
    assert_eq!(
        serde_json::to_value(&event).unwrap(),
        json!({"type": "tool_progress", "call_id": "c", "name": "t", "value": 1})
    );
    let message = Message::Assistant(calls(&[("1", "t", json!({"a": 1}))]));
    let text = serde_json::to_string(&message).unwrap();
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), message);
}

#[tokio::test]
async fn an_interactive_hook_pauses_or_answers_calls_and_supplied_output_is_checked() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[
            ("ask", "confirm", json!({"question": "ship it?"})),
            ("auto", "lookup", json!({})),
            ("bad", "confirm", json!({"question": "again?"})),
        ]),
        AssistantMessage::text("ok"),
    ]));
    let ran = Arc::new(AtomicUsize::new(0));
    let agent = Agent::builder(llm.clone())
        .register_tool(FnTool::counting("confirm", ran.clone()))
        .register_tool(FnTool::counting("lookup", ran.clone()))
        .on_tool_called(|call, _tool| match call.name.as_str() {
            "confirm" => HookDecision::Pause,
            _ => HookDecision::Respond(vec![Content::text("cached answer")]),
        })
        .on_response_received(|_call, output| {
            let text = output.first().and_then(Content::as_text).unwrap_or("");
            if text.is_empty() {
                Err("a person must answer".to_owned())
            } else {
                Ok(vec![Content::text(format!("person said: {text}"))])
            }
        })
        .build()
        .unwrap();
    let mut run = agent.start("go");
    let RunOutcome::Paused { pending } = agent.run(&mut run).await.unwrap() else {
        panic!("expected a pause");
    };
    let kinds: Vec<(&str, PendingKind)> = pending
        .iter()
        .map(|p| (p.call.id.as_str(), p.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("ask", PendingKind::HumanInput),
            ("bad", PendingKind::HumanInput)
        ]
    );
    run.supply_output("ask", vec![Content::text("yes")])
        .unwrap();
    run.supply_output("bad", vec![]).unwrap();
    assert!(matches!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Finished { .. }
    ));
    assert_eq!(ran.load(Ordering::SeqCst), 0, "no tool body ran");
    let results = tool_results(&run.messages);
    assert_eq!(first_text(&results[0].content), "person said: yes");
    assert_eq!(first_text(&results[1].content), "cached answer");
    let body: Value = serde_json::from_str(first_text(&results[2].content)).unwrap();
    assert_eq!(body["error"], "Invalid tool output: a person must answer");
}

#[tokio::test]
async fn tools_can_set_parameters_for_the_next_model_request_only() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("1", "focus", json!({}))]),
        calls(&[("2", "plain", json!({}))]),
        AssistantMessage::text("done"),
    ]));
    let agent = Agent::builder(llm.clone())
        .register_tool(FnTool::new("focus", |_, ctx| async move {
            if let Some(next) = ctx.state::<NextTurn>() {
                next.set("temperature", json!(0.0));
                next.set("tool_choice", json!("none"));
            }
            Ok(vec![])
        }))
        .register_tool(FnTool::text("plain", "p"))
        .build()
        .unwrap();
    let mut run = agent.start("go");
    agent.run(&mut run).await.unwrap();
    let requests = llm.requests();
    assert!(requests[0].params.is_empty());
    assert_eq!(
        Value::Object(requests[1].params.clone()),
        json!({"temperature": 0.0, "tool_choice": "none"})
    );
    assert!(
        requests[2].params.is_empty(),
        "the parameters last one turn"
    );
    assert!(run.next_turn.is_empty());
}

#[tokio::test]
async fn agents_and_runs_can_move_across_tasks() {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    let agent = Arc::new(
        Agent::builder(ScriptedLlm::new([AssistantMessage::text("hi")]))
            .build()
            .unwrap(),
    );
    assert_send_sync(&*agent);
    let mut run = agent.start("hello");
    let outcome = tokio::spawn({
        let agent = agent.clone();
        async move {
            let outcome = agent.run(&mut run).await;
            (outcome, run)
        }
    })
    .await
    .unwrap();
    assert!(matches!(outcome.0.unwrap(), RunOutcome::Finished { .. }));
    assert_eq!(outcome.1.status, RunStatus::Finished);
}

mod with_macros {
    use serde_json::json;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use toolwright_core::{
        Agent, Progress, RunOutcome, ToolErrorKind,
        agent::AgentEvent,
        llm::{AssistantMessage, ToolCall},
        testing::ScriptedLlm,
        tool, tools,
    };

    /// Deploy a release to an environment.
    #[tool(require_approval)]
    async fn deploy(
        /// Where to deploy
        environment: String,
    ) -> String {
        format!("deployed to {environment}")
    }

    /// Delete every row of a table.
    #[tool(destructive)]
    async fn truncate_table(
        /// The table
        table: String,
    ) -> String {
        format!("{table} is empty")
    }

    /// Scan a folder, reporting each phase.
    #[tool(read_only)]
    async fn scan(
        /// The folder
        path: String,
        progress: Progress,
    ) -> Result<String, toolwright_core::ToolError> {
        progress.emit(json!({"phase": "start"}))?;
        progress.emit(json!({"phase": "end"}))?;
        Ok(format!("scanned {path}"))
    }

    /// Wait far longer than allowed.
    #[tool(timeout = "50ms", read_only)]
    async fn stall() -> String {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        "never".to_owned()
    }

    #[tokio::test(start_paused = true)]
    async fn macro_made_tools_follow_every_runtime_policy() {
        let llm = ScriptedLlm::new([
            AssistantMessage::tool_calls([
                ToolCall::new("s", "scan", json!({"path": "/src"})),
                ToolCall::new("d", "deploy", json!({"environment": "prod"})),
                ToolCall::new("t", "truncate_table", json!({"table": "users"})),
                ToolCall::new("x", "stall", json!({})),
            ]),
            AssistantMessage::text("done"),
        ]);
        let events = Arc::new(Mutex::new(Vec::new()));
        let log = events.clone();
        let agent = Agent::builder(llm)
            .tools(tools![scan, deploy, truncate_table, stall])
            .on_event(move |event| log.lock().unwrap().push(event))
            .build()
            .unwrap();
        let mut run = agent.start("go");
        let RunOutcome::Paused { pending } = agent.run(&mut run).await.unwrap() else {
            panic!("expected a pause");
        };
        let waiting: Vec<&str> = pending.iter().map(|p| p.call.id.as_str()).collect();
        assert_eq!(
            waiting,
            ["d", "t"],
            "require_approval and destructive both wait"
        );
        let progress: Vec<serde_json::Value> = events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolProgress { value, .. } => Some(value.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            progress,
            [json!({"phase": "start"}), json!({"phase": "end"})]
        );
        let stalled = run
            .turn_results()
            .into_iter()
            .find(|r| r.call.id == "x")
            .and_then(|r| r.outcome.error().cloned())
            .unwrap();
        assert_eq!(stalled.kind(), ToolErrorKind::Timeout);

        run.approve("d").unwrap();
        run.deny("t", "not today").unwrap();
        assert!(matches!(
            agent.run(&mut run).await.unwrap(),
            RunOutcome::Finished { .. }
        ));
    }
}

// An external tool that needs approval: the person approves first, then the application
// carries the call out and supplies its output, then the model reads it.
#[tokio::test]
async fn an_external_call_needing_approval_is_approved_then_supplied() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("p", "send_payment", json!({}))]),
        AssistantMessage::text("Paid."),
    ]));
    let agent = Agent::builder(llm.clone())
        .register_tool(
            FnTool::text("send_payment", "unused")
                .external()
                .require_approval(),
        )
        .build()
        .unwrap();
    let mut run = agent.start("pay the invoice");
    let RunOutcome::Paused { pending } = agent.run(&mut run).await.unwrap() else {
        panic!("expected a pause for approval");
    };
    assert_eq!(pending[0].kind, PendingKind::Approval);
    // No output before the approval.
    assert_eq!(
        invalid_state(run.supply_output("p", vec![Content::text("receipt")])),
        "no call `p` is waiting for its output"
    );
    run.approve("p").unwrap();
    let RunOutcome::Paused { pending } = agent.run(&mut run).await.unwrap() else {
        panic!("expected a pause for the output");
    };
    assert_eq!(pending[0].kind, PendingKind::ExternalOutput);
    supply_and_finish(&agent, &mut run, &llm, "p", "receipt 42").await;
}

#[tokio::test]
async fn prompt_answers_in_one_call_and_says_why_when_the_run_does_not_finish() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("s", "status", json!({}))]),
        AssistantMessage::text("All green."),
    ]));
    let (ran, deployed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let agent = approval_agent(llm, ran.clone(), deployed.clone());
    assert_eq!(agent.prompt("status?").await.unwrap(), "All green.");
    assert_eq!(ran.load(Ordering::SeqCst), 1);

    // A call that needs a person: the error carries the pause, and nothing ran.
    let llm = Arc::new(ScriptedLlm::new([calls(&[(
        "d",
        "deploy",
        json!({"env": "prod"}),
    )])]));
    let agent = approval_agent(llm, ran.clone(), deployed.clone());
    let error = agent.prompt("deploy").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the run paused before its final answer, waiting on a person for: deploy"
    );
    let AgentError::Unfinished(outcome) = error else {
        panic!("expected Unfinished, got {error:?}");
    };
    let RunOutcome::Paused { pending } = *outcome else {
        panic!("expected a pause, got {outcome:?}");
    };
    assert_eq!(pending[0].call.id, "d");
    assert_eq!(deployed.load(Ordering::SeqCst), 0);

    // The turn limit.
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("s1", "status", json!({}))]),
        calls(&[("s2", "status", json!({}))]),
    ]));
    let agent = Agent::builder(llm)
        .register_tool(FnTool::counting("status", ran))
        .max_turns(1)
        .build()
        .unwrap();
    let error = agent.prompt("loop").await.unwrap_err();
    assert_eq!(
        error,
        AgentError::Unfinished(Box::new(RunOutcome::TurnLimit)),
        "{error}"
    );
}

#[tokio::test]
async fn a_computed_system_prompt_is_recomputed_from_the_run_before_each_request() {
    let llm = Arc::new(ScriptedLlm::new([
        calls(&[("a", "note", json!({}))]),
        AssistantMessage::text("done"),
    ]));
    let agent = Agent::builder(llm.clone())
        .system_prompt("Be brief.")
        .system_prompt_fn(|run| {
            let note = run.context.get("note").and_then(Value::as_str);
            format!("Turn {}. Note: {}.", run.turn + 1, note.unwrap_or("none"))
        })
        .register_tool(FnTool::new("note", |_, ctx| async move {
            ctx.set_context(json!({"note": "saved"}));
            Ok(vec![])
        }))
        .build()
        .unwrap();
    let mut run = agent.start("go");
    agent.run(&mut run).await.unwrap();
    let systems = |messages: &[Message]| -> Vec<String> {
        messages
            .iter()
            .filter_map(|m| match m {
                Message::System { content } => Some(content.clone()),
                _ => None,
            })
            .collect()
    };
    let requests = llm.requests();
    // One system message, first, in each request: computed, not added beside the old.
    assert_eq!(systems(&requests[0].messages), ["Turn 1. Note: none."]);
    assert_eq!(systems(&requests[1].messages), ["Turn 2. Note: saved."]);
    assert!(matches!(&requests[1].messages[0], Message::System { .. }));
    // The stored run shows what the model was last told.
    assert_eq!(systems(&run.messages), ["Turn 2. Note: saved."]);
}

#[tokio::test]
async fn an_empty_computed_system_prompt_removes_the_system_message() {
    let llm = Arc::new(ScriptedLlm::new([AssistantMessage::text("done")]));
    let agent = Agent::builder(llm.clone())
        .system_prompt("Be brief.")
        .system_prompt_fn(|_| String::new())
        .build()
        .unwrap();
    let mut run = agent.start("go");
    agent.run(&mut run).await.unwrap();
    let sent = &llm.requests()[0].messages;
    assert!(
        !sent.iter().any(|m| matches!(m, Message::System { .. })),
        "{sent:?}"
    );
    assert!(matches!(&sent[0], Message::User { .. }));
}

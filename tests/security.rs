//! Security properties, stated as tests:
//! - a Hidden or inactive Deferred tool never runs, whatever name or casing the model
//!   uses, through the set, the executor and the agent;
//! - an approval-gated call never runs without approval, whatever ids the application
//!   is handed;
//! - a forged call id approves nothing, including an approved id the model reuses later.

#[path = "name_variants.rs"]
mod name_variants;
#[path = "runtime_tools.rs"]
mod runtime_tools;

use name_variants::name_variant;
use proptest::prelude::*;
use runtime_tools::FnTool;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use toolwright_core::{
    Agent, RunOutcome, ToolContext, ToolSet,
    exec::{Executor, TurnContext},
    llm::{AssistantMessage, ToolCall},
    testing::ScriptedLlm,
    toolset::ToolConfig,
};

const HIDDEN: &str = "secret_tool";
const DEFERRED: &str = "deferred_tool";

struct Fixture {
    set: Arc<ToolSet>,
    hidden_runs: Arc<AtomicUsize>,
    deferred_runs: Arc<AtomicUsize>,
}

fn fixture() -> Fixture {
    let hidden_runs = Arc::new(AtomicUsize::new(0));
    let deferred_runs = Arc::new(AtomicUsize::new(0));
    let inactive = Arc::new(AtomicBool::new(false));
    let mut set = ToolSet::new();
    set.register_tool(FnTool::counting(HIDDEN, hidden_runs.clone()).hidden())
        .unwrap();
    set.register_tool(FnTool::counting(DEFERRED, deferred_runs.clone()).deferred(inactive))
        .unwrap();
    set.register_tool(FnTool::text("visible", "ok")).unwrap();
    Fixture {
        set: Arc::new(set),
        hidden_runs,
        deferred_runs,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn hidden_and_inactive_tools_never_run_whatever_the_name(
        hidden in name_variant(HIDDEN),
        deferred in name_variant(DEFERRED),
    ) {
        let fx = fixture();
        let rt = runtime();
        rt.block_on(async {
            let ctx = ToolContext::default();
            for name in [&hidden, &deferred] {
                // Through the set.
                let error = fx.set.call(name, &json!({}), &ctx).await.unwrap_err();
                prop_assert!(error.to_string().starts_with("Unknown tool"), "{error}");
                // Through the executor, even when the turn claims to offer the name.
                let executor = Executor::new(fx.set.clone(), ToolConfig::default());
                let turn = TurnContext::new().with_offered([name.clone()]);
                let results = executor
                    .execute(&[ToolCall::new("c", name.clone(), json!({}))], &turn)
                    .await;
                prop_assert!(results[0].outcome.error().is_some());
            }
            // Through a whole agent run.
            let llm = ScriptedLlm::new([
                AssistantMessage::tool_calls([
                    ToolCall::new("a", hidden.clone(), json!({})),
                    ToolCall::new("b", deferred.clone(), json!({})),
                ]),
                AssistantMessage::text("done"),
            ]);
            let agent = Agent::builder(llm).tools(clone_set(&fx)).build().unwrap();
            let mut run = agent.start("go");
            agent.run(&mut run).await.unwrap();
            Ok(())
        })?;
        prop_assert_eq!(fx.hidden_runs.load(Ordering::SeqCst), 0);
        prop_assert_eq!(fx.deferred_runs.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_gated_call_never_runs_without_approval(
        forged in prop::collection::vec(
            prop_oneof![
                Just("D".to_owned()), Just(" d".to_owned()), Just("d ".to_owned()),
                Just("s".to_owned()), Just(String::new()), "[a-zA-Z0-9_ ]{0,8}",
            ],
            1..6,
        ),
    ) {
        let deployed = Arc::new(AtomicUsize::new(0));
        let status = Arc::new(AtomicUsize::new(0));
        let llm = ScriptedLlm::new([
            AssistantMessage::tool_calls([
                ToolCall::new("s", "status", json!({})),
                ToolCall::new("d", "deploy", json!({})),
            ]),
            AssistantMessage::text("done"),
        ]);
        let agent = Agent::builder(llm)
            .register_tool(FnTool::counting("status", status.clone()))
            .register_tool(FnTool::counting("deploy", deployed.clone()).require_approval())
            .build()
            .unwrap();
        let rt = runtime();
        rt.block_on(async {
            let mut run = agent.start("deploy");
            let outcome = agent.run(&mut run).await.unwrap();
            prop_assert!(matches!(outcome, RunOutcome::Paused { .. }), "{outcome:?}");
            for id in &forged {
                if id != "d" {
                    prop_assert!(run.approve(id).is_err(), "approved forged id {id:?}");
                }
            }
            // However often the application resumes, the gated call stays pending.
            for _ in 0..3 {
                let outcome = agent.run(&mut run).await.unwrap();
                prop_assert!(matches!(outcome, RunOutcome::Paused { .. }), "{outcome:?}");
            }
            Ok(())
        })?;
        prop_assert_eq!(deployed.load(Ordering::SeqCst), 0);
        prop_assert_eq!(status.load(Ordering::SeqCst), 1);
    }
}

fn clone_set(fx: &Fixture) -> ToolSet {
    let mut set = ToolSet::new();
    for tool in fx.set.iter() {
        set.register_arc(tool.clone()).unwrap();
    }
    set
}

#[tokio::test]
async fn an_approved_id_reused_by_the_model_later_approves_nothing() {
    let deployed = Arc::new(AtomicUsize::new(0));
    let llm = ScriptedLlm::new([
        AssistantMessage::tool_calls([ToolCall::new("d", "deploy", json!({"env": "staging"}))]),
        // The model repeats the approved id for a different, unapproved call.
        AssistantMessage::tool_calls([ToolCall::new("d", "deploy", json!({"env": "prod"}))]),
        AssistantMessage::text("done"),
    ]);
    let agent = Agent::builder(llm)
        .register_tool(FnTool::counting("deploy", deployed.clone()).require_approval())
        .build()
        .unwrap();
    let mut run = agent.start("deploy");
    assert!(matches!(
        agent.run(&mut run).await.unwrap(),
        RunOutcome::Paused { .. }
    ));
    run.approve("d").unwrap();
    let outcome = agent.run(&mut run).await.unwrap();
    assert_eq!(
        deployed.load(Ordering::SeqCst),
        1,
        "the approved call ran once"
    );
    match outcome {
        RunOutcome::Paused { pending } => {
            assert_eq!(pending.len(), 1);
            assert_eq!(pending[0].call.arguments, json!({"env": "prod"}));
        }
        RunOutcome::Finished { .. } => {
            // Refusing the reused id outright is also safe, as long as it did not run.
        }
        other => panic!("unexpected outcome: {other:?}"),
    }
    assert_eq!(
        deployed.load(Ordering::SeqCst),
        1,
        "the reused id did not run"
    );
}

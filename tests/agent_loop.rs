//! The agent loop's model side: settings in layers, streamed runs, usage totals and
//! limits, typed final output, and the spans of runs and model calls.

use agent_core::{Agent, AssistantMessage, ModelSettings, RunState, ScriptedLlm, ToolChoice};
use std::sync::Arc;

#[tokio::test]
async fn settings_layers_agent_run_and_request_each_win_in_order() {
    let llm = Arc::new(ScriptedLlm::new([
        AssistantMessage::text("one"),
        AssistantMessage::text("two"),
    ]));
    let agent = Agent::builder(llm.clone())
        .settings(
            ModelSettings::new()
                .temperature(0.9)
                .max_output_tokens(100)
                .seed(1),
        )
        .build()
        .unwrap();
    let mut run = agent
        .start("hi")
        .with_settings(ModelSettings::new().temperature(0.5).seed(2));
    run.next_settings = ModelSettings::new().seed(3).tool_choice(ToolChoice::None);
    agent.run(&mut run).await.unwrap();
    run.push_user("again").unwrap();
    agent.run(&mut run).await.unwrap();

    let requests = llm.requests();
    // Turn 1: the request's seed over the run's, the run's temperature over the
    // agent's, the agent's token cap where nobody else set one.
    let first = &requests[0].settings;
    assert_eq!(first.temperature, Some(0.5));
    assert_eq!(first.seed, Some(3));
    assert_eq!(first.max_output_tokens, Some(100));
    assert_eq!(first.tool_choice, Some(ToolChoice::None));
    // Request-level settings are for one request only.
    let second = &requests[1].settings;
    assert_eq!(second.seed, Some(2));
    assert_eq!(second.tool_choice, None);
    assert!(run.next_settings.is_unset());
}

#[test]
fn run_settings_survive_serialization_and_old_states_load() {
    let agent = Agent::builder(ScriptedLlm::new([])).build().unwrap();
    let run = agent
        .start("hi")
        .with_settings(ModelSettings::new().max_output_tokens(64));
    let json = serde_json::to_value(&run).unwrap();
    assert_eq!(json["settings"]["max_output_tokens"], 64);
    let back: RunState = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, run);
    // A state saved before run settings existed still loads, with none.
    let mut old = json;
    old.as_object_mut().unwrap().remove("settings");
    let back: RunState = serde_json::from_value(old).unwrap();
    assert!(back.settings.is_unset());
}

//! The agent loop's model side: settings in layers, streamed runs, usage totals and
//! limits, typed final output, and the spans of runs and model calls.

#[path = "runtime_tools.rs"]
mod runtime_tools;

use futures::StreamExt;
use runtime_tools::FnTool;
use serde_json::json;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use toolwright_core::{
    Agent, AgentError, AgentResult, Content, LlmClient, Message, ModelSettings, RunOutcome,
    RunState,
    agent::{AgentEvent, RunStream, TypedOutcome, UsageLimit, UsageLimits},
    async_trait,
    llm::{
        AssistantMessage, FinishReason, LlmError, LlmEvent, LlmRequest, LlmStream, ToolCall,
        ToolChoice, Usage, collect_stream,
    },
    run::{PendingKind, RunStatus},
    testing::ScriptedLlm,
    tool::{ApprovalPolicy, ExternalTool},
};

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

/// A client whose streams the test writes: each request takes the next channel, and
/// its answer arrives event by event as the test sends them.
#[derive(Default)]
struct PipeLlm {
    pipes: Mutex<VecDeque<mpsc::UnboundedReceiver<Result<LlmEvent, LlmError>>>>,
    dropped: Arc<AtomicBool>,
}

type Pipe = mpsc::UnboundedSender<Result<LlmEvent, LlmError>>;

impl PipeLlm {
    fn pipe(&self) -> Pipe {
        let (tx, rx) = mpsc::unbounded_channel();
        self.pipes.lock().unwrap().push_back(rx);
        tx
    }
}

/// Sets its flag when the stream holding it is dropped.
struct Guard(Arc<AtomicBool>);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[async_trait]
impl LlmClient for PipeLlm {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        Ok(collect_stream(self.stream(request)).await?)
    }

    fn stream<'a>(&'a self, _request: LlmRequest<'a>) -> LlmStream<'a> {
        let Some(mut rx) = self.pipes.lock().unwrap().pop_front() else {
            return futures::stream::iter([Err(LlmError::other("no pipe"))]).boxed();
        };
        let guard = Guard(self.dropped.clone());
        futures::stream::poll_fn(move |cx| {
            let _held = &guard;
            rx.poll_recv(cx)
        })
        .boxed()
    }
}

fn text(text: &str) -> Result<LlmEvent, LlmError> {
    Ok(LlmEvent::TextDelta { text: text.into() })
}

fn done(message: AssistantMessage) -> Result<LlmEvent, LlmError> {
    Ok(LlmEvent::Done {
        finish_reason: FinishReason::Stop,
        message,
    })
}

async fn next(events: &mut RunStream<'_>) -> AgentEvent {
    tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .expect("an event in time")
        .expect("the stream goes on")
        .expect("no error")
}

// On the paused clock, the 50 ms wait below ends only once every task is idle: had the
// run anything more to yield before the model writes again, it would have by then.
#[tokio::test(start_paused = true)]
async fn a_streamed_run_yields_each_delta_as_it_arrives() {
    let llm = Arc::new(PipeLlm::default());
    let pipe = llm.pipe();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let agent = Agent::builder(llm.clone())
        .on_event(move |e| log.lock().unwrap().push(e))
        .build()
        .unwrap();
    let mut run = agent.start("Hi");
    let mut events = agent.run_stream(&mut run);
    assert!(matches!(
        next(&mut events).await,
        AgentEvent::TurnStarted { turn: 1, .. }
    ));
    pipe.send(text("Hel")).unwrap();
    // The first piece is out while the model is still writing.
    let AgentEvent::ModelDelta { turn: 1, event } = next(&mut events).await else {
        panic!("expected a delta");
    };
    assert_eq!(event, LlmEvent::TextDelta { text: "Hel".into() });
    assert!(
        tokio::time::timeout(Duration::from_millis(50), events.next())
            .await
            .is_err(),
        "nothing more until the model writes more"
    );
    pipe.send(text("lo")).unwrap();
    pipe.send(done(AssistantMessage::text("Hello"))).unwrap();
    let mut rest = Vec::new();
    while let Some(event) = events.next().await {
        rest.push(event.unwrap());
    }
    let types: Vec<String> = rest.iter().map(event_type).collect();
    assert_eq!(types, ["model_delta", "message", "run_finished"]);
    assert_eq!(
        events.outcome(),
        Some(&RunOutcome::Finished {
            answer: "Hello".into()
        })
    );
    drop(events);
    // The agent's sinks got the same events, deltas included.
    let sunk: Vec<String> = seen.lock().unwrap().iter().map(event_type).collect();
    assert_eq!(
        sunk,
        [
            "turn_started",
            "model_delta",
            "model_delta",
            "message",
            "run_finished"
        ]
    );
    assert_eq!(run.answer(), Some("Hello"));
}

fn event_type(event: &AgentEvent) -> String {
    serde_json::to_value(event).unwrap()["type"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn drain(
    mut events: RunStream<'_>,
) -> (Vec<AgentEvent>, Option<AgentError>, Option<RunOutcome>) {
    let mut out = Vec::new();
    while let Some(event) = events.next().await {
        match event {
            Ok(event) => out.push(event),
            Err(error) => return (out, Some(error), events.outcome().cloned()),
        }
    }
    let outcome = events.outcome().cloned();
    (out, None, outcome)
}

#[tokio::test]
async fn a_streamed_run_pauses_for_approval_and_the_resume_streams_too() {
    let llm = ScriptedLlm::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "deploy", json!({"env": "prod"}))]),
        AssistantMessage::text("Deployed."),
    ]);
    let deployed = Arc::new(AtomicBool::new(false));
    let flag = deployed.clone();
    let deploy = ExternalTool::new("deploy", "Deploy.", json!({"type": "object"}));
    let agent = Agent::builder(llm)
        .register_tool(deploy)
        .approval_rule(|_, _| ApprovalPolicy::Required)
        .on_response_received(move |_, output| {
            flag.store(true, Ordering::SeqCst);
            Ok(output)
        })
        .build()
        .unwrap();
    let mut run = agent.start("Deploy");
    let (events, error, outcome) = drain(agent.run_stream(&mut run)).await;
    assert!(error.is_none());
    let types: Vec<String> = events.iter().map(event_type).collect();
    assert_eq!(
        types,
        [
            "turn_started",
            "model_delta",
            "model_delta",
            "model_delta",
            "message",
            "waiting_for_human"
        ]
    );
    let Some(RunOutcome::Paused { pending }) = outcome else {
        panic!("expected a pause, got {outcome:?}");
    };
    assert_eq!(pending[0].kind, PendingKind::Approval);
    assert!(matches!(
        &events[1],
        AgentEvent::ModelDelta { event: LlmEvent::ToolCallStart { name, .. }, .. } if name == "deploy"
    ));

    // Stored and loaded, approved, and streamed again.
    let mut run: RunState = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    run.approve("c1").unwrap();
    let (events, error, outcome) = drain(agent.run_stream(&mut run)).await;
    assert!(error.is_none());
    let Some(RunOutcome::Paused { pending }) = outcome else {
        panic!("an approved external call then waits for its output: {outcome:?}");
    };
    assert_eq!(pending[0].kind, PendingKind::ExternalOutput);
    assert!(events.iter().all(|e| event_type(e) != "model_delta"));
    run.supply_output("c1", vec![Content::text("ok")]).unwrap();
    let (events, error, outcome) = drain(agent.run_stream(&mut run)).await;
    assert!(error.is_none(), "{error:?}");
    assert!(deployed.load(Ordering::SeqCst));
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::ModelDelta { turn: 2, event: LlmEvent::TextDelta { text } } if text == "Deployed."
    )));
    assert_eq!(
        outcome,
        Some(RunOutcome::Finished {
            answer: "Deployed.".into()
        })
    );
}

#[tokio::test]
async fn a_broken_stream_ends_with_its_error_and_the_run_resumes() {
    let llm = Arc::new(PipeLlm::default());
    let broken = llm.pipe();
    broken.send(text("Par")).unwrap();
    broken
        .send(Err(LlmError::BrokenStream {
            message: "connection reset".into(),
            partial: Box::new(AssistantMessage::text("Par")),
        }))
        .unwrap();
    let whole = llm.pipe();
    whole.send(text("Paris.")).unwrap();
    whole.send(done(AssistantMessage::text("Paris."))).unwrap();
    let agent = Agent::builder(llm.clone()).build().unwrap();
    let mut run = agent.start("Capital of France?");

    let (events, error, outcome) = drain(agent.run_stream(&mut run)).await;
    assert_eq!(events.len(), 2, "turn started, one delta: {events:?}");
    assert!(matches!(
        error,
        Some(AgentError::Model(LlmError::BrokenStream { .. }))
    ));
    assert_eq!(outcome, None);
    // Nothing of the broken answer joined the run: it is ready to ask again.
    assert_eq!(run.status, RunStatus::Ready);
    assert_eq!(run.turn, 0);
    assert_eq!(run.messages.len(), 1);

    let (_, error, outcome) = drain(agent.run_stream(&mut run)).await;
    assert!(error.is_none());
    assert_eq!(
        outcome,
        Some(RunOutcome::Finished {
            answer: "Paris.".into()
        })
    );
    assert_eq!(run.turn, 1);
}

#[tokio::test]
async fn dropping_a_run_stream_stops_the_model_call() {
    let llm = Arc::new(PipeLlm::default());
    let pipe = llm.pipe();
    let agent = Agent::builder(llm.clone()).build().unwrap();
    let mut run = agent.start("Hi");
    let mut events = agent.run_stream(&mut run);
    next(&mut events).await;
    pipe.send(text("a")).unwrap();
    next(&mut events).await;
    assert!(!llm.dropped.load(Ordering::SeqCst));
    drop(events);
    // Nothing was spawned: the model's stream went with the run stream.
    assert!(llm.dropped.load(Ordering::SeqCst));
    assert!(pipe.send(text("b")).is_err());
    assert_eq!(run.status, RunStatus::Ready);
}

fn costly_call(id: &str, input: u64, output: u64) -> AssistantMessage {
    let mut message = AssistantMessage::tool_calls([ToolCall::new(id, "echo", json!({}))]);
    message.usage = Some(Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    });
    message
}

/// Three turns each calling `echo` (10 tokens in, 5 out), then an answer.
fn three_calls_then_answer() -> ScriptedLlm {
    ScriptedLlm::new([
        costly_call("c1", 10, 5),
        costly_call("c2", 10, 5),
        costly_call("c3", 10, 5),
        AssistantMessage::text("done"),
    ])
}

async fn run_limited(
    agent_limits: UsageLimits,
    run_limits: UsageLimits,
) -> (RunState, AgentResult<RunOutcome>, Vec<AgentEvent>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let agent = Agent::builder(three_calls_then_answer())
        .register_tool(FnTool::text("echo", "ok"))
        .usage_limits(agent_limits)
        .on_event(move |e| log.lock().unwrap().push(e))
        .build()
        .unwrap();
    let mut run = agent.start("go").with_usage_limits(run_limits);
    let result = agent.run(&mut run).await;
    let events = seen.lock().unwrap().clone();
    (run, result, events)
}

#[tokio::test]
async fn a_run_keeps_usage_totals() {
    let (run, result, _) = run_limited(UsageLimits::new(), UsageLimits::new()).await;
    assert_eq!(
        result.unwrap(),
        RunOutcome::Finished {
            answer: "done".into()
        }
    );
    assert_eq!(run.usage.requests, 4);
    assert_eq!(run.usage.tool_calls, 3);
    assert_eq!(run.usage.tokens.input_tokens, 30);
    assert_eq!(run.usage.tokens.output_tokens, 15);
    // Totals are part of the saved state; a state saved without them loads as zero.
    let mut json = serde_json::to_value(&run).unwrap();
    assert_eq!(json["usage"]["requests"], 4);
    json.as_object_mut().unwrap().remove("usage");
    assert!(
        serde_json::from_value::<RunState>(json)
            .unwrap()
            .usage
            .is_zero()
    );
}

fn limit_error(result: AgentResult<RunOutcome>) -> (UsageLimit, u64, u64, String) {
    match result {
        Err(error @ AgentError::UsageLimit { limit, used, max }) => {
            (limit, used, max, error.to_string())
        }
        other => panic!("expected a usage limit error, got {other:?}"),
    }
}

#[tokio::test]
async fn each_usage_limit_ends_the_run_with_an_error_naming_it() {
    // (limits, which, used, max, requests made, tool calls run): a request limit stops
    // the run before asking; the others once the answer that went over arrives, whose
    // calls then do not run.
    let cases = [
        (
            UsageLimits::new().max_requests(2),
            UsageLimit::Requests,
            3,
            2,
            2,
            2,
        ),
        (
            UsageLimits::new().max_input_tokens(25),
            UsageLimit::InputTokens,
            30,
            25,
            3,
            2,
        ),
        (
            UsageLimits::new().max_output_tokens(9),
            UsageLimit::OutputTokens,
            10,
            9,
            2,
            1,
        ),
        (
            UsageLimits::new().max_tool_calls(1),
            UsageLimit::ToolCalls,
            2,
            1,
            2,
            1,
        ),
    ];
    for (limits, which, used, max, requests, calls_run) in cases {
        let (run, result, events) = run_limited(limits, UsageLimits::new()).await;
        let (limit, got_used, got_max, message) = limit_error(result);
        assert_eq!((limit, got_used, got_max), (which, used, max), "{limits:?}");
        assert_eq!(run.usage.requests, requests, "{which}");
        assert_eq!(run.status, RunStatus::Failed);
        assert!(message.contains(&which.to_string()), "{message}");
        assert!(message.contains(&format!("{used}")) && message.contains(&format!("{max}")));
        assert_eq!(run.error.as_deref(), Some(message.as_str()));
        assert!(
            matches!(events.last(), Some(AgentEvent::RunFailed { error }) if *error == message)
        );
        let ran = events
            .iter()
            .filter(|e| matches!(e, AgentEvent::ToolStarted { .. }))
            .count() as u64;
        assert_eq!(ran, calls_run, "{which}");
    }
    let (limit, ..) = limit_error(
        run_limited(UsageLimits::new().max_requests(2), UsageLimits::new())
            .await
            .1,
    );
    assert_eq!(limit.to_string(), "model requests");
}

#[tokio::test]
async fn the_lower_of_the_agents_and_the_runs_limits_applies() {
    let (_, result, _) = run_limited(
        UsageLimits::new().max_tool_calls(5),
        UsageLimits::new().max_tool_calls(1),
    )
    .await;
    assert_eq!(limit_error(result).2, 1);
    let (_, result, _) = run_limited(
        UsageLimits::new().max_requests(1),
        UsageLimits::new().max_requests(9),
    )
    .await;
    assert_eq!(limit_error(result).2, 1);
    // Limits the run stays within change nothing.
    let (run, result, _) = run_limited(
        UsageLimits::new().max_requests(4),
        UsageLimits::new().max_input_tokens(30).max_tool_calls(3),
    )
    .await;
    assert!(result.is_ok());
    assert_eq!(run.status, RunStatus::Finished);
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Forecast {
    city: String,
    celsius: i32,
}

fn forecast_agent(answers: &[&str], retries: u32) -> (Agent, Arc<ScriptedLlm>) {
    let llm = Arc::new(ScriptedLlm::new(
        answers.iter().map(|a| AssistantMessage::text(*a)),
    ));
    let agent = Agent::builder(llm.clone())
        .output_retries(retries)
        .build()
        .unwrap();
    (agent, llm)
}

#[tokio::test]
async fn typed_output_valid_on_the_first_try() {
    let (agent, llm) = forecast_agent(&[r#"{"city": "Paris", "celsius": 18}"#], 1);
    let mut run = agent.start("Weather in Paris?");
    let out = agent.run_typed::<Forecast>(&mut run).await.unwrap();
    assert_eq!(
        out,
        TypedOutcome::Finished(Forecast {
            city: "Paris".into(),
            celsius: 18
        })
    );
    let request = &llm.requests()[0];
    let output = request.output.as_ref().expect("the schema was sent");
    assert_eq!(output.name, "Forecast");
    assert_eq!(output.schema["properties"]["celsius"]["type"], "integer");
    assert_eq!(output.schema["required"], json!(["city", "celsius"]));
}

#[tokio::test]
async fn typed_output_is_repaired_on_the_second_try() {
    let (agent, llm) = forecast_agent(
        &[
            r#"{"city": "Paris", "celsius": "warm"}"#,
            "```json\n{\"city\": \"Paris\", \"celsius\": 18}\n```",
        ],
        1,
    );
    let mut run = agent.start("Weather in Paris?");
    let out = agent.run_typed::<Forecast>(&mut run).await.unwrap();
    assert!(matches!(
        out,
        TypedOutcome::Finished(Forecast { celsius: 18, .. })
    ));
    // The second request carried what was wrong with the first answer.
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    let Some(Message::User { content }) = requests[1].messages.last() else {
        panic!("expected the repair request");
    };
    assert!(
        content.contains("invalid type: string \"warm\", expected i32"),
        "{content}"
    );
    assert!(content.contains("`Forecast`"), "{content}");
    assert!(requests[1].output.is_some());
    assert_eq!(run.status, RunStatus::Finished);
}

#[tokio::test]
async fn typed_output_gives_up_after_the_retry_limit() {
    let (agent, llm) = forecast_agent(
        &[
            "It is 18 degrees.",
            r#"{"city": "Paris"}"#,
            r#"{"city": "Paris", "celsius": 18, "wind": 3}"#,
            r#"{"city": "Paris", "celsius": 18}"#,
        ],
        2,
    );
    let mut run = agent.start("Weather in Paris?");
    let error = agent.run_typed::<Forecast>(&mut run).await.unwrap_err();
    let AgentError::InvalidOutput { attempts, reason } = &error else {
        panic!("expected an output error, got {error:?}");
    };
    assert_eq!(*attempts, 3);
    assert!(reason.contains("unknown field `wind`"), "{reason}");
    assert!(error.to_string().contains("after 3 attempt(s)"));
    assert_eq!(llm.requests().len(), 3, "no fourth request");
    assert_eq!(llm.remaining(), 1);
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.error.as_deref(), Some(error.to_string().as_str()));
}

#[tokio::test]
async fn a_user_message_with_an_image_restarts_the_turn_count() {
    let llm = Arc::new(ScriptedLlm::new([AssistantMessage::text("A cat.")]));
    let agent = Agent::builder(llm.clone()).max_turns(1).build().unwrap();
    // One turn was spent answering the first message; the image is a new question.
    let mut run = RunState::new(vec![
        Message::user("Hi"),
        Message::Assistant(AssistantMessage::text("Hello.")),
        Message::user_content([
            Content::text("What is this?"),
            Content::image("AAAA", "image/png"),
        ]),
    ]);
    let outcome = agent.run(&mut run).await.unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            answer: "A cat.".into()
        }
    );
    assert_eq!(llm.requests().len(), 1);
}

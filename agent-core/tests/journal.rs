//! `Agent::run_journaled`: each model call and each tool call goes through the journal,
//! and a run replayed with the journal's records asks the model and runs the tools for
//! none of the steps recorded, only for the first one that was not.

use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use toolwright_core::exec::RunControl;
use toolwright_core::llm::{AssistantMessage, LlmClient, LlmRequest, Message, ToolCall};
use toolwright_core::run::{Journal, JournalStep};
use toolwright_core::tool::ToolCallResult;
use toolwright_core::{Agent, AgentError, AgentResult, RunOutcome, tool, tools};

static TOOL_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Add one to a number.
#[tool]
async fn bump(n: i64) -> i64 {
    TOOL_RUNS.fetch_add(1, Ordering::SeqCst);
    n + 1
}

/// Calls `bump` twice in one turn, then answers with what the tools said.
struct Model(AtomicUsize);

#[async_trait::async_trait]
impl LlmClient for Model {
    async fn complete(&self, request: LlmRequest<'_>) -> AgentResult<AssistantMessage> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let results: Vec<String> = request
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::Tool(result) => {
                    Some(serde_json::to_string(&result.content).unwrap_or_default())
                }
                _ => None,
            })
            .collect();
        if results.is_empty() {
            return Ok(AssistantMessage::tool_calls([
                ToolCall::new("a", "bump", json!({"n": 1})),
                ToolCall::new("b", "bump", json!({"n": 10})),
            ]));
        }
        Ok(AssistantMessage::text(results.join(" ")))
    }
}

/// Records each step's result as JSON; replays the records in order; stops the run
/// (as a crash would) once `budget` steps have run.
#[derive(Default)]
struct Recorder {
    records: Mutex<Vec<Value>>,
    replayed: AtomicUsize,
    budget: Option<usize>,
    names: Mutex<Vec<String>>,
}

impl Recorder {
    async fn step<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        name: String,
        step: JournalStep<T>,
    ) -> AgentResult<T> {
        let index = self.replayed.fetch_add(1, Ordering::SeqCst);
        self.names.lock().unwrap().push(name);
        if let Some(record) = self.records.lock().unwrap().get(index).cloned() {
            return Ok(serde_json::from_value(record).expect("a recorded step reads back"));
        }
        if self.budget.is_some_and(|budget| index >= budget) {
            return Err(AgentError::Journal("the worker died".to_owned()));
        }
        let value = step.await;
        self.records
            .lock()
            .unwrap()
            .push(serde_json::to_value(&value).expect("a step's result serializes"));
        Ok(value)
    }
}

#[async_trait::async_trait]
impl Journal for Recorder {
    async fn model_call(
        &self,
        turn: u32,
        step: JournalStep<AgentResult<AssistantMessage>>,
    ) -> AgentResult<AssistantMessage> {
        // The recorder keeps the answer; a failed call is not recorded.
        let answer = self
            .step(
                format!("model {turn}"),
                Box::pin(async move { step.await.map_err(|e| e.to_string()) }),
            )
            .await?;
        answer.map_err(AgentError::Journal)
    }

    async fn tool_call(
        &self,
        call: &ToolCall,
        step: JournalStep<ToolCallResult>,
    ) -> AgentResult<ToolCallResult> {
        self.step(format!("tool {}", call.id), step).await
    }
}

#[tokio::test]
async fn a_replayed_run_repeats_no_recorded_step() {
    let agent = Agent::builder(Model(AtomicUsize::new(0)))
        .tools(tools![bump])
        .build()
        .unwrap();

    // The first worker dies after the model's answer and the first call.
    let first = Recorder {
        budget: Some(2),
        ..Recorder::default()
    };
    let mut run = agent.start("bump");
    let died = agent
        .run_journaled(&mut run, &RunControl::new(), &first)
        .await;
    assert!(matches!(died, Err(AgentError::Journal(_))), "{died:?}");
    assert_eq!(TOOL_RUNS.load(Ordering::SeqCst), 1);
    assert_eq!(
        *first.names.lock().unwrap(),
        ["model 1", "tool a", "tool b"]
    );

    // The next replays from the start with the records: the model's first answer and
    // call `a` come from them; only `b` and the final answer are done.
    let second = Recorder {
        records: Mutex::new(first.records.into_inner().unwrap()),
        ..Recorder::default()
    };
    let mut run = agent.start("bump");
    let outcome = agent
        .run_journaled(&mut run, &RunControl::new(), &second)
        .await
        .unwrap();
    assert_eq!(TOOL_RUNS.load(Ordering::SeqCst), 2, "each call ran once");
    assert_eq!(
        *second.names.lock().unwrap(),
        ["model 1", "tool a", "tool b", "model 2"],
        "one step per model call and per tool call, in order"
    );
    let RunOutcome::Finished { answer } = outcome else {
        panic!("{outcome:?}")
    };
    assert!(answer.contains('2') && answer.contains("11"), "{answer}");
}

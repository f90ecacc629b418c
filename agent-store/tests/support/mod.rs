//! One suite for every store: each function takes a store (and a way to run SQL on its
//! database, for the tamper tests) and checks one behaviour. `store_suite!` makes a test
//! of each.

#![allow(dead_code)]

use serde_json::json;
use std::future::Future;
use std::io::Write as _;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use toolwright_core::{
    Agent, AgentResult, Message, RunOutcome, RunState, RunStore, State, ToolContext,
    agent::AgentBuilder,
    llm::{AssistantMessage, LlmRequest, ToolCall},
    run::{RunStatus, StoreError},
    testing::FnLlm,
    tool, tools,
};

pub const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

/// Runs one SQL statement on the store's database, behind the store's back.
pub type Sql = Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// A store under test, and raw access to its database.
pub struct Target {
    pub store: Arc<dyn RunStore>,
    pub sql: Sql,
}

/// What the tools did, in order: `tool key` lines, where key is the call's idempotency
/// key. With a file, each line also goes there (for a process that is killed).
#[derive(Clone, Default)]
pub struct Ledger {
    entries: Arc<Mutex<Vec<String>>>,
    file: Option<PathBuf>,
}

impl Ledger {
    pub fn to_file(path: PathBuf) -> Self {
        Self {
            entries: Arc::default(),
            file: Some(path),
        }
    }

    fn record(&self, line: String) {
        if let Some(path) = &self.file {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            writeln!(file, "{line}").unwrap();
            file.sync_all().unwrap();
        }
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }

    pub fn entries(&self) -> Vec<String> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Pay `amount` to `account`.
#[tool(require_approval)]
async fn pay(
    /// The account to pay
    account: String,
    /// How much
    amount: u32,
    ledger: State<Ledger>,
    ctx: &ToolContext,
) -> String {
    ledger.record(format!("pay {account} {amount} {}", ctx.idempotency_key()));
    format!("paid {amount} to {account}")
}

/// Do step `n`.
#[tool]
async fn step(
    /// Which step
    n: u32,
    ledger: State<Ledger>,
    ctx: &ToolContext,
) -> String {
    ledger.record(format!("step {n} {}", ctx.idempotency_key()));
    format!("step {n} done")
}

/// The model: "pay" asks to pay ACME-1 100, then says "Paid."; "steps" calls `step` 1,
/// then 2 (one per turn), then says "Done.". It reads only the conversation, so a run
/// resumed anywhere goes on the same way.
fn model(request: &LlmRequest<'_>) -> AgentResult<AssistantMessage> {
    let messages = request.messages;
    let user_at = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
        .unwrap_or(0);
    let said = match &messages[user_at] {
        Message::User { content } => content.to_lowercase(),
        _ => String::new(),
    };
    let results = messages[user_at..]
        .iter()
        .filter(|m| matches!(m, Message::Tool(_)))
        .count();
    Ok(if said.contains("steps") && results < 2 {
        let n = results + 1;
        AssistantMessage::tool_calls([ToolCall::new(format!("s{n}"), "step", json!({"n": n}))])
    } else if said.contains("pay") && results == 0 {
        AssistantMessage::tool_calls([ToolCall::new(
            "c1",
            "pay",
            json!({"account": "ACME-1", "amount": 100}),
        )])
    } else if said.contains("steps") {
        AssistantMessage::text("Done.")
    } else {
        AssistantMessage::text("Paid.")
    })
}

pub fn builder(ledger: &Ledger) -> AgentBuilder {
    Agent::builder(FnLlm(model))
        .tools(tools![pay, step])
        .state(ledger.clone())
        .state_key(KEY)
}

pub fn agent(ledger: &Ledger) -> Agent {
    builder(ledger).build().unwrap()
}

/// A run paused on the payment, saved.
pub async fn saved_payment(store: &dyn RunStore, agent: &Agent) -> RunState {
    let mut run = agent.start("Pay ACME their invoice");
    let outcome = agent.run(&mut run).await.unwrap();
    assert!(matches!(outcome, RunOutcome::Paused { .. }), "{outcome:?}");
    store.save_run(agent, &mut run).await.unwrap();
    run
}

fn is_conflict(result: &Result<(), StoreError>, expected: u64, found: Option<u64>) -> bool {
    matches!(
        result,
        Err(StoreError::Conflict { expected: e, found: f, .. }) if *e == expected && *f == found
    )
}

pub async fn saves_and_loads(target: Target) {
    let store = &*target.store;
    let agent = agent(&Ledger::default());
    let run = saved_payment(store, &agent).await;
    assert_eq!(run.revision, 1);
    let record = store.load(&run.run_id).await.unwrap().unwrap();
    assert_eq!(record.revision, 1);
    assert_eq!(record.status, RunStatus::WaitingForHuman);
    assert_eq!(record.session_id, run.session_id);
    assert_eq!(record.state, agent.export_state(&run));
    assert_eq!(
        store.load_run(&agent, &run.run_id).await.unwrap(),
        Some(run)
    );
    assert_eq!(store.load("run_that_was_never_saved").await.unwrap(), None);
}

pub async fn a_stale_save_is_a_conflict_and_changes_nothing(target: Target) {
    let store = &*target.store;
    let agent = agent(&Ledger::default());
    let mut first = agent.start("Pay ACME");
    let mut second = first.clone();
    store.save_run(&agent, &mut first).await.unwrap();
    let lost = store.save_run(&agent, &mut second).await;
    assert!(is_conflict(&lost, 0, Some(1)), "{lost:?}");
    assert_eq!(second.revision, 0, "a failed save leaves the revision");

    let mut stale = first.clone();
    store.save_run(&agent, &mut first).await.unwrap();
    assert_eq!(first.revision, 2);
    stale.push_user("changed my mind").unwrap();
    let lost = store.save_run(&agent, &mut stale).await;
    assert!(is_conflict(&lost, 1, Some(2)), "{lost:?}");
    let stored = store
        .load_run(&agent, &first.run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, first, "the stale save changed nothing");
}

pub async fn waiting_lists_the_paused_runs_only(target: Target) {
    let store = &*target.store;
    let ledger = Ledger::default();
    let agent = agent(&ledger);
    let mut paused = saved_payment(store, &agent).await;
    let mut finished = agent.start("Say hello");
    agent.run(&mut finished).await.unwrap();
    store.save_run(&agent, &mut finished).await.unwrap();

    let ids = |list: Vec<toolwright_core::run::WaitingRun>| -> Vec<String> {
        list.into_iter().map(|w| w.run_id).collect()
    };
    let waiting = ids(store.waiting().await.unwrap());
    assert!(waiting.contains(&paused.run_id));
    assert!(!waiting.contains(&finished.run_id));

    paused.approve("c1").unwrap();
    store.save_run(&agent, &mut paused).await.unwrap();
    agent.run(&mut paused).await.unwrap();
    store.save_run(&agent, &mut paused).await.unwrap();
    assert!(!ids(store.waiting().await.unwrap()).contains(&paused.run_id));
    assert_eq!(ledger.entries().len(), 1);
}

pub async fn delete_takes_the_current_revision_only(target: Target) {
    let store = &*target.store;
    let agent = agent(&Ledger::default());
    let mut run = agent.start("Pay ACME");
    store.save_run(&agent, &mut run).await.unwrap();
    store.save_run(&agent, &mut run).await.unwrap();
    let stale = store.delete(&run.run_id, 1).await;
    assert!(is_conflict(&stale, 1, Some(2)), "{stale:?}");
    store.delete(&run.run_id, 2).await.unwrap();
    assert_eq!(store.load(&run.run_id).await.unwrap(), None);
    let gone = store.delete(&run.run_id, 2).await;
    assert!(is_conflict(&gone, 2, None), "{gone:?}");
}

/// Two processes load the same paused run, approve it and race to resume it: the save
/// before running is the claim, so exactly one runs it, and the payment is made once.
pub async fn two_resumers_race_and_exactly_one_wins(target: Target) {
    for _ in 0..10 {
        let ledger = Ledger::default();
        let agent = Arc::new(agent(&ledger));
        let run = saved_payment(&*target.store, &agent).await;
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let resumers = (0..2).map(|_| {
            let (store, agent, barrier) = (target.store.clone(), agent.clone(), barrier.clone());
            let run_id = run.run_id.clone();
            tokio::spawn(async move {
                let mut run = store.load_run(&agent, &run_id).await.unwrap().unwrap();
                run.approve("c1").unwrap();
                barrier.wait().await;
                match store.save_run(&agent, &mut run).await {
                    Ok(()) => {}
                    Err(StoreError::Conflict { .. }) => return false,
                    Err(other) => panic!("{other}"),
                }
                let outcome = agent.run(&mut run).await.unwrap();
                assert!(matches!(outcome, RunOutcome::Finished { .. }));
                store.save_run(&agent, &mut run).await.unwrap();
                true
            })
        });
        let mut winners = 0;
        for resumer in resumers.collect::<Vec<_>>() {
            winners += usize::from(resumer.await.unwrap());
        }
        assert_eq!(winners, 1, "exactly one resumer wins");
        assert_eq!(ledger.entries().len(), 1, "the payment is made once");
        let stored = target
            .store
            .load_run(&agent, &run.run_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.status, RunStatus::Finished);
    }
}

/// Edits made directly in the database's row are refused on load: the arguments of the
/// call waiting for approval, its approval, the history, the revision column, and the
/// sealed state of another run copied in.
pub async fn rows_edited_in_sql_are_refused(target: Target) {
    let store = &*target.store;
    let agent = agent(&Ledger::default());
    let edits = [
        (
            "arguments",
            "state = replace(state, '\"ACME-1\"', '\"EVIL-9\"')",
        ),
        (
            "approval",
            "state = replace(state, '\"awaiting_approval\"', '\"approved\"')",
        ),
        ("history", "state = replace(state, 'Pay ACME', 'Pay EVIL')"),
        ("revision", "revision = revision + 1"),
    ];
    for (what, set) in edits {
        let run = saved_payment(store, &agent).await;
        (target.sql)(format!(
            "UPDATE agent_runs SET {set} WHERE run_id = '{}'",
            run.run_id
        ))
        .await;
        let record = store.load(&run.run_id).await.unwrap().unwrap();
        assert_ne!(record.state.len(), 0);
        match store.load_run(&agent, &run.run_id).await {
            Err(StoreError::State(error)) => {
                assert!(error.to_string().contains("refused"), "{what}: {error}")
            }
            other => panic!("{what}: the edited row was accepted: {other:?}"),
        }
    }

    // Another run's sealed state, with its own valid seal, put in this run's row.
    let victim = saved_payment(store, &agent).await;
    let other = saved_payment(store, &agent).await;
    (target.sql)(format!(
        "UPDATE agent_runs SET state = (SELECT state FROM agent_runs WHERE run_id = '{}') WHERE run_id = '{}'",
        other.run_id, victim.run_id
    ))
    .await;
    let refused = store.load_run(&agent, &victim.run_id).await;
    assert!(matches!(refused, Err(StoreError::State(_))), "{refused:?}");
}

/// The same edits made to the stored JSON, on its way back from the store.
pub async fn stored_json_edited_is_refused(target: Target) {
    let store = &*target.store;
    let agent = agent(&Ledger::default());
    let run = saved_payment(store, &agent).await;
    let record = store.load(&run.run_id).await.unwrap().unwrap();
    for (from, to) in [
        ("\"ACME-1\"", "\"EVIL-9\""),
        ("\"awaiting_approval\"", "\"approved\""),
        ("Pay ACME", "Pay EVIL"),
    ] {
        let mut edited = record.clone();
        edited.state = edited.state.replacen(from, to, 1);
        assert_ne!(edited.state, record.state);
        assert!(
            edited.import(&agent).is_err(),
            "`{from}` -> `{to}` accepted"
        );
    }
    assert_eq!(record.import(&agent).unwrap(), run);
}

/// 1,000 runs saved and loaded at once: none lost, none mixed up.
pub async fn a_thousand_concurrent_runs_are_saved_and_loaded(target: Target) {
    let agent = Arc::new(agent(&Ledger::default()));
    let tasks: Vec<_> = (0..1000)
        .map(|i| {
            let (store, agent) = (target.store.clone(), agent.clone());
            tokio::spawn(async move {
                let mut run = agent.start(format!("Request number {i}"));
                store.save_run(&agent, &mut run).await.unwrap();
                let loaded = store.load_run(&agent, &run.run_id).await.unwrap();
                assert_eq!(loaded.as_ref(), Some(&run));
                run
            })
        })
        .collect();
    let mut runs = Vec::with_capacity(tasks.len());
    for task in tasks {
        runs.push(task.await.unwrap());
    }
    for (i, run) in runs.iter().enumerate() {
        let loaded = target
            .store
            .load_run(&agent, &run.run_id)
            .await
            .unwrap()
            .unwrap();
        let Message::User { content } = &loaded.messages[0] else {
            panic!("{loaded:?}")
        };
        assert_eq!(content, &format!("Request number {i}"));
    }
}

/// With checkpoints to the store, every step is saved as it ends; a process that lost
/// the run to another stops at its next checkpoint, before the next tool.
pub async fn checkpoints_save_every_step_and_stop_a_process_that_lost_the_run(target: Target) {
    let ledger = Ledger::default();
    let checkpointed = builder(&ledger)
        .checkpoints(target.store.clone())
        .build()
        .unwrap();
    let agent = &checkpointed;
    let mut run = agent.start("Do the steps");
    let outcome = agent.run(&mut run).await.unwrap();
    assert_eq!(
        outcome,
        RunOutcome::Finished {
            answer: "Done.".into()
        }
    );
    // Answer with s1, its result, answer with s2, its result, the final answer.
    assert_eq!(run.revision, 5);
    let stored = target
        .store
        .load_run(agent, &run.run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, run);

    // Another process saves the run behind this one's back: this one stops.
    let plain = self::agent(&ledger);
    let mut run = agent.start("Do the steps");
    let mut theirs = run.clone();
    target.store.save_run(&plain, &mut theirs).await.unwrap();
    let error = agent.run(&mut run).await.unwrap_err();
    assert!(error.to_string().contains("another process"), "{error}");
    assert_eq!(ledger.entries().len(), 2, "only the first run's steps ran");
}

/// The server's URL. A missing `DATABASE_URL` fails the test wherever it runs, so a
/// machine without Postgres cannot pass the suite by skipping it; the person running the
/// tests opts out by name with `TOOLWRIGHT_SKIP_SERVICES=postgres` (then `None`, after a
/// notice).
pub fn database_url() -> Option<String> {
    if let Ok(url) = std::env::var("DATABASE_URL")
        && !url.is_empty()
    {
        return Some(url);
    }
    if skipped_by_name("postgres") {
        // Straight to stderr: the test harness hides eprintln! of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: TOOLWRIGHT_SKIP_SERVICES names postgres"
        );
        return None;
    }
    panic!(
        "DATABASE_URL is not set: the Postgres store tests need a server \
         (eval \"$(bash scripts/postgres.sh)\" starts one; scripts/test.sh does it for you), \
         or TOOLWRIGHT_SKIP_SERVICES=postgres to skip them by name"
    )
}

/// The folder of the server `scripts/postgres.sh` started (its `AGENT_STORE_PG_DIR`
/// export): its TLS files, and what restarts it. Called once [`database_url`] gave a URL.
pub fn server_dir() -> PathBuf {
    match std::env::var_os("AGENT_STORE_PG_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => panic!(
            "AGENT_STORE_PG_DIR is not set: these tests use the server scripts/postgres.sh \
             starts (its TLS certificates, its restart command); eval \"$(bash scripts/postgres.sh)\" \
             sets it and DATABASE_URL, or TOOLWRIGHT_SKIP_SERVICES=postgres skips them"
        ),
    }
}

/// Whether the comma-separated `TOOLWRIGHT_SKIP_SERVICES` names `service`.
fn skipped_by_name(service: &str) -> bool {
    std::env::var("TOOLWRIGHT_SKIP_SERVICES")
        .is_ok_and(|names| names.split(',').any(|name| name.trim() == service))
}

/// One `#[tokio::test]` per suite function, for the store `$target` (an async block
/// giving an `Option<Target>`: `None` skips).
#[macro_export]
macro_rules! store_suite {
    ($target:expr) => {
        $crate::store_suite!(@tests $target;
            saves_and_loads,
            a_stale_save_is_a_conflict_and_changes_nothing,
            waiting_lists_the_paused_runs_only,
            delete_takes_the_current_revision_only,
            two_resumers_race_and_exactly_one_wins,
            rows_edited_in_sql_are_refused,
            stored_json_edited_is_refused,
            a_thousand_concurrent_runs_are_saved_and_loaded,
            checkpoints_save_every_step_and_stop_a_process_that_lost_the_run,
        );
    };
    (@tests $target:expr; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                if let Some(target) = $target.await {
                    support::$name(target).await;
                }
            }
        )*
    };
}

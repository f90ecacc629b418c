//! A process killed right after a checkpoint, and the run resumed by another process:
//! every tool call runs exactly once. The test binary plays both processes: run with
//! `AGENT_STORE_CHILD` set, the test is a child doing one part and nothing else.

mod support;

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use support::{Ledger, builder, database_url};
use toolwright_core::{
    AgentResult, RunOutcome, RunStore, async_trait,
    run::{Checkpoint, Checkpointer, RunRecord, RunStatus},
};
use toolwright_store::{PostgresStore, SqliteStore};

const CHILD: &str = "AGENT_STORE_CHILD";
const TEST: &str = "a_process_killed_after_a_checkpoint_resumes_elsewhere_and_no_tool_runs_twice";

/// Saves each checkpoint, then, at revision `die_at`, says so on stdout and hangs until
/// it is killed.
struct SaveThenHang {
    store: Arc<dyn RunStore>,
    die_at: u64,
}

#[async_trait]
impl Checkpointer for SaveThenHang {
    async fn checkpoint(&self, checkpoint: Checkpoint<'_>) -> AgentResult<()> {
        let revision = checkpoint.state.revision;
        self.store.save(&RunRecord::from(checkpoint)).await?;
        if revision == self.die_at {
            let mut out = std::io::stdout();
            // On a line of its own: the harness has begun one ("test ... ").
            writeln!(out, "\ncheckpointed {revision}").unwrap();
            out.flush().unwrap();
            std::future::pending::<()>().await;
        }
        Ok(())
    }
}

async fn open(kind: &str, location: &str) -> Arc<dyn RunStore> {
    match kind {
        "sqlite" => Arc::new(SqliteStore::open(location).await.unwrap()),
        _ => Arc::new(PostgresStore::connect(location).await.unwrap()),
    }
}

/// What a child does: `start` runs a new run until it hangs at a checkpoint; `resume`
/// loads the run, claims it, and runs it to its end.
fn child(role: &str) {
    let var = |name: &str| std::env::var(name).unwrap();
    let (kind, location, run_id) = (var("STORE_KIND"), var("STORE_AT"), var("RUN_ID"));
    let ledger = Ledger::to_file(PathBuf::from(var("LEDGER")));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = open(&kind, &location).await;
        if role == "start" {
            let hang = SaveThenHang {
                store,
                die_at: var("DIE_AT").parse().unwrap(),
            };
            let agent = builder(&ledger).on_checkpoint(hang).build().unwrap();
            let mut run = agent.start("Do the steps");
            run.run_id = run_id;
            agent.run(&mut run).await.unwrap();
            panic!("the run ended without reaching its last checkpoint");
        }
        let agent = builder(&ledger).checkpoints(store.clone()).build().unwrap();
        let mut run = store.load_run(&agent, &run_id).await.unwrap().unwrap();
        store.save_run(&agent, &mut run).await.unwrap();
        let outcome = agent.run(&mut run).await.unwrap();
        assert_eq!(
            outcome,
            RunOutcome::Finished {
                answer: "Done.".into()
            }
        );
        println!("finished");
    });
}

fn spawn(role: &str, env: &[(&str, String)]) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD, role)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().unwrap()
}

fn ledger_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// For each checkpoint of a two-step run (the model's answer and the tool's result, for
/// each step), a process is killed with SIGKILL just after it and another resumes.
fn kill_and_resume(kind: &str, location: &str) {
    let dir = std::env::temp_dir().join(format!("agent-store-durable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for die_at in 1..=4u64 {
        let run_id = format!(
            "run_durable_{kind}_{}_{die_at}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        let ledger = dir.join(format!("{kind}-{die_at}.ledger"));
        let _ = std::fs::remove_file(&ledger);
        let env = [
            ("STORE_KIND", kind.to_owned()),
            ("STORE_AT", location.to_owned()),
            ("RUN_ID", run_id.clone()),
            ("LEDGER", ledger.display().to_string()),
            ("DIE_AT", die_at.to_string()),
        ];

        let mut first = spawn("start", &env);
        // The test harness prints its own lines first.
        let said = BufReader::new(first.stdout.take().unwrap())
            .lines()
            .map(Result::unwrap)
            .find(|line| line.starts_with("checkpointed"));
        assert_eq!(said, Some(format!("checkpointed {die_at}")));
        first.kill().unwrap(); // SIGKILL
        first.wait().unwrap();

        let second = spawn("resume", &env);
        let output = second.wait_with_output().unwrap();
        assert!(output.status.success(), "the resuming process failed");
        assert!(String::from_utf8_lossy(&output.stdout).contains("finished"));

        let lines = ledger_lines(&ledger);
        assert_eq!(
            lines,
            [format!("step 1 {run_id}:s1"), format!("step 2 {run_id}:s2")],
            "killed at checkpoint {die_at}: each step ran once, with its idempotency key"
        );
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let record = runtime.block_on(async {
            open(kind, location)
                .await
                .load(&run_id)
                .await
                .unwrap()
                .unwrap()
        });
        assert_eq!(record.status, RunStatus::Finished);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_process_killed_after_a_checkpoint_resumes_elsewhere_and_no_tool_runs_twice() {
    if let Ok(role) = std::env::var(CHILD) {
        return child(&role);
    }
    let dir = std::env::temp_dir().join(format!("agent-store-durable-db-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    kill_and_resume("sqlite", &path.display().to_string());
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(url) = database_url() {
        kill_and_resume("postgres", &url);
    }
}

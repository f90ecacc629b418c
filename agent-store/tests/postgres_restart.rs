//! `PostgresStore` across restarts of the real server (`scripts/postgres.sh restart`)
//! under a running workload: a fast shutdown (every session cut, then a clean stop) and
//! an immediate one (as a crash: the server recovers from its WAL). Alone in its binary,
//! one test running both in turn: a restart cuts every connection of the process.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use support::{database_url, server_dir};
use tokio::sync::mpsc;
use toolwright_core::{
    RunStore,
    run::{RunRecord, RunStatus},
};
use toolwright_store::PostgresStore;

const WORKERS: usize = 8;
/// Saves each worker makes before the restart begins.
const BEFORE: u64 = 10;
/// Saves each worker makes once the restart is over.
const AFTER: u64 = 30;

const PHASE_BEFORE: u8 = 0;
const PHASE_DURING: u8 = 1;
const PHASE_AFTER: u8 = 2;

/// What one worker saw.
#[derive(Debug, Default)]
struct Tally {
    run_id: String,
    /// The revision the worker last knew to be stored.
    revision: u64,
    /// Saves that returned `Ok`.
    ok: u64,
    /// Saves that returned an error, and of those, the ones found applied after all.
    failed: Vec<String>,
    applied_despite_error: u64,
    /// Saves begun while the server was restarting.
    during: u64,
    /// Saves begun after the restart, and of those, the ones that failed.
    after: u64,
    failed_after: Vec<String>,
}

fn record(run_id: &str, revision: u64) -> RunRecord {
    RunRecord {
        run_id: run_id.to_owned(),
        session_id: "restart".to_owned(),
        status: RunStatus::Ready,
        revision,
        state: format!("{run_id} at revision {revision}"),
    }
}

/// Saves revision after revision of one run, as an application would: after an error, it
/// loads the run to learn whether the save was applied, and goes on from there.
async fn worker(
    store: Arc<PostgresStore>,
    run_id: String,
    phase: Arc<AtomicU8>,
    warmed_up: mpsc::Sender<()>,
) -> Tally {
    let mut tally = Tally {
        run_id: run_id.clone(),
        ..Tally::default()
    };
    while tally.after < AFTER {
        let started_in = phase.load(Ordering::SeqCst);
        let next = tally.revision + 1;
        let result = store.save(&record(&run_id, next)).await;
        match started_in {
            PHASE_DURING => tally.during += 1,
            PHASE_AFTER => tally.after += 1,
            _ => {}
        }
        match result {
            Ok(()) => {
                tally.ok += 1;
                tally.revision = next;
                if next == BEFORE {
                    warmed_up.send(()).await.unwrap();
                }
            }
            Err(error) => {
                let error = error.to_string();
                assert!(error.contains("saving a run"), "{error}");
                if started_in == PHASE_AFTER {
                    tally.failed_after.push(error.clone());
                }
                tally.failed.push(error);
                let stored = load_after_error(&store, &run_id).await;
                if stored == Some(record(&run_id, next)) {
                    tally.applied_despite_error += 1;
                    tally.revision = next;
                } else {
                    let before = (next > 1).then(|| record(&run_id, next - 1));
                    assert_eq!(
                        stored, before,
                        "after a failed save of revision {next}, the store holds neither it nor the one before"
                    );
                }
            }
        }
    }
    tally
}

/// The run as stored, once the store answers again (it waits for the server itself; a
/// load cut in flight is tried again, as reading is harmless).
async fn load_after_error(store: &PostgresStore, run_id: &str) -> Option<RunRecord> {
    let mut errors = Vec::new();
    while errors.len() < 20 {
        match store.load(run_id).await {
            Ok(stored) => return stored,
            Err(error) => errors.push(error.to_string()),
        }
    }
    panic!("the store never answered again: {errors:#?}")
}

fn restart(dir: &Path, mode: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres.sh");
    let output = std::process::Command::new("bash")
        .arg(script)
        .arg("restart")
        .arg(mode)
        .env("AGENT_STORE_PG_DIR", dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "scripts/postgres.sh restart {mode}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

async fn raw_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

async fn server_started_at(url: &str) -> String {
    raw_client(url)
        .await
        .query_one("SELECT pg_postmaster_start_time()::TEXT", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_under_load_loses_nothing_writes_nothing_twice_and_every_later_save_succeeds() {
    let Some((url, dir)) = database_url().map(|url| (url, server_dir())) else {
        return;
    };
    // The defaults a user gets; one store through both restarts.
    let store = Arc::new(PostgresStore::connect(&url).await.unwrap());
    for mode in ["fast", "immediate"] {
        restart_under_load(&store, &url, &dir, mode).await;
    }
}

/// Restarts the server (`mode`) while workers save through `store`, and checks what
/// they saw against what is stored.
async fn restart_under_load(store: &Arc<PostgresStore>, url: &str, dir: &Path, mode: &'static str) {
    let dir = dir.to_owned();
    let prefix = format!(
        "restart-{mode}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let phase = Arc::new(AtomicU8::new(PHASE_BEFORE));
    let (warmed_up, mut warm) = mpsc::channel(WORKERS);
    let workers: Vec<_> = (0..WORKERS)
        .map(|i| {
            tokio::spawn(worker(
                store.clone(),
                format!("{prefix}-{i}"),
                phase.clone(),
                warmed_up.clone(),
            ))
        })
        .collect();
    drop(warmed_up);
    for _ in 0..WORKERS {
        warm.recv()
            .await
            .expect("a worker ended before its first saves");
    }

    let started_before = server_started_at(url).await;
    phase.store(PHASE_DURING, Ordering::SeqCst);
    tokio::task::spawn_blocking(move || restart(&dir, mode))
        .await
        .unwrap();
    phase.store(PHASE_AFTER, Ordering::SeqCst);
    assert_ne!(
        server_started_at(url).await,
        started_before,
        "the server did not restart"
    );

    let mut tallies = Vec::new();
    for worker in workers {
        tallies.push(worker.await.unwrap());
    }

    // Every save begun after the restart succeeded.
    let failed_after: Vec<_> = tallies.iter().flat_map(|t| &t.failed_after).collect();
    assert!(failed_after.is_empty(), "{failed_after:#?}");
    // The restart happened under the workload: saves were begun while it ran.
    let during: u64 = tallies.iter().map(|t| t.during).sum();
    assert!(during > 0, "no save was begun during the restart");

    // Nothing lost, nothing twice: each run is stored at the revision its worker counted
    // (saves that returned Ok, plus failed ones found applied), with that revision's state.
    let rows = raw_client(url)
        .await
        .query(
            "SELECT run_id, revision, state FROM agent_runs WHERE run_id LIKE $1",
            &[&format!("{prefix}-%")],
        )
        .await
        .unwrap();
    let stored: BTreeMap<String, (i64, String)> = rows
        .iter()
        .map(|row| (row.get(0), (row.get(1), row.get(2))))
        .collect();
    assert_eq!(stored.len(), WORKERS, "{stored:#?}");
    for tally in &tallies {
        assert_eq!(tally.revision, tally.ok + tally.applied_despite_error);
        let expected = record(&tally.run_id, tally.revision);
        assert_eq!(
            stored.get(&tally.run_id),
            Some(&(i64::try_from(expected.revision).unwrap(), expected.state)),
            "{tally:#?}"
        );
    }
    let failed: usize = tallies.iter().map(|t| t.failed.len()).sum();
    let applied: u64 = tallies.iter().map(|t| t.applied_despite_error).sum();
    let saves: u64 = tallies.iter().map(|t| t.ok + t.failed.len() as u64).sum();
    // Straight to stderr: the test harness hides eprintln! of passing tests.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!(
            "{mode} restart under load: {saves} saves by {WORKERS} workers, {during} begun during the \
             restart, {failed} failed in flight ({applied} of them applied all the same), \
             {} after it, all Ok\n",
            tallies.iter().map(|t| t.after).sum::<u64>()
        )
        .as_bytes(),
    );
}

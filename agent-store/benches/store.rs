//! Save plus load of a run with 50 messages, sealed, in SQLite (a file in WAL mode) and
//! in Postgres (the server `DATABASE_URL` names; `TOOLWRIGHT_SKIP_SERVICES=postgres`
//! skips it), and the bytes a run takes in each.
//!
//! `cargo bench -p toolwright-store --bench store`; for Postgres first
//! `eval "$(bash scripts/postgres.sh)"`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::io::Write as _;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use toolwright_core::{
    Agent, Message, RunState, RunStore, llm::AssistantMessage, testing::ScriptedLlm,
};
use toolwright_store::{PostgresStore, SqliteStore};

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

/// A run of 50 messages: 25 questions and 25 answers of a few sentences each.
fn run_of_50(agent: &Agent) -> RunState {
    let mut run = agent.start("Question 0: where does the invoice for order 1000 stand?");
    run.messages.push(Message::Assistant(AssistantMessage::text(
        "Answer 0: it was sent on Monday and is due in thirty days.".repeat(3),
    )));
    for i in 1..25 {
        run.push_user(format!(
            "Question {i}: and what about order {}? Please check the ledger.",
            1000 + i
        ))
        .unwrap();
        run.messages.push(Message::Assistant(AssistantMessage::text(
            format!(
                "Answer {i}: order {} was paid in full; the receipt is in the ledger. ",
                1000 + i
            )
            .repeat(3),
        )));
    }
    assert_eq!(run.messages.len(), 50);
    run
}

fn note(text: String) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn save_load(c: &mut Criterion, name: &str, rt: &Runtime, store: &dyn RunStore, agent: &Agent) {
    let mut group = c.benchmark_group("store/save_load_50_messages");
    group.throughput(Throughput::Elements(1));
    group.bench_function(name, |b| {
        let mut run = run_of_50(agent);
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    store.save_run(agent, &mut run).await.unwrap();
                    black_box(store.load_run(agent, &run.run_id).await.unwrap());
                }
                started.elapsed()
            })
        });
    });
    group.finish();
}

/// Saves `n` runs of 50 messages, for the bytes-per-run figures.
fn fill(rt: &Runtime, store: &dyn RunStore, agent: &Agent, n: usize) {
    rt.block_on(async {
        for _ in 0..n {
            let mut run = run_of_50(agent);
            run.run_id = format!("{}_fill", run.run_id);
            store.save_run(agent, &mut run).await.unwrap();
        }
    });
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let agent = Agent::builder(ScriptedLlm::new([]))
        .state_key(KEY)
        .build()
        .unwrap();
    let sealed = agent.export_state(&run_of_50(&agent)).len();
    note(format!("sealed state of a 50-message run: {sealed} bytes"));

    let dir = std::env::temp_dir().join(format!("agent-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    let sqlite = rt.block_on(SqliteStore::open(&path)).unwrap();
    save_load(c, "sqlite", &rt, &sqlite, &agent);
    drop(sqlite);
    // Bytes per run: a fresh file, 1,000 runs, the WAL folded in.
    let path = dir.join("size.db");
    let sqlite = rt.block_on(SqliteStore::open(&path)).unwrap();
    fill(&rt, &sqlite, &agent, 1000);
    drop(sqlite);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    drop(conn);
    let bytes = std::fs::metadata(&path).unwrap().len();
    note(format!(
        "sqlite: {} bytes per run (file of 1,000 runs)",
        bytes / 1000
    ));
    let _ = std::fs::remove_dir_all(&dir);

    match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => {
            let postgres = rt.block_on(PostgresStore::connect(&url)).unwrap();
            save_load(c, "postgres", &rt, &postgres, &agent);
            let (client, connection) = rt
                .block_on(tokio_postgres::connect(&url, tokio_postgres::NoTls))
                .unwrap();
            rt.spawn(connection);
            rt.block_on(async {
                client
                    .execute("DELETE FROM agent_runs WHERE run_id LIKE '%_fill'", &[])
                    .await
                    .unwrap();
                client.execute("VACUUM FULL agent_runs", &[]).await.unwrap();
                let before: i64 = client
                    .query_one("SELECT pg_total_relation_size('agent_runs')", &[])
                    .await
                    .unwrap()
                    .get(0);
                for _ in 0..1000 {
                    let mut run = run_of_50(&agent);
                    run.run_id = format!("{}_fill", run.run_id);
                    postgres.save_run(&agent, &mut run).await.unwrap();
                }
                client.execute("VACUUM agent_runs", &[]).await.unwrap();
                let after: i64 = client
                    .query_one("SELECT pg_total_relation_size('agent_runs')", &[])
                    .await
                    .unwrap()
                    .get(0);
                note(format!(
                    "postgres: {} bytes per run (table, TOAST and indexes, 1,000 runs)",
                    (after - before) / 1000
                ));
                client
                    .execute("DELETE FROM agent_runs WHERE run_id LIKE '%_fill'", &[])
                    .await
                    .unwrap();
            });
        }
        // Skipped only when asked for by name: a CI whose Postgres did not start fails here.
        _ if std::env::var("TOOLWRIGHT_SKIP_SERVICES")
            .is_ok_and(|names| names.split(',').any(|name| name.trim() == "postgres")) =>
        {
            note("postgres: skipped, TOOLWRIGHT_SKIP_SERVICES names it".to_owned())
        }
        _ => panic!(
            "DATABASE_URL is not set: eval \"$(bash scripts/postgres.sh)\" starts a server, \
             or TOOLWRIGHT_SKIP_SERVICES=postgres skips the Postgres figures"
        ),
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);

//! The store suite against `SqliteStore`, on a file in WAL mode.

mod support;

use std::path::PathBuf;
use std::sync::Arc;
use support::{Sql, Target};
use toolwright_store::SqliteStore;

/// A fresh database file for one test.
pub fn database_path() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("agent-store-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("runs-{n}.db"));
    let _ = std::fs::remove_file(&path);
    path
}

async fn target() -> Option<Target> {
    let path = database_path();
    let store = SqliteStore::open(&path).await.unwrap();
    let sql: Sql = Arc::new(move |statement: String| {
        let path = path.clone();
        Box::pin(async move {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.busy_timeout(std::time::Duration::from_secs(10))
                .unwrap();
            assert_eq!(conn.execute(&statement, []).unwrap(), 1, "{statement}");
        })
    });
    Some(Target {
        store: Arc::new(store),
        sql,
    })
}

store_suite!(target());

#[tokio::test]
async fn the_file_is_in_wal_mode_and_migrated_once() {
    let path = database_path();
    let first = SqliteStore::open(&path).await.unwrap();
    let again = SqliteStore::open(&path).await.unwrap();
    drop((first, again));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let migrations: i64 = conn
        .query_row("SELECT COUNT(*) FROM agent_store_migrations", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(migrations, 1);
}

#[tokio::test]
async fn a_database_migrated_by_a_newer_build_is_refused() {
    let path = database_path();
    drop(SqliteStore::open(&path).await.unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO agent_store_migrations (version, applied_at_ms) VALUES (99, 0)",
        [],
    )
    .unwrap();
    let error = SqliteStore::open(&path).await.unwrap_err();
    assert!(error.to_string().contains("schema version 99"), "{error}");
}

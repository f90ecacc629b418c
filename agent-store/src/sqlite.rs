//! [`SqliteStore`]: runs in an embedded SQLite database.

use crate::row::{
    MIGRATIONS, SCHEMA_VERSION, check, conflict, from_sql, newer_schema, now_ms, status_from,
    status_text, to_sql, waiting_status,
};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use toolwright_core::{
    RunStore,
    run::{RunRecord, StoreError, WaitingRun},
};

/// How long a write waits for another process holding the database's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A [`RunStore`] in an embedded SQLite database: one file, nothing to install. The file
/// is in WAL mode, so several processes on one machine can share it; saves are guarded by
/// revision as in every store.
///
/// Calls run on Tokio's blocking threads, one at a time per store value (share one store
/// across tasks with an `Arc`).
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (or creates) the database at `path`, in WAL mode, and applies the store's
    /// migrations.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let conn = blocking(move || {
            let conn = Connection::open(&path)
                .map_err(|e| StoreError::backend(&format!("opening `{}`", path.display()), e))?;
            conn.busy_timeout(BUSY_TIMEOUT)
                .map_err(|e| StoreError::backend("setting the busy timeout", e))?;
            let mode: String = conn
                .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
                .map_err(|e| StoreError::backend("turning on WAL mode", e))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::backend(
                    "turning on WAL mode",
                    format!("the database stayed in `{mode}` mode"),
                ));
            }
            // In WAL mode NORMAL loses nothing when a process dies, only (at worst) the
            // last commits when the machine loses power, and spares an fsync per save.
            conn.pragma_update(None, "synchronous", "NORMAL")
                .map_err(|e| StoreError::backend("setting synchronous mode", e))?;
            Ok(conn)
        })
        .await?;
        Self::ready(conn).await
    }

    /// A store in memory, gone when the value is dropped: for tests and examples.
    pub async fn open_in_memory() -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory()
            .map_err(|e| StoreError::backend("opening an in-memory database", e))?;
        Self::ready(conn).await
    }

    async fn ready(mut conn: Connection) -> Result<Self, StoreError> {
        let conn = blocking(move || {
            migrate(&mut conn)?;
            Ok(conn)
        })
        .await?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` with the connection on a blocking thread.
    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = self.conn.clone();
        blocking(move || f(&mut conn.lock().unwrap_or_else(PoisonError::into_inner))).await
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::backend("running a SQLite call", e))?
}

/// Applies the migrations this database lacks, in one write transaction, so two
/// processes opening a new file at once do not both apply them.
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let fail = |e: rusqlite::Error| StoreError::backend("migrating the SQLite store", e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(fail)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS agent_store_migrations (
            version       INTEGER PRIMARY KEY NOT NULL,
            applied_at_ms INTEGER NOT NULL
        )",
    )
    .map_err(fail)?;
    let current: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM agent_store_migrations",
            [],
            |row| row.get(0),
        )
        .map_err(fail)?;
    if current > SCHEMA_VERSION {
        return Err(newer_schema(current));
    }
    for (version, sql) in (1..)
        .zip(MIGRATIONS)
        .skip(usize::try_from(current).unwrap_or(0))
    {
        tx.execute_batch(sql).map_err(fail)?;
        tx.execute(
            "INSERT INTO agent_store_migrations (version, applied_at_ms) VALUES (?1, ?2)",
            params![version, now_ms()],
        )
        .map_err(fail)?;
    }
    tx.commit().map_err(fail)
}

fn stored_revision(conn: &Connection, run_id: &str) -> Result<Option<i64>, StoreError> {
    conn.query_row(
        "SELECT revision FROM agent_runs WHERE run_id = ?1",
        [run_id],
        |row| row.get(0),
    )
    .optional()
    .map_err(|e| StoreError::backend("reading a run's revision", e))
}

#[async_trait]
impl RunStore for SqliteStore {
    async fn save(&self, record: &RunRecord) -> Result<(), StoreError> {
        check(record)?;
        let record = record.clone();
        self.with(move |conn| {
            let fail = |e| StoreError::backend("saving a run", e);
            let revision = to_sql(record.revision)?;
            let status = status_text(record.status);
            let sql = if revision == 1 {
                "INSERT INTO agent_runs (run_id, session_id, status, revision, state, updated_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (run_id) DO NOTHING"
            } else {
                "UPDATE agent_runs SET session_id = ?2, status = ?3, revision = ?4, state = ?5,
                     updated_at_ms = ?6
                 WHERE run_id = ?1 AND revision = ?4 - 1"
            };
            let changed = conn
                .prepare_cached(sql)
                .and_then(|mut stmt| {
                    stmt.execute(params![
                        record.run_id,
                        record.session_id,
                        status,
                        revision,
                        record.state,
                        now_ms()
                    ])
                })
                .map_err(fail)?;
            if changed == 1 {
                return Ok(());
            }
            let found = stored_revision(conn, &record.run_id)?;
            Err(conflict(&record.run_id, record.revision - 1, found))
        })
        .await
    }

    async fn load(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |conn| {
            let row = conn
                .prepare_cached(
                    "SELECT run_id, session_id, status, revision, state FROM agent_runs
                     WHERE run_id = ?1",
                )
                .and_then(|mut stmt| {
                    stmt.query_row([&run_id], |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, String>(1)?,
                            row.get::<_, String>(2)?,
                            row.get::<_, i64>(3)?,
                            row.get::<_, String>(4)?,
                        ))
                    })
                    .optional()
                })
                .map_err(|e| StoreError::backend("loading a run", e))?;
            row.map(|(run_id, session_id, status, revision, state)| {
                Ok(RunRecord {
                    run_id,
                    session_id,
                    status: status_from(&status)?,
                    revision: from_sql(revision),
                    state,
                })
            })
            .transpose()
        })
        .await
    }

    async fn waiting(&self) -> Result<Vec<WaitingRun>, StoreError> {
        self.with(|conn| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT run_id, session_id, revision, updated_at_ms FROM agent_runs
                     WHERE status = ?1 ORDER BY updated_at_ms, run_id",
                )
                .map_err(|e| StoreError::backend("listing waiting runs", e))?;
            let rows = stmt
                .query_map([waiting_status()], |row| {
                    Ok(WaitingRun {
                        run_id: row.get(0)?,
                        session_id: row.get(1)?,
                        revision: from_sql(row.get(2)?),
                        updated_at_ms: from_sql(row.get(3)?),
                    })
                })
                .and_then(Iterator::collect)
                .map_err(|e| StoreError::backend("listing waiting runs", e))?;
            Ok(rows)
        })
        .await
    }

    async fn delete(&self, run_id: &str, revision: u64) -> Result<(), StoreError> {
        let run_id = run_id.to_owned();
        self.with(move |conn| {
            let changed = conn
                .execute(
                    "DELETE FROM agent_runs WHERE run_id = ?1 AND revision = ?2",
                    params![run_id, to_sql(revision)?],
                )
                .map_err(|e| StoreError::backend("deleting a run", e))?;
            if changed == 1 {
                return Ok(());
            }
            Err(conflict(&run_id, revision, stored_revision(conn, &run_id)?))
        })
        .await
    }
}

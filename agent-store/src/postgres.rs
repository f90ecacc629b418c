//! [`PostgresStore`]: runs in a Postgres database.

use crate::row::{
    MIGRATIONS, SCHEMA_VERSION, check, conflict, from_sql, newer_schema, now_ms, status_from,
    status_text, to_sql, waiting_status,
};
use async_trait::async_trait;
use tokio_postgres::{Client, NoTls, Statement};
use toolwright_core::{RunRecord, RunStore, StoreError, WaitingRun};

/// Taken for the length of a migration, so processes starting together migrate once.
const MIGRATION_LOCK: i64 = 0x6167_656e_7473_7430;

/// A [`RunStore`] in Postgres, for a fleet of processes sharing runs. Saves are guarded by
/// revision in the database (`UPDATE ... WHERE revision = $expected`), so of two processes
/// resuming one run, one wins and the other gets a conflict.
///
/// One connection, whose queries Tokio-postgres pipelines; share the store across tasks
/// with an `Arc`. Plain TCP or a Unix socket (no TLS): run it next to the database or
/// inside a private network.
pub struct PostgresStore {
    client: Client,
    statements: Statements,
}

struct Statements {
    insert: Statement,
    update: Statement,
    revision: Statement,
    load: Statement,
    waiting: Statement,
    delete: Statement,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

fn fail(doing: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |e| StoreError::backend(doing, e)
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`, or the
    /// `key=value` form) and applies the store's migrations.
    ///
    /// Must be called inside a Tokio runtime: the connection runs in a task of its own.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let (mut client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .map_err(fail("connecting to Postgres"))?;
        // The connection ends when the client is dropped; an error in between shows on
        // the next query.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        migrate(&mut client).await?;
        let prepare = |sql| client.prepare(sql);
        let statements = Statements {
            insert: prepare(
                "INSERT INTO agent_runs (run_id, session_id, status, revision, state, updated_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id) DO NOTHING",
            )
            .await
            .map_err(fail("preparing statements"))?,
            update: prepare(
                "UPDATE agent_runs SET session_id = $2, status = $3, revision = $4, state = $5,
                     updated_at_ms = $6
                 WHERE run_id = $1 AND revision = $4::BIGINT - 1",
            )
            .await
            .map_err(fail("preparing statements"))?,
            revision: prepare("SELECT revision FROM agent_runs WHERE run_id = $1")
                .await
                .map_err(fail("preparing statements"))?,
            load: prepare(
                "SELECT run_id, session_id, status, revision, state FROM agent_runs
                 WHERE run_id = $1",
            )
            .await
            .map_err(fail("preparing statements"))?,
            waiting: prepare(
                "SELECT run_id, session_id, revision, updated_at_ms FROM agent_runs
                 WHERE status = $1 ORDER BY updated_at_ms, run_id",
            )
            .await
            .map_err(fail("preparing statements"))?,
            delete: prepare("DELETE FROM agent_runs WHERE run_id = $1 AND revision = $2")
                .await
                .map_err(fail("preparing statements"))?,
        };
        Ok(Self { client, statements })
    }

    async fn stored_revision(&self, run_id: &str) -> Result<Option<i64>, StoreError> {
        let row = self
            .client
            .query_opt(&self.statements.revision, &[&run_id])
            .await
            .map_err(fail("reading a run's revision"))?;
        row.map(|row| row.try_get(0))
            .transpose()
            .map_err(fail("reading a run's revision"))
    }
}

/// Applies the migrations this database lacks, in one transaction under an advisory
/// lock, so processes starting together do not both apply them.
async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let fail = fail("migrating the Postgres store");
    let tx = client.transaction().await.map_err(&fail)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(&fail)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS agent_store_migrations (
            version       BIGINT PRIMARY KEY,
            applied_at_ms BIGINT NOT NULL
        )",
    )
    .await
    .map_err(&fail)?;
    let current: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM agent_store_migrations",
            &[],
        )
        .await
        .map_err(&fail)?
        .try_get(0)
        .map_err(&fail)?;
    if current > SCHEMA_VERSION {
        return Err(newer_schema(current));
    }
    for (version, sql) in (1i64..)
        .zip(MIGRATIONS)
        .skip(usize::try_from(current).unwrap_or(0))
    {
        tx.batch_execute(sql).await.map_err(&fail)?;
        tx.execute(
            "INSERT INTO agent_store_migrations (version, applied_at_ms) VALUES ($1, $2)",
            &[&version, &now_ms()],
        )
        .await
        .map_err(&fail)?;
    }
    tx.commit().await.map_err(&fail)
}

#[async_trait]
impl RunStore for PostgresStore {
    async fn save(&self, record: &RunRecord) -> Result<(), StoreError> {
        check(record)?;
        let revision = to_sql(record.revision)?;
        let status = status_text(record.status);
        let statement = if revision == 1 {
            &self.statements.insert
        } else {
            &self.statements.update
        };
        let changed = self
            .client
            .execute(
                statement,
                &[
                    &record.run_id,
                    &record.session_id,
                    &status,
                    &revision,
                    &record.state,
                    &now_ms(),
                ],
            )
            .await
            .map_err(fail("saving a run"))?;
        if changed == 1 {
            return Ok(());
        }
        let found = self.stored_revision(&record.run_id).await?;
        Err(conflict(&record.run_id, record.revision - 1, found))
    }

    async fn load(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let row = self
            .client
            .query_opt(&self.statements.load, &[&run_id])
            .await
            .map_err(fail("loading a run"))?;
        let Some(row) = row else { return Ok(None) };
        let fail = fail("reading a run");
        Ok(Some(RunRecord {
            run_id: row.try_get(0).map_err(&fail)?,
            session_id: row.try_get(1).map_err(&fail)?,
            status: status_from(row.try_get(2).map_err(&fail)?)?,
            revision: from_sql(row.try_get(3).map_err(&fail)?),
            state: row.try_get(4).map_err(&fail)?,
        }))
    }

    async fn waiting(&self) -> Result<Vec<WaitingRun>, StoreError> {
        let rows = self
            .client
            .query(&self.statements.waiting, &[&waiting_status()])
            .await
            .map_err(fail("listing waiting runs"))?;
        let fail = fail("listing waiting runs");
        rows.into_iter()
            .map(|row| {
                Ok(WaitingRun {
                    run_id: row.try_get(0).map_err(&fail)?,
                    session_id: row.try_get(1).map_err(&fail)?,
                    revision: from_sql(row.try_get(2).map_err(&fail)?),
                    updated_at_ms: from_sql(row.try_get(3).map_err(&fail)?),
                })
            })
            .collect()
    }

    async fn delete(&self, run_id: &str, revision: u64) -> Result<(), StoreError> {
        let changed = self
            .client
            .execute(&self.statements.delete, &[&run_id, &to_sql(revision)?])
            .await
            .map_err(fail("deleting a run"))?;
        if changed == 1 {
            return Ok(());
        }
        Err(conflict(
            run_id,
            revision,
            self.stored_revision(run_id).await?,
        ))
    }
}

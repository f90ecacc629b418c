//! [`PostgresStore`]: runs in a Postgres database, over a pool of connections that
//! reconnects, with TLS through rustls.

mod options;
mod tls;

pub use options::{PostgresStoreBuilder, PostgresTls};

use crate::row::{
    MIGRATIONS, SCHEMA_VERSION, check, conflict, from_sql, newer_schema, now_ms, status_from,
    status_text, to_sql, waiting_status,
};
use async_trait::async_trait;
use deadpool_postgres::{
    Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime, TimeoutType,
};
use std::time::Duration;
use tokio::time::Instant;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row, Statement, config::SslMode};
use toolwright_core::{
    RunStore,
    run::{RunRecord, StoreError, WaitingRun},
};

/// Taken for the length of a migration, so processes starting together migrate once.
const MIGRATION_LOCK: i64 = 0x6167_656e_7473_7430;

const INSERT: &str =
    "INSERT INTO agent_runs (run_id, session_id, status, revision, state, updated_at_ms)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id) DO NOTHING";
const UPDATE: &str =
    "UPDATE agent_runs SET session_id = $2, status = $3, revision = $4, state = $5,
         updated_at_ms = $6
     WHERE run_id = $1 AND revision = $4::BIGINT - 1";
const REVISION: &str = "SELECT revision FROM agent_runs WHERE run_id = $1";
const LOAD: &str = "SELECT run_id, session_id, status, revision, state FROM agent_runs
     WHERE run_id = $1";
const WAITING: &str = "SELECT run_id, session_id, revision, updated_at_ms FROM agent_runs
     WHERE status = $1 ORDER BY updated_at_ms, run_id";
const DELETE: &str = "DELETE FROM agent_runs WHERE run_id = $1 AND revision = $2";

/// A [`RunStore`] in Postgres, for a fleet of processes sharing runs. Saves are guarded by
/// revision in the database (`UPDATE ... WHERE revision = $expected`), so of two processes
/// resuming one run, one wins and the other gets a conflict.
///
/// # Connections
///
/// A pool of connections (16 at most unless
/// [`max_connections`](PostgresStoreBuilder::max_connections) says otherwise), opened as
/// they are needed; share the store across tasks with an `Arc`. A connection the database
/// closed (a restart, a failover, an idle timeout) is dropped and replaced. While the
/// database cannot be reached, an operation waits for it, up to
/// [`reconnect_timeout`](PostgresStoreBuilder::reconnect_timeout) (10 seconds), and then
/// fails.
///
/// What holds across a restart: a save that returns `Ok` is stored. A save whose
/// connection broke after the statement was sent returns an error, never `Ok`, and may or
/// may not have been applied (the answer was lost, not the question);
/// [`load`](RunStore::load) tells which revision is stored. It is never applied twice:
/// a save only applies over the revision before it. Nothing is sent again on its own
/// once it has reached the server; only the wait for a connection is retried.
///
/// # TLS
///
/// Through rustls, with libpq's `sslmode` values and meanings, read from the URL
/// (`?sslmode=verify-full`) or set with [`PostgresStoreBuilder::tls`]; `sslrootcert=PATH`
/// in the URL or [`root_certificates`](PostgresStoreBuilder::root_certificates) names
/// the roots to trust (else the system's). The default, `prefer`, encrypts when the server
/// offers TLS without checking who answers; to require TLS with a checked certificate:
///
/// ```no_run
/// use toolwright_store::{PostgresStore, PostgresTls};
///
/// # async fn open() -> Result<(), Box<dyn std::error::Error>> {
/// // In the URL...
/// let store = PostgresStore::connect(
///     "postgres://app@db.internal/runs?sslmode=verify-full&sslrootcert=/etc/db/ca.pem",
/// )
/// .await?;
/// // ... or in code.
/// let store = PostgresStore::builder("postgres://app@db.internal/runs")
///     .tls(PostgresTls::VerifyFull)
///     .root_certificates(std::fs::read("/etc/db/ca.pem")?)
///     .max_connections(32)
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
pub struct PostgresStore {
    pool: Pool,
    reconnect_timeout: Duration,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

fn fail(doing: &'static str) -> impl Fn(tokio_postgres::Error) -> StoreError {
    move |e| StoreError::backend(doing, explain(&e))
}

/// `error` with its causes: tokio-postgres's own text names only the kind of failure
/// ("db error", "error performing TLS handshake"), its causes say what went wrong.
fn explain(error: &tokio_postgres::Error) -> String {
    let mut text = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(error) = cause {
        text.push_str(": ");
        text.push_str(&error.to_string());
        cause = error.source();
    }
    text
}

/// Whether `error` says the connection or the server went away, rather than the
/// database refusing what was asked.
fn connection_lost(error: &tokio_postgres::Error) -> bool {
    error.as_db_error().is_none_or(|db| {
        // The server is starting up or shutting down: the connection is going away.
        [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::CRASH_SHUTDOWN,
        ]
        .contains(db.code())
    })
}

/// The error for `error` from `client`, whose connection is dropped rather than pooled
/// again if the error says it is broken.
fn failed(client: Object, doing: &'static str, error: tokio_postgres::Error) -> StoreError {
    if connection_lost(&error) {
        drop(Object::take(client));
    }
    StoreError::backend(doing, explain(&error))
}

fn pool_error(error: PoolError) -> StoreError {
    let doing = "connecting to Postgres";
    match error {
        PoolError::Backend(error) => StoreError::backend(doing, explain(&error)),
        PoolError::Timeout(TimeoutType::Wait) => StoreError::backend(
            doing,
            "every connection of the pool stayed busy; raise `max_connections`",
        ),
        PoolError::Timeout(_) => StoreError::backend(
            doing,
            "opening a connection took longer than `connect_timeout`",
        ),
        other => StoreError::backend(doing, other),
    }
}

/// What to do about a certificate the check refused, when that is why `error` failed.
fn certificate_hint(error: &PoolError) -> Option<&'static str> {
    let PoolError::Backend(error) = error else {
        return None;
    };
    let mut cause = std::error::Error::source(error);
    while let Some(error) = cause {
        // tokio-rustls reports rustls's error inside an io::Error.
        let tls = error.downcast_ref::<rustls::Error>().or_else(|| {
            error
                .downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(rustls::Error::InvalidCertificate(problem)) = tls {
            return match problem {
                rustls::CertificateError::UnknownIssuer => Some(
                    "no trusted root signed the server's certificate: give the CA that did \
                     with `sslrootcert=PATH` in the URL or `PostgresStoreBuilder::root_certificates`",
                ),
                rustls::CertificateError::NotValidForName
                | rustls::CertificateError::NotValidForNameContext { .. } => Some(
                    "the certificate is for another host: connect by a name it lists, or \
                     with `sslmode=verify-ca` to check its signature only",
                ),
                _ => None,
            };
        }
        cause = error.source();
    }
    None
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`, or the
    /// `key=value` form, with libpq's `sslmode` and `sslrootcert` understood) and
    /// applies the store's migrations. [`builder`](Self::builder) sets more.
    ///
    /// Must be called inside a Tokio runtime: each connection runs in a task of its own.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// A store on `url` with settings beyond the URL's: TLS, roots, pool size, timeouts.
    pub fn builder(url: impl Into<String>) -> PostgresStoreBuilder {
        PostgresStoreBuilder::new(url.into())
    }

    /// A pooled connection with `sql` prepared on it, waiting for the database while it
    /// cannot be reached. A connection that breaks while preparing is dropped and another
    /// tried: the statement itself has not run, so trying again cannot apply anything
    /// twice.
    async fn prepared(
        &self,
        sql: &'static str,
        doing: &'static str,
    ) -> Result<(Object, Statement), StoreError> {
        let deadline = Instant::now() + self.reconnect_timeout;
        let mut pause = Duration::from_millis(20);
        loop {
            let retry = Instant::now() + pause < deadline;
            match self.pool.get().await {
                Ok(client) => match client.prepare_cached(sql).await {
                    Ok(statement) => return Ok((client, statement)),
                    Err(error) if connection_lost(&error) && retry => {
                        drop(Object::take(client));
                    }
                    Err(error) => return Err(failed(client, doing, error)),
                },
                Err(PoolError::Backend(error)) if connection_lost(&error) && retry => {}
                Err(PoolError::Timeout(TimeoutType::Create)) if retry => {}
                Err(error) => return Err(pool_error(error)),
            }
            // A backoff between attempts to reach a database that is down.
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    /// `sql` run once on a pooled connection, for at most one row.
    async fn query_opt(
        &self,
        sql: &'static str,
        doing: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, StoreError> {
        let (client, statement) = self.prepared(sql, doing).await?;
        match client.query_opt(&statement, params).await {
            Ok(row) => Ok(row),
            Err(error) => Err(failed(client, doing, error)),
        }
    }

    /// `sql` run once on a pooled connection: the number of rows it changed. Once sent,
    /// never sent again: had the server applied it before the connection broke, a second
    /// try would find its own change and report a conflict.
    async fn execute(
        &self,
        sql: &'static str,
        doing: &'static str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, StoreError> {
        let (client, statement) = self.prepared(sql, doing).await?;
        match client.execute(&statement, params).await {
            Ok(changed) => Ok(changed),
            Err(error) => Err(failed(client, doing, error)),
        }
    }

    async fn stored_revision(&self, run_id: &str) -> Result<Option<i64>, StoreError> {
        let doing = "reading a run's revision";
        let row = self.query_opt(REVISION, doing, &[&run_id]).await?;
        row.map(|row| row.try_get(0))
            .transpose()
            .map_err(fail(doing))
    }
}

impl PostgresStoreBuilder {
    /// Opens the first connection (failing at once if it cannot: a wrong address, a
    /// refused password or certificate), applies the store's migrations, and returns the
    /// store.
    pub async fn connect(self) -> Result<PostgresStore, StoreError> {
        let params = options::take_tls_params(&self.url)?;
        let mut config: tokio_postgres::Config = params
            .rest
            .parse()
            .map_err(fail("reading the Postgres URL"))?;
        let mut pems = self.root_certificates;
        if let Some(path) = params.root_file {
            pems.push(std::fs::read(&path).map_err(|e| {
                StoreError::backend("reading the URL's sslrootcert", format!("{path}: {e}"))
            })?);
        }
        let roots = tls::roots(&pems)?;
        let mode = self
            .tls
            .or(params.mode)
            .unwrap_or(PostgresTls::Prefer)
            .with_roots(!roots.is_empty());
        config.ssl_mode(match mode {
            PostgresTls::Disable => SslMode::Disable,
            PostgresTls::Prefer => SslMode::Prefer,
            PostgresTls::Require | PostgresTls::VerifyCa | PostgresTls::VerifyFull => {
                SslMode::Require
            }
        });
        let manager = Manager::from_config(
            config,
            tls::connector(mode, roots)?,
            // A closed connection is noticed by its task as soon as the server closes it.
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(self.max_connections)
            .runtime(Runtime::Tokio1)
            .create_timeout(Some(self.connect_timeout))
            .build()
            .map_err(|e| StoreError::backend("connecting to Postgres", e))?;
        let store = PostgresStore {
            pool,
            reconnect_timeout: self.reconnect_timeout,
        };
        let mut client = store.pool.get().await.map_err(|error| {
            let hint = certificate_hint(&error);
            match (pool_error(error), hint) {
                (StoreError::Backend(message), Some(hint)) => {
                    StoreError::Backend(format!("{message}; {hint}"))
                }
                (error, _) => error,
            }
        })?;
        migrate(&mut client).await?;
        Ok(store)
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
        let doing = "saving a run";
        let revision = to_sql(record.revision)?;
        let status = status_text(record.status);
        let sql = if revision == 1 { INSERT } else { UPDATE };
        let params: [&(dyn ToSql + Sync); 6] = [
            &record.run_id,
            &record.session_id,
            &status,
            &revision,
            &record.state,
            &now_ms(),
        ];
        if self.execute(sql, doing, &params).await? == 1 {
            return Ok(());
        }
        let found = self.stored_revision(&record.run_id).await?;
        Err(conflict(&record.run_id, record.revision - 1, found))
    }

    async fn load(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let row = self.query_opt(LOAD, "loading a run", &[&run_id]).await?;
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
        let doing = "listing waiting runs";
        let (client, statement) = self.prepared(WAITING, doing).await?;
        let rows = match client.query(&statement, &[&waiting_status()]).await {
            Ok(rows) => rows,
            Err(error) => return Err(failed(client, doing, error)),
        };
        let fail = fail(doing);
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
        let params: [&(dyn ToSql + Sync); 2] = [&run_id, &to_sql(revision)?];
        if self.execute(DELETE, "deleting a run", &params).await? == 1 {
            return Ok(());
        }
        Err(conflict(
            run_id,
            revision,
            self.stored_revision(run_id).await?,
        ))
    }
}

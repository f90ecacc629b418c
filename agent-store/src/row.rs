//! What both stores share: how a record's fields map to columns, and the clock.

use toolwright_core::{
    AgentError,
    run::{RunRecord, RunStatus, StoreError},
};

/// The schema version this build writes; a database migrated past it is refused.
pub(crate) const SCHEMA_VERSION: i64 = 1;

/// Each migration, in order: migration `i + 1` is `MIGRATIONS[i]`. Written in the SQL
/// both databases read (SQLite takes BIGINT as an integer column).
pub(crate) const MIGRATIONS: &[&str] = &["
    CREATE TABLE agent_runs (
        run_id        TEXT PRIMARY KEY NOT NULL,
        session_id    TEXT NOT NULL,
        status        TEXT NOT NULL,
        revision      BIGINT NOT NULL,
        state         TEXT NOT NULL,
        updated_at_ms BIGINT NOT NULL
    );
    CREATE INDEX agent_runs_waiting ON agent_runs (updated_at_ms, run_id)
        WHERE status = 'waiting_for_human';
"];

/// `status` as stored: its snake_case name.
pub(crate) fn status_text(status: RunStatus) -> String {
    match serde_json::to_value(status) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{status:?}"),
    }
}

/// A stored status name back as a status.
pub(crate) fn status_from(text: &str) -> Result<RunStatus, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| StoreError::backend("reading a run", format!("unknown status `{text}`")))
}

/// The name of the status [`RunStore::waiting`](toolwright_core::RunStore::waiting) lists.
pub(crate) fn waiting_status() -> String {
    status_text(RunStatus::WaitingForHuman)
}

/// A revision as a BIGINT.
pub(crate) fn to_sql(revision: u64) -> Result<i64, StoreError> {
    i64::try_from(revision).map_err(|_| {
        StoreError::backend("saving a run", format!("revision {revision} is too large"))
    })
}

/// A BIGINT column as a revision or a time.
pub(crate) fn from_sql(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

/// Refuses a record no store should hold: revision 0 means "never saved".
pub(crate) fn check(record: &RunRecord) -> Result<(), StoreError> {
    if record.revision == 0 {
        return Err(StoreError::State(AgentError::InvalidState(format!(
            "run `{}` has revision 0; save it with `RunStore::save_run`, which advances its revision",
            record.run_id
        ))));
    }
    Ok(())
}

/// The conflict for a save or delete that expected `expected` and found `found`.
pub(crate) fn conflict(run_id: &str, expected: u64, found: Option<i64>) -> StoreError {
    StoreError::Conflict {
        run_id: run_id.to_owned(),
        expected,
        found: found.map(from_sql),
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The error for a database migrated by a newer build.
pub(crate) fn newer_schema(found: i64) -> StoreError {
    StoreError::backend(
        "opening the store",
        format!(
            "the database is at schema version {found}, newer than this build knows ({SCHEMA_VERSION}); upgrade toolwright-store"
        ),
    )
}

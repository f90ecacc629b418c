//! MCP task records kept in Restate (feature `mcp`): [`TaskRecords`], the virtual object
//! `McpTask` that holds each task's record in its state, keyed by the task id, and
//! [`RestateTaskStore`], the [`TaskStore`] an MCP server reads and writes it through,
//! over Restate's ingress.

use crate::now_ms;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use toolwright_core::run::StoreError;
use toolwright_mcp::tasks::{TaskRecord, TaskStore};

/// The virtual object's name, as the ingress routes to it (`/McpTask/{id}/...`).
const OBJECT: &str = "McpTask";
/// Where the object keeps its task's record.
const RECORD: &str = "record";

/// What [`TaskRecords`]' `save` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SaveOutcome {
    /// The record is stored.
    Saved,
    /// The record's revision does not follow the stored one: another server saved the
    /// task first. Nothing changed.
    Conflict {
        /// The revision stored, if any.
        found: Option<u64>,
    },
}

/// The Restate virtual object `McpTask`: one object per MCP task, keyed by the task id,
/// holding the task's [`TaskRecord`] in its state. Bind it to a worker's endpoint
/// (`Endpoint::builder().bind(TaskRecords)`), register the worker with Restate, and give
/// every MCP server a [`RestateTaskStore`] on the same Restate.
///
/// `save` (exclusive: one at a time per task) stores a record whose revision follows the
/// stored one, and answers [`SaveOutcome::Conflict`] otherwise; `load` (shared) answers
/// the record, or `null`. The first `save` schedules `expire` for when the task expires
/// ([`TaskRecord::expires_at_ms`]), on a durable timer: the record is deleted then.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskRecords;

#[restate_sdk::object(name = "McpTask")]
impl TaskRecords {
    /// Stores `record` if its revision is the stored one plus one (1 when none is).
    #[handler]
    async fn save(
        &self,
        ctx: ObjectContext<'_>,
        record: Json<TaskRecord>,
    ) -> Result<Json<SaveOutcome>, HandlerError> {
        let record = record.into_inner();
        if record.id() != ctx.key() {
            return Err(TerminalError::new_with_code(
                400,
                format!(
                    "the record of task `{}` was sent to the object of task `{}`",
                    record.id(),
                    ctx.key()
                ),
            )
            .into());
        }
        let found = ctx
            .get::<Json<TaskRecord>>(RECORD)
            .await?
            .map(|stored| stored.into_inner().revision());
        if record.revision() != found.unwrap_or(0) + 1 {
            return Ok(Json(SaveOutcome::Conflict { found }));
        }
        if found.is_none() {
            let now = ctx.run(|| async { Ok(now_ms()) }).name("now").await?;
            let left = Duration::from_millis(record.expires_at_ms().saturating_sub(now));
            ctx.object_client::<TaskRecordsClient>(ctx.key())
                .expire()
                .send_after(left);
        }
        ctx.set(RECORD, Json(record));
        Ok(Json(SaveOutcome::Saved))
    }

    /// Deletes the record once its task has expired (earlier, nothing happens): sent by
    /// the first `save`, for the moment the task expires.
    #[handler]
    async fn expire(&self, ctx: ObjectContext<'_>) -> Result<(), HandlerError> {
        let Some(stored) = ctx.get::<Json<TaskRecord>>(RECORD).await? else {
            return Ok(());
        };
        let now = ctx.run(|| async { Ok(now_ms()) }).name("now").await?;
        if stored.into_inner().expires_at_ms() <= now {
            ctx.clear(RECORD);
        }
        Ok(())
    }

    /// The stored record, if any.
    #[handler]
    async fn load(
        &self,
        ctx: SharedObjectContext<'_>,
    ) -> Result<Json<Option<TaskRecord>>, HandlerError> {
        let stored = ctx.get::<Json<TaskRecord>>(RECORD).await?;
        Ok(Json(stored.map(Json::into_inner)))
    }
}

/// A [`TaskStore`] in Restate: each task's record in the state of its [`TaskRecords`]
/// object, read and written through Restate's ingress. An MCP server given one
/// (`TaskOptions::default().store(Arc::new(store))`) keeps no task only in its memory:
/// another server on another machine, given a store on the same Restate, reads the task,
/// takes its client's answers and finishes it.
///
/// What is durable is the record: the task's status, its questions and answers, its
/// result. The task's *work*, the tool's call, runs in the process of the server that
/// started it (or resumed it): when that process stops during the call, the task reads
/// as `failed` on the next server, as with any other store. A tool whose work must
/// itself survive a crash runs it as a Restate run ([`AgentRuns`](crate::AgentRuns)) or a
/// service of its own, and answers when that ends.
///
/// Servers share tasks at once: any of them answers for a task another one runs, which
/// renews its lease on the record while it runs (`TaskOptions::lease` in toolwright-mcp);
/// a cancellation taken by one server stops the task where it runs, and a task whose
/// server died reads as `failed` once its lease ran out.
///
/// A task's record is deleted from Restate when the task expires (its `ttl`, an hour by
/// default), by a call its first save scheduled on a durable timer.
#[derive(Debug, Clone)]
pub struct RestateTaskStore {
    ingress: reqwest::Url,
    http: reqwest::Client,
}

impl RestateTaskStore {
    /// A store on the Restate whose ingress is at `ingress` (e.g. `http://127.0.0.1:8080`).
    /// The client is reqwest's default; [`with_client`](Self::with_client) sets another
    /// (for TLS settings, timeouts, or headers the ingress needs).
    pub fn new(ingress: &str) -> Result<Self, StoreError> {
        // `build`, not `Client::new`: with no TLS provider installed, that panics.
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| StoreError::backend("making the HTTP client for Restate", e))?;
        Self::with_client(ingress, http)
    }

    /// A store on the Restate whose ingress is at `ingress`, reached with `http`.
    pub fn with_client(ingress: &str, http: reqwest::Client) -> Result<Self, StoreError> {
        let ingress = reqwest::Url::parse(ingress)
            .map_err(|e| StoreError::backend("reading the Restate ingress URL", e))?;
        if ingress.cannot_be_a_base() {
            return Err(StoreError::backend(
                "reading the Restate ingress URL",
                format!("`{ingress}` is not an http(s) URL"),
            ));
        }
        Ok(Self { ingress, http })
    }

    /// The URL of `handler` of task `id`'s object, the id one escaped path segment
    /// (whatever a client sent as a task id).
    fn url(&self, id: &str, handler: &str) -> reqwest::Url {
        let mut url = self.ingress.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend([OBJECT, id, handler]);
        }
        url
    }

    /// Calls `handler` of task `id` with `body`, and reads its JSON answer.
    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        handler: &str,
        body: Option<&TaskRecord>,
    ) -> Result<T, StoreError> {
        let doing = format!("calling {OBJECT}/{handler} of task `{id}` through Restate");
        let request = self.http.post(self.url(id, handler));
        let request = match body {
            Some(record) => request.json(record),
            None => request,
        };
        let response = request
            .send()
            .await
            .map_err(|e| StoreError::backend(&doing, e))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(StoreError::backend(&doing, format!("{status}: {text}")));
        }
        response
            .json()
            .await
            .map_err(|e| StoreError::backend(&doing, e))
    }
}

#[async_trait::async_trait]
impl TaskStore for RestateTaskStore {
    async fn save(&self, record: &TaskRecord) -> Result<(), StoreError> {
        match self.call(record.id(), "save", Some(record)).await? {
            SaveOutcome::Saved => Ok(()),
            SaveOutcome::Conflict { found } => Err(StoreError::Conflict {
                run_id: record.id().to_owned(),
                expected: record.revision().saturating_sub(1),
                found,
            }),
        }
    }

    async fn load(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        self.call(id, "load", None).await
    }
}

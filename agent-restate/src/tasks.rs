//! MCP tasks kept in Restate (feature `mcp`): [`TaskRecords`], the virtual object
//! `McpTask` that holds each task's record in its state, keyed by the task id;
//! [`TaskWork`], the service `McpTaskWork` that runs a task's call as a journaled step;
//! and [`RestateTaskStore`], the [`TaskStore`] (and [`TaskRunner`]) an MCP server reaches
//! both through, over Restate's ingress.

use crate::now_ms;
use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::task::Poll;
use std::time::Duration;
use toolwright_core::run::StoreError;
use toolwright_mcp::McpServer;
use toolwright_mcp::tasks::{TaskOutcome, TaskRecord, TaskRunner, TaskStore};

/// The virtual object's name, as the ingress routes to it (`/McpTask/{id}/...`).
const OBJECT: &str = "McpTask";
/// Where the object keeps its task's record.
const RECORD: &str = "record";
/// Where the object keeps the invocation id of its task's work, once handed to
/// [`TaskWork`].
const WORK: &str = "work";

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

/// The refusal of a record sent to another task's object.
fn misdirected(id: &str, key: &str) -> TerminalError {
    TerminalError::new_with_code(
        400,
        format!("the record of task `{id}` was sent to the object of task `{key}`"),
    )
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
///
/// For a task whose work runs on Restate ([`TaskWork`]): `start_work`, given the task's
/// record, invokes `McpTaskWork/run` with it, once, and keeps the invocation's id; `cancel_work`
/// cancels that invocation; `settle` records how the work ended unless the task ended
/// first. All three are exclusive, so a cancellation finds the work started before it.
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
            return Err(misdirected(record.id(), ctx.key()).into());
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

    /// Hands the work of the task `record` to the service `McpTaskWork` ([`TaskWork`]),
    /// once: answers the invocation id of that work (the same one when asked again).
    #[handler]
    async fn start_work(
        &self,
        ctx: ObjectContext<'_>,
        record: Json<TaskRecord>,
    ) -> Result<Json<String>, HandlerError> {
        if record.0.id() != ctx.key() {
            return Err(misdirected(record.0.id(), ctx.key()).into());
        }
        if let Some(started) = ctx.get::<Json<String>>(WORK).await? {
            return Ok(started);
        }
        // The record travels with the invocation, as the server sent it: read back from
        // the state here instead, `tools/call` answered in about 54 ms rather than 8
        // (the `task_handoff` bench, one run of each).
        let handle = ctx
            .service_client::<TaskWorkClient>()
            .run(record)
            .send()
            .await?;
        let invocation = handle.invocation_id().to_owned();
        ctx.set(WORK, Json(invocation.clone()));
        Ok(Json(invocation))
    }

    /// Cancels the task's work, if it was handed over: whether it was.
    #[handler]
    async fn cancel_work(&self, ctx: ObjectContext<'_>) -> Result<Json<bool>, HandlerError> {
        let Some(started) = ctx.get::<Json<String>>(WORK).await? else {
            return Ok(Json(false));
        };
        ctx.invocation_handle(started.into_inner()).cancel();
        Ok(Json(true))
    }

    /// Records how the task's work ended, unless the task ended first (a cancellation
    /// saved by a server): whether it was recorded.
    #[handler]
    async fn settle(
        &self,
        ctx: ObjectContext<'_>,
        outcome: Json<TaskOutcome>,
    ) -> Result<Json<bool>, HandlerError> {
        let Some(stored) = ctx.get::<Json<TaskRecord>>(RECORD).await? else {
            return Ok(Json(false));
        };
        let mut record = stored.into_inner();
        let settled = record.settle(outcome.into_inner());
        if settled {
            ctx.set(RECORD, Json(record));
        }
        Ok(Json(settled))
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

/// The Restate service `McpTaskWork`: runs the work of MCP tasks handed to Restate, on
/// an MCP server holding the same tools as the servers that start them (see
/// [`RestateTaskStore`] as a [`TaskRunner`]). Bind it to a worker's endpoint beside
/// [`TaskRecords`] (`Endpoint::builder().bind(TaskRecords).bind(TaskWork::new(server))`)
/// and register the worker with Restate.
///
/// ```no_run
/// use std::sync::Arc;
/// use toolwright_core::ToolSet;
/// use toolwright_mcp::{McpServer, ServerOptions, tasks::TaskOptions};
/// use toolwright_restate::restate_sdk::prelude::*;
/// use toolwright_restate::{RestateTaskStore, TaskRecords, TaskWork};
///
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let tools = ToolSet::new;
/// // Every MCP server: its tasks kept, and run, on Restate.
/// let store = Arc::new(RestateTaskStore::new("http://127.0.0.1:8080")?);
/// let mut options = ServerOptions::default();
/// options.tasks = TaskOptions::default().store(store.clone()).runner(store);
/// let server = McpServer::with_options(tools(), options);
///
/// // Every worker (this process or another): the same tools.
/// let endpoint = Endpoint::builder()
///     .bind(TaskRecords)
///     .bind(TaskWork::new(McpServer::new(tools())))
///     .build();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
/// HttpServer::new(endpoint).serve(listener).await;
/// # drop(server); Ok(()) }
/// ```
///
/// Its handler `run`, keyed by nothing and given the task's record by `McpTask`, runs
/// the call ([`McpServer::run_task`]) as one journaled step (`ctx.run`), and
/// records the outcome in the task's `McpTask` object. When a worker dies during the
/// call, Restate runs the call again on a worker (the same idempotency key
/// `owner:task-id` both times); once the step's outcome is journaled, the call never
/// runs again. Cancelling the invocation (`tasks/cancel`, through `McpTask/cancel_work`)
/// abandons the step in flight.
#[derive(Clone)]
pub struct TaskWork {
    server: McpServer,
}

impl TaskWork {
    /// Work run by `server`: an MCP server with the same tools (and call options) as the
    /// servers that hand tasks over. It serves no client here; only its tools are used.
    pub fn new(server: McpServer) -> Self {
        Self { server }
    }
}

impl std::fmt::Debug for TaskWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskWork").finish_non_exhaustive()
    }
}

#[restate_sdk::service(name = "McpTaskWork")]
impl TaskWork {
    /// Runs the work of the task `record` (as stored when it was handed over), then
    /// records how it ended.
    #[handler]
    async fn run(&self, ctx: Context<'_>, record: Json<TaskRecord>) -> Result<(), HandlerError> {
        let record = record.into_inner();
        let id = record.id().to_owned();
        // Restate tells a handler it was cancelled at its next await of a journaled
        // operation, not in the middle of a `ctx.run`: the call is raced with an
        // awakeable nobody resolves, which the cancellation fails, so that a cancelled
        // call stops at once (its future is dropped).
        let (_, cancelled) = ctx.awakeable::<()>();
        let server = self.server.clone();
        let work = ctx
            .run(|| async move { Ok(Json(server.run_task(&record).await)) })
            .name("tool call");
        let mut work = std::pin::pin!(work);
        let mut cancelled = std::pin::pin!(cancelled);
        let mut waiting = true;
        // The two share the invocation's input stream: the call is polled first, so the
        // input that completes it is read by it, and the awakeable reads only what the
        // call does not wait for (the cancellation).
        let outcome = std::future::poll_fn(|cx| {
            if let Poll::Ready(outcome) = work.as_mut().poll(cx) {
                return Poll::Ready(outcome);
            }
            if waiting && let Poll::Ready(woken) = cancelled.as_mut().poll(cx) {
                waiting = false;
                if let Err(error) = woken {
                    return Poll::Ready(Err(error));
                }
            }
            Poll::Pending
        })
        .await?;
        ctx.object_client::<TaskRecordsClient>(id)
            .settle(outcome)
            .call()
            .await?;
        Ok(())
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
/// as `failed` on the next server, as with any other store. For the work to be durable
/// too, give the store to the server as its runner as well
/// (`TaskOptions::default().store(store.clone()).runner(store)`): each task's call is
/// then handed to the service `McpTaskWork` ([`TaskWork`]), on whichever worker Restate
/// picks, and outlives the server that started it (see "MCP tasks that outlive their
/// server" in the crate docs).
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

/// Hands tasks' work to Restate: `start` calls `McpTask/start_work` (which invokes
/// `McpTaskWork/run` once per task), `cancel` calls `McpTask/cancel_work` (which cancels
/// that invocation).
#[async_trait::async_trait]
impl TaskRunner for RestateTaskStore {
    async fn start(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.call::<String>(record.id(), "start_work", Some(record))
            .await
            .map(drop)
    }

    async fn cancel(&self, id: &str) -> Result<(), StoreError> {
        self.call::<bool>(id, "cancel_work", None).await.map(drop)
    }
}

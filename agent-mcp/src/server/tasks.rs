//! Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a call of a tool
//! that opts in (`#[tool(task)]`, [`TaskSupport`]) answers at once with a task its
//! client polls (`tasks/get`), answers (`tasks/update`) and may cancel (`tasks/cancel`);
//! an `on_demand` tool's call becomes one where its tool says so, after asking on the
//! call. The rounds run here are tracked, so a shutdown can wait for them.
//!
//! What serving tasks means for a tool's author is documented on the public `tasks`
//! module (`crate::tasks`).

use super::McpServer;
use super::access;
use super::approval::ApprovalMode;
use super::input::{APPROVAL_KEY, CallInput, asks_by_result};
use async_trait::async_trait;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelTaskParams, ClientCapabilities, CreateTaskResult,
    DetailedTask, GetTaskParams, GetTaskResult, InputRequests, JsonObject, Task, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolwright_core::exec::{ApprovalDecision, ApproveAll, Approver, CallOptions};
use toolwright_core::llm::ToolCall;
use toolwright_core::run::{ApprovalRecord, RunRecord, RunStatus, RunStore, StoreError};
use toolwright_core::tool::TaskSupport;
use toolwright_core::{Principal, Tool, ToolContext, ToolError};

/// Where a server keeps its tasks, and how long and how many.
#[derive(Clone)]
pub struct TaskOptions {
    store: Arc<dyn TaskStore>,
    ttl: Duration,
    poll_interval: Duration,
    max_per_caller: usize,
    lease: Duration,
    runner: Option<Arc<dyn TaskRunner>>,
}

impl Default for TaskOptions {
    fn default() -> Self {
        Self {
            store: Arc::new(MemoryTaskStore::default()),
            ttl: Duration::from_secs(60 * 60),
            poll_interval: Duration::from_millis(500),
            max_per_caller: 32,
            lease: Duration::from_secs(30),
            runner: None,
        }
    }
}

impl fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskOptions")
            .field("ttl", &self.ttl)
            .field("poll_interval", &self.poll_interval)
            .field("max_per_caller", &self.max_per_caller)
            .field("lease", &self.lease)
            .field("runner", &self.runner.is_some())
            .finish_non_exhaustive()
    }
}

impl TaskOptions {
    /// Keeps tasks in `store`.
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = store;
        self
    }

    /// Keeps tasks in a core [`RunStore`] (such as `toolwright-store`'s SQLite store),
    /// each as a run named `mcp-task:<id>` of the session named after its caller, so
    /// tasks outlive the server.
    pub fn run_store(self, store: Arc<dyn RunStore>) -> Self {
        self.store(Arc::new(RunStoreTasks(store)))
    }

    /// How long a task is kept after it starts (`ttlMs`); one hour by default. An older
    /// task is forgotten: `tasks/get` says it does not exist.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl.max(Duration::from_millis(1));
        self
    }

    /// How often clients are asked to poll (`pollIntervalMs`); half a second by default.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// At most this many unfinished tasks per caller (by authenticated principal;
    /// callers of a server without authentication share one allowance); 32 by default.
    /// A call that would start one more is refused.
    pub fn max_per_caller(mut self, max: usize) -> Self {
        self.max_per_caller = max;
        self
    }

    /// How long a server's word that it runs a task holds; 30 seconds by default.
    ///
    /// Several servers can share one [`TaskStore`] (stateless servers behind a load
    /// balancer): a task runs on the server that started or resumed it, and any of them
    /// answers `tasks/get`, `tasks/update` and `tasks/cancel`. The running server renews
    /// its lease on the task three times per `lease` and, on each renewal, reads the
    /// store, so that a cancellation taken by another server stops the task there. A task
    /// still `working` whose lease ran out lost its server (the process died without
    /// shutting down): whichever server is asked next records it as failed. Longer means
    /// fewer writes, and more time before a dead server's tasks read as failed.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(3));
        self
    }

    /// Hands the work of every task to `runner` instead of running it in this process:
    /// the call of a task tool is stored, handed to the runner, and answered with its
    /// task; the runner runs the call where it runs ([`McpServer::run_task`]) and
    /// settles the stored record ([`TaskRecord::settle`]). No server holds a lease on
    /// such a task, so the death of the server that started it does not fail it, and
    /// `tasks/cancel` on any server sharing the store asks the runner to stop it.
    ///
    /// The caller's principal (subject, scopes and token claims, not the token) is kept
    /// in the task's record, so that the tool finds it in its context where it runs.
    ///
    /// A task whose work runs elsewhere cannot ask its caller: a call of a tool that
    /// needs approval (under [`ApprovalMode::Elicit`](crate::ApprovalMode)) or asks on
    /// the call first (`task = "on_demand"`) is refused, and a tool that asks with
    /// [`McpPeer::ask`](crate::McpPeer::ask) finds no `McpPeer` in its context (an error
    /// result that completes the task).
    pub fn runner(mut self, runner: Arc<dyn TaskRunner>) -> Self {
        self.runner = Some(runner);
        self
    }
}

/// Where the work of tasks runs when not in the server that started them
/// ([`TaskOptions::runner`]): a durable executor, such as toolwright-restate's.
#[async_trait]
pub trait TaskRunner: Send + Sync {
    /// Hands over the work of the task `record`, stored as `working`: from here on the
    /// runner runs its call ([`McpServer::run_task`] on a server holding the same tools)
    /// and settles the record in the store when it ends ([`TaskRecord::settle`]). An
    /// `Err` means the work was not handed over: the task is recorded as failed.
    async fn start(&self, record: &TaskRecord) -> Result<(), StoreError>;

    /// Stops the work of task `id`, wherever it runs; the server records the task as
    /// cancelled once this returns `Ok`.
    async fn cancel(&self, id: &str) -> Result<(), StoreError>;
}

/// How a task's work ended, as [`McpServer::run_task`] answers it, to be recorded with
/// [`TaskRecord::settle`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOutcome {
    status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<JsonObject>,
}

impl TaskOutcome {
    /// `completed` or `failed`.
    pub fn status(&self) -> TaskStatus {
        self.status
    }

    /// The outcome of a call of the task's tool: its result completes the task (a tool's
    /// error result too), a protocol-level error fails it.
    fn of(outcome: Result<CallToolResult, McpError>) -> Self {
        match outcome {
            Ok(result) => Self {
                status: TaskStatus::Completed,
                result: match serde_json::to_value(result) {
                    Ok(Value::Object(result)) => Some(result),
                    _ => Some(JsonObject::new()),
                },
                error: None,
            },
            Err(error) => Self {
                status: TaskStatus::Failed,
                result: None,
                error: Some(error_object(&error)),
            },
        }
    }
}

/// The caller of a task whose work runs elsewhere, kept with the task, so that its tool
/// finds the same [`Principal`] in its context there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Caller {
    subject: String,
    #[serde(default)]
    scopes: BTreeSet<String>,
    #[serde(default)]
    claims: Map<String, Value>,
}

/// A task as a [`TaskStore`] keeps it. Stores keep it whole and find it by
/// [`id`](Self::id); what is inside is the server's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    id: String,
    owner: String,
    tool: String,
    arguments: JsonObject,
    status: TaskStatus,
    created_at: String,
    last_updated_at: String,
    created_ms: u64,
    ttl_ms: u64,
    poll_interval_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input_requests: Option<InputRequests>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<JsonObject>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<JsonObject>,
    /// The answers given so far, by question key.
    #[serde(default)]
    answers: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approval: Option<ApprovalRecord>,
    /// Until when (ms since the epoch) the server running the task vouches for it:
    /// renewed while it runs, so a `working` task past it has lost its server.
    #[serde(default)]
    lease_until_ms: u64,
    /// Its work was handed to a [`TaskRunner`]: no server holds a lease on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    handed_off: bool,
    /// The authenticated caller, for a task handed to a [`TaskRunner`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    caller: Option<Caller>,
    /// Starts at 1 and grows with every save.
    revision: u64,
}

impl TaskRecord {
    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Who started it: the principal's subject, or `anonymous` without authentication.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Where it stands.
    pub fn status(&self) -> TaskStatus {
        self.status
    }

    /// Its revision: 1 when created, one more with every save.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Whether its work was handed to a [`TaskRunner`] ([`TaskOptions::runner`]).
    pub fn handed_off(&self) -> bool {
        self.handed_off
    }

    /// Records how its work ended, one revision more, unless it has ended already (a
    /// cancellation came first): whether it did. For a [`TaskRunner`] settling the
    /// stored record in place.
    pub fn settle(&mut self, outcome: TaskOutcome) -> bool {
        if self.status.is_terminal() {
            return false;
        }
        self.apply(outcome);
        self.input_requests = None;
        self.revision += 1;
        self.touch();
        true
    }

    fn apply(&mut self, outcome: TaskOutcome) {
        self.status = outcome.status;
        self.result = outcome.result;
        self.error = outcome.error;
    }

    /// When it is forgotten, in milliseconds since the Unix epoch: its start plus its
    /// time to live (`ttlMs`). From then on servers read it as unknown, and a store may
    /// delete it.
    pub fn expires_at_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    fn expired(&self, now: u64) -> bool {
        now >= self.expires_at_ms()
    }

    fn touch(&mut self) {
        self.last_updated_at = timestamp(now_ms());
    }

    /// The task as `tasks/get` shows it.
    fn detailed(&self) -> DetailedTask {
        let mut task = Task::new(
            self.id.clone(),
            self.status,
            self.created_at.clone(),
            self.last_updated_at.clone(),
        )
        .with_ttl_ms(self.ttl_ms)
        .with_poll_interval_ms(self.poll_interval_ms);
        let payload = match self.status {
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: self.input_requests.clone().unwrap_or_default(),
            },
            TaskStatus::Completed => TaskPayload::Completed {
                result: self.result.clone().unwrap_or_default(),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: self.error.clone().unwrap_or_default(),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        task.status = payload.status();
        DetailedTask::new(task, payload)
    }
}

/// Storage for tasks: a save replaces the task's record, a load reads it back.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Stores `record`, replacing the task's earlier one.
    async fn save(&self, record: &TaskRecord) -> Result<(), StoreError>;

    /// The record of task `id`, if stored.
    async fn load(&self, id: &str) -> Result<Option<TaskRecord>, StoreError>;
}

/// Tasks in this process's memory, forgotten when they expire.
#[derive(Debug, Default)]
pub struct MemoryTaskStore(Mutex<HashMap<String, TaskRecord>>);

#[async_trait]
impl TaskStore for MemoryTaskStore {
    async fn save(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let now = now_ms();
        let mut tasks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.retain(|_, task| !task.expired(now));
        tasks.insert(record.id.clone(), record.clone());
        Ok(())
    }

    async fn load(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned())
    }
}

/// Tasks in a core [`RunStore`]: each a run record whose revision is the task's.
struct RunStoreTasks(Arc<dyn RunStore>);

const RUN_PREFIX: &str = "mcp-task:";

#[async_trait]
impl TaskStore for RunStoreTasks {
    async fn save(&self, record: &TaskRecord) -> Result<(), StoreError> {
        let state =
            serde_json::to_string(record).map_err(|e| StoreError::backend("writing a task", e))?;
        // Not `WaitingForHuman`: agents resuming waiting runs must not find tasks.
        let status = match record.status {
            TaskStatus::Completed => RunStatus::Finished,
            TaskStatus::Failed => RunStatus::Failed,
            TaskStatus::Cancelled => RunStatus::Cancelled,
            _ => RunStatus::Ready,
        };
        self.0
            .save(&RunRecord {
                run_id: format!("{RUN_PREFIX}{}", record.id),
                session_id: record.owner.clone(),
                status,
                revision: record.revision,
                state,
            })
            .await
    }

    async fn load(&self, id: &str) -> Result<Option<TaskRecord>, StoreError> {
        let Some(run) = self.0.load(&format!("{RUN_PREFIX}{id}")).await? else {
            return Ok(None);
        };
        let record: TaskRecord = serde_json::from_str(&run.state)
            .map_err(|e| StoreError::backend("reading a stored task", e))?;
        // A row whose task is another (or another revision) was edited: not this task.
        if record.id != id || record.revision != run.revision {
            return Err(StoreError::backend(
                "reading a stored task",
                format!("the row of task `{id}` holds another task or revision"),
            ));
        }
        Ok(Some(record))
    }
}

/// A task this process knows of: its record (saved on every change, under this lock,
/// so changes are saved in order) and the cancellation of its running call.
struct Live {
    record: tokio::sync::Mutex<TaskRecord>,
    cancel: CancellationToken,
    /// Whether a round of its call runs in this process now.
    running: AtomicBool,
    /// Its round was stopped by the server's shutdown, not by its client.
    shut_down: AtomicBool,
}

impl Live {
    fn new(record: TaskRecord) -> Arc<Self> {
        Arc::new(Self {
            record: tokio::sync::Mutex::new(record),
            cancel: CancellationToken::new(),
            running: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
        })
    }
}

/// The tasks of one server.
pub(crate) struct Tasks {
    options: TaskOptions,
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// The rounds running in this process, which a shutdown waits for.
    rounds: TaskTracker,
    /// Set when the server starts shutting down: no task starts or resumes after it.
    closing: AtomicBool,
    /// The tasks started by rounds of plain calls, by the nonce of the round's
    /// `requestState`, with when that state expires (ms since the epoch), so that a
    /// retried round is answered with its task rather than starting another.
    by_state: Mutex<HashMap<String, (String, u64)>>,
}

impl Tasks {
    pub(crate) fn new(options: TaskOptions) -> Self {
        Self {
            options,
            live: Mutex::default(),
            rounds: TaskTracker::new(),
            closing: AtomicBool::new(false),
            by_state: Mutex::default(),
        }
    }

    /// Refuses to start or resume a task once the server is shutting down: nothing
    /// would be left to run it.
    fn refuse_when_closing(&self) -> Result<(), McpError> {
        if self.closing.load(Ordering::Acquire) {
            return Err(McpError::internal_error(
                "the server is shutting down and starts no task; call again once it is back",
                None,
            ));
        }
        Ok(())
    }

    /// Remembers that the round with the state named `nonce` started task `id`.
    fn remember_state(&self, nonce: String, id: String, expires: u64) {
        let now = now_ms();
        let mut by_state = self.by_state.lock().unwrap_or_else(PoisonError::into_inner);
        by_state.retain(|_, (_, until)| *until > now);
        by_state.insert(nonce, (id, expires));
    }

    /// The task the round with the state named `nonce` started, while that state lives.
    fn started_by(&self, nonce: &str) -> Option<String> {
        let by_state = self.by_state.lock().unwrap_or_else(PoisonError::into_inner);
        by_state
            .get(nonce)
            .filter(|(_, until)| *until > now_ms())
            .map(|(id, _)| id.clone())
    }

    /// Lets the rounds running here finish for up to `grace`, then stops those still
    /// running and records their tasks as failed. No task starts or resumes from the
    /// moment this is called.
    async fn shut_down(&self, grace: Duration) {
        self.closing.store(true, Ordering::Release);
        self.rounds.close();
        if tokio::time::timeout(grace, self.rounds.wait())
            .await
            .is_ok()
        {
            return;
        }
        let running: Vec<Arc<Live>> = self
            .live()
            .values()
            .filter(|live| live.running.load(Ordering::Acquire))
            .cloned()
            .collect();
        for live in running {
            live.shut_down.store(true, Ordering::Release);
            live.cancel.cancel();
            // Recorded here rather than left to the round, which may not get to run
            // again before the process ends; the round, if it does, records the same.
            let mut record = live.record.lock().await;
            if record.status == TaskStatus::Working {
                stopped(&mut record);
                if let Err(error) = self.save(&mut record).await {
                    tracing::warn!(target: "toolwright_mcp::tasks", task = %record.id, %error.message, "a task stopped by the shutdown could not be saved");
                }
            }
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Live>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task `id` of `owner`: the one running in this process, or else the stored
    /// one (another server sharing the store may have changed it since this one last
    /// looked). Another owner's task, an expired one and a forged id are all "unknown".
    async fn find(&self, id: &str, owner: &str) -> Result<Arc<Live>, McpError> {
        let found = self.live().get(id).cloned();
        let live = match found {
            Some(live) if live.running.load(Ordering::Acquire) => live,
            found => {
                let stored = self
                    .options
                    .store
                    .load(id)
                    .await
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?
                    .ok_or_else(|| unknown_task(id))?;
                match found {
                    Some(live) => {
                        let mut record = live.record.lock().await;
                        if stored.revision > record.revision {
                            *record = stored;
                        }
                        drop(record);
                        live
                    }
                    None => {
                        let live = Live::new(stored);
                        self.live().entry(id.to_owned()).or_insert(live).clone()
                    }
                }
            }
        };
        let mut record = live.record.lock().await;
        let now = now_ms();
        if record.owner != owner || record.expired(now) {
            return Err(unknown_task(id));
        }
        // Working, not here, and nobody renewed its lease: the process running it died,
        // and it will never finish. (A task handed to a runner runs on no server, and
        // takes no lease.)
        if record.status == TaskStatus::Working
            && !record.handed_off
            && !live.running.load(Ordering::Acquire)
            && record.lease_until_ms <= now
        {
            record.status = TaskStatus::Failed;
            record.error = Some(error_object(&McpError::internal_error(
                "the server running this task stopped before it finished; call the tool again",
                None,
            )));
            record.touch();
            self.save(&mut record).await?;
        }
        // Finished tasks are read from the store when asked about again.
        if record.status.is_terminal() && !live.running.load(Ordering::Acquire) {
            self.forget_finished(id);
        }
        drop(record);
        Ok(live)
    }

    /// How many of `owner`'s tasks in `table` are unfinished, as this server last saw
    /// them.
    fn open(table: &HashMap<String, Arc<Live>>, owner: &str) -> usize {
        table
            .values()
            .filter(|live| {
                live.record
                    .try_lock()
                    // A task being changed right now counts as unfinished.
                    .map_or(true, |r| r.owner == owner && !r.status.is_terminal())
            })
            .count()
    }

    /// Reads the records of `owner`'s tasks handed to a runner, forgetting those that
    /// have ended (or expired, or are gone) since this server saw them.
    async fn refresh_handed_off(&self, owner: &str) {
        let handed_off: Vec<Arc<Live>> = self
            .live()
            .values()
            .filter(|live| {
                live.record
                    .try_lock()
                    .is_ok_and(|r| r.owner == owner && r.handed_off && !r.status.is_terminal())
            })
            .cloned()
            .collect();
        for live in handed_off {
            let mut record = live.record.lock().await;
            match self.options.store.load(&record.id).await {
                Ok(Some(stored)) if !stored.status.is_terminal() && !stored.expired(now_ms()) => {
                    if stored.revision > record.revision {
                        *record = stored;
                    }
                }
                Ok(_) => self.forget_finished(&record.id),
                Err(error) => {
                    tracing::warn!(target: "toolwright_mcp::tasks", task = %record.id, %error, "a handed-off task's record could not be read");
                }
            }
        }
    }

    /// Hands `live`'s task, stored, to `runner`; if it cannot take it, the task is
    /// recorded as failed and the call is answered with the error.
    async fn hand_off(&self, runner: &dyn TaskRunner, live: &Live) -> Result<(), McpError> {
        let mut record = live.record.lock().await;
        let Err(error) = runner.start(&record).await else {
            return Ok(());
        };
        let error = McpError::internal_error(
            format!("the task's work could not be handed to its runner: {error}"),
            None,
        );
        record.apply(TaskOutcome::of(Err(error.clone())));
        record.touch();
        if let Err(unsaved) = self.save(&mut record).await {
            tracing::warn!(target: "toolwright_mcp::tasks", task = %record.id, %unsaved.message, "a task its runner refused could not be saved as failed");
        }
        self.forget_finished(&record.id);
        Err(error)
    }

    /// Stops the work of `record`'s task through the runner it was handed to, then
    /// records it as cancelled, unless its runner settled it first.
    async fn cancel_handed_off(&self, record: &mut TaskRecord) -> Result<(), McpError> {
        let Some(runner) = &self.options.runner else {
            return Err(McpError::internal_error(
                "this task runs on a task runner, and this server has none to cancel it \
                 with; cancel it on a server given the same runner (`TaskOptions::runner`)",
                None,
            ));
        };
        runner.cancel(&record.id).await.map_err(|e| {
            McpError::internal_error(format!("the task's runner could not cancel it: {e}"), None)
        })?;
        // The runner may settle the task up to the moment its work stops: the record
        // is saved from the stored one, and a conflict means the runner saved first.
        let mut last = None;
        for _ in 0..3 {
            let mut stored = self
                .options
                .store
                .load(&record.id)
                .await
                .map_err(|e| McpError::internal_error(e.to_string(), None))?
                .ok_or_else(|| unknown_task(&record.id))?;
            if !stored.status.is_terminal() {
                stored.status = TaskStatus::Cancelled;
                stored.input_requests = None;
                stored.touch();
                if let Err(error) = self.save(&mut stored).await {
                    last = Some(error);
                    continue;
                }
            }
            *record = stored;
            return Ok(());
        }
        Err(last.unwrap_or_else(|| McpError::internal_error("the task could not be saved", None)))
    }

    /// When a lease taken now runs out.
    fn lease_until(&self) -> u64 {
        now_ms().saturating_add(millis(self.options.lease))
    }

    /// Runs `call`, a round of `live`'s task, renewing the task's lease while it runs.
    async fn hold<F: Future>(&self, live: &Live, call: F) -> F::Output {
        let every = self.options.lease / 3;
        let mut call = std::pin::pin!(call);
        loop {
            tokio::select! {
                output = &mut call => return output,
                () = tokio::time::sleep(every) => self.renew(live).await,
            }
        }
    }

    /// Renews `live`'s lease, first taking what another server saved since: a task it
    /// cancelled (or found dead and failed) stops running here.
    async fn renew(&self, live: &Live) {
        let mut record = live.record.lock().await;
        if record.status != TaskStatus::Working {
            return;
        }
        match self.options.store.load(&record.id).await {
            Ok(Some(stored)) if stored.revision > record.revision => {
                let settled = stored.status.is_terminal();
                *record = stored;
                if settled {
                    live.cancel.cancel();
                    return;
                }
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(target: "toolwright_mcp::tasks", task = %record.id, %error, "a running task's record could not be read to renew its lease");
            }
        }
        record.lease_until_ms = self.lease_until();
        if let Err(error) = self.save(&mut record).await {
            tracing::warn!(target: "toolwright_mcp::tasks", task = %record.id, %error.message, "a running task's lease could not be renewed");
        }
    }

    async fn save(&self, record: &mut TaskRecord) -> Result<(), McpError> {
        record.revision += 1;
        self.options.store.save(record).await.map_err(|e| {
            record.revision -= 1;
            McpError::internal_error(format!("the task could not be saved: {e}"), None)
        })
    }

    /// Drops finished tasks from memory (their records stay in the store).
    fn forget_finished(&self, id: &str) {
        self.live().remove(id);
    }
}

/// Records `record`'s task as failed by the server's shutdown.
fn stopped(record: &mut TaskRecord) {
    record.status = TaskStatus::Failed;
    record.input_requests = None;
    record.error = Some(error_object(&McpError::internal_error(
        "the server shut down before this task finished; call the tool again",
        None,
    )));
    record.touch();
}

fn unknown_task(id: &str) -> McpError {
    McpError::invalid_params(
        format!(
            "unknown task `{id}`: no task with this id was started by this caller, or it \
             expired; start it again with `tools/call`"
        ),
        None,
    )
}

/// The caller a task belongs to.
fn owner(context: &RequestContext<RoleServer>) -> String {
    access::principal(context).map_or_else(|| "anonymous".to_owned(), |p| p.subject)
}

/// What a `tools/call` of a task tool does: `None` when it runs as a plain call.
pub(crate) enum TaskCall {
    /// Run it as a task.
    Task,
    /// Run it as a plain call that becomes a task where the tool says so
    /// (`McpPeer::continue_as_task`).
    OnDemand,
    /// The tool runs only as a task, and this client does not support tasks.
    Refused(McpError),
}

/// How the call of `support`'s tool from `context`'s client runs.
pub(crate) fn plan(support: TaskSupport, context: &RequestContext<RoleServer>) -> Option<TaskCall> {
    let declared = context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks());
    match support {
        // Asking on the call needs multi-round-trip calls; on an older session the tool
        // asks inside the task, so there the call is a task at once.
        TaskSupport::OnDemand if declared && asks_by_result(context) => Some(TaskCall::OnDemand),
        TaskSupport::Optional | TaskSupport::Required | TaskSupport::OnDemand if declared => {
            Some(TaskCall::Task)
        }
        TaskSupport::Required => Some(TaskCall::Refused(
            McpError::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ),
        )),
        _ => None,
    }
}

/// What a task starts with: the answers and approval its call gathered before it
/// became a task.
#[derive(Default)]
struct Begun {
    answers: Map<String, Value>,
    approval: Option<ApprovalRecord>,
}

impl McpServer {
    /// Whether tasks' work is handed to a [`TaskRunner`].
    pub(crate) fn hands_tasks_off(&self) -> bool {
        self.shared.tasks.options.runner.is_some()
    }

    /// Starts `request` as a task: stored before its id is answered, then run.
    pub(crate) async fn start_task(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CreateTaskResult, McpError> {
        let arguments = request.arguments.unwrap_or_default();
        self.create_task(
            request.name.to_string(),
            arguments,
            Begun::default(),
            context,
        )
        .await
    }

    /// Starts the call of `tool` with `arguments` as a task, from the round of a plain
    /// call whose tool said `continue_as_task` (`input`): the task keeps the round's
    /// answers and approval, so the tool, run again inside it, is not asked again.
    /// `state` is the nonce of the round's `requestState` with when it expires: a retry
    /// of the round is answered with this task.
    pub(crate) async fn start_task_from(
        &self,
        tool: String,
        arguments: JsonObject,
        input: &CallInput,
        context: RequestContext<RoleServer>,
        state: Option<(String, u64)>,
    ) -> Result<CreateTaskResult, McpError> {
        let begun = Begun {
            answers: input.answers().clone(),
            approval: input.approval(),
        };
        let created = self.create_task(tool, arguments, begun, context).await?;
        if let Some((nonce, expires)) = state {
            self.shared
                .tasks
                .remember_state(nonce, created.task.task_id.clone(), expires);
        }
        Ok(created)
    }

    /// The task a round with the state named `nonce` started, as its retry is answered:
    /// `None` when it started none (or it is gone).
    pub(crate) async fn task_started_by(
        &self,
        nonce: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CreateTaskResult>, McpError> {
        let tasks = &self.shared.tasks;
        let Some(id) = tasks.started_by(nonce) else {
            return Ok(None);
        };
        // The state is bound to its caller, so this is the caller's task.
        let Ok(live) = tasks.find(&id, &owner(context)).await else {
            return Ok(None);
        };
        let record = live.record.lock().await;
        Ok(Some(CreateTaskResult::new(record.detailed().task)))
    }

    /// Stores a task for the call of `tool`, then runs it.
    async fn create_task(
        &self,
        tool: String,
        arguments: JsonObject,
        begun: Begun,
        context: RequestContext<RoleServer>,
    ) -> Result<CreateTaskResult, McpError> {
        let tasks = &self.shared.tasks;
        tasks.refuse_when_closing()?;
        let owner = owner(&context);
        if !access::may_use(&context, &tool) {
            let catalog = self.shared.catalog();
            return Err(access::unknown_tool(
                catalog.runner.tools(),
                &tool,
                &context,
            ));
        }
        let runner = tasks.options.runner.clone();
        if runner.is_some() {
            self.refuse_handing_off(&tool, &arguments, &begun)?;
        }
        let max = tasks.options.max_per_caller;
        // Tasks handed off end elsewhere, unseen here: at the limit, their records say
        // which have ended.
        if runner.is_some() && Tasks::open(&tasks.live(), &owner) >= max {
            tasks.refresh_handed_off(&owner).await;
        }
        let live = {
            let mut table = tasks.live();
            let open = Tasks::open(&table, &owner);
            if open >= max {
                return Err(McpError::invalid_request(
                    format!(
                        "this caller has {open} unfinished tasks, the most this server \
                         allows; wait for one to finish, or cancel one with `tasks/cancel`"
                    ),
                    None,
                ));
            }
            let now = now_ms();
            let id = super::input::hex(&super::input::random_bytes::<16>());
            let record = TaskRecord {
                id: id.clone(),
                owner,
                tool,
                arguments,
                status: TaskStatus::Working,
                created_at: timestamp(now),
                last_updated_at: timestamp(now),
                created_ms: now,
                ttl_ms: millis(tasks.options.ttl),
                poll_interval_ms: millis(tasks.options.poll_interval),
                input_requests: None,
                result: None,
                error: None,
                answers: begun.answers,
                approval: begun.approval,
                lease_until_ms: tasks.lease_until(),
                handed_off: runner.is_some(),
                caller: runner
                    .as_ref()
                    .and_then(|_| access::principal(&context))
                    .map(|p| Caller {
                        subject: p.subject,
                        scopes: p.scopes,
                        claims: p.claims,
                    }),
                revision: 0,
            };
            let live = Live::new(record);
            table.insert(id, live.clone());
            live
        };
        let task = {
            let mut record = live.record.lock().await;
            if let Err(error) = tasks.save(&mut record).await {
                tasks.forget_finished(&record.id);
                return Err(error);
            }
            record.detailed().task
        };
        match runner {
            Some(runner) => tasks.hand_off(runner.as_ref(), &live).await?,
            None => self.spawn_round(live, context),
        }
        Ok(CreateTaskResult::new(task))
    }

    /// Refuses a task whose tool would ask its caller, when its work is to run on a
    /// [`TaskRunner`]: there is no caller to ask there.
    fn refuse_handing_off(
        &self,
        tool: &str,
        arguments: &JsonObject,
        begun: &Begun,
    ) -> Result<(), McpError> {
        let catalog = self.shared.catalog();
        let Some(found) = catalog.runner.tools().get(tool) else {
            // Unknown: the runner's call says so, as a local call would.
            return Ok(());
        };
        let asks_first = found.task_support() == TaskSupport::OnDemand
            || !begun.answers.is_empty()
            || begun.approval.is_some();
        let call = ToolCall::new("", tool, Value::Object(arguments.clone()));
        let needs_approval = self.shared.options.approval == ApprovalMode::Elicit
            && catalog.runner.needs_approval(&call, found.as_ref());
        if asks_first || needs_approval {
            let why = if asks_first {
                "asks its caller before it becomes a task (`task = \"on_demand\"`)"
            } else {
                "needs a person's approval"
            };
            return Err(McpError::invalid_request(
                format!(
                    "tool `{tool}` {why}, and this server runs tasks on a task runner, \
                     where nobody can be asked; the call did not run"
                ),
                None,
            ));
        }
        Ok(())
    }

    /// Runs the task's call once, in the background, with the answers it has.
    fn spawn_round(&self, live: Arc<Live>, mut context: RequestContext<RoleServer>) {
        let server = self.clone();
        // The round outlives the request that started it, and is cancelled with the task.
        context.ct = live.cancel.child_token();
        live.running.store(true, Ordering::Release);
        let rounds = self.shared.tasks.rounds.clone();
        rounds.spawn(async move {
            let (request, input) = {
                let record = live.record.lock().await;
                let mut answers = record.answers.clone();
                let approval_answer = answers.remove(APPROVAL_KEY);
                let mut request = CallToolRequestParams::new(record.tool.clone())
                    .with_arguments(record.arguments.clone());
                request.meta = None;
                let input = Arc::new(CallInput::for_task(
                    answers,
                    approval_answer,
                    record.approval.clone(),
                    &context,
                    record.owner.clone(),
                    record.id.clone(),
                ));
                (request, input)
            };
            let tasks = &server.shared.tasks;
            let outcome = tasks
                .hold(
                    &live,
                    server.run_call_with(request, context, Some(input.clone())),
                )
                .await;
            let mut record = live.record.lock().await;
            let pending = input.take_pending();
            if record.status.is_terminal() {
                // Settled by another server sharing the store (a cancellation): kept.
            } else if live.shut_down.load(Ordering::Acquire) {
                stopped(&mut record);
            } else if live.cancel.is_cancelled() {
                record.status = TaskStatus::Cancelled;
            } else {
                match outcome {
                    Ok(_) if !pending.is_empty() => {
                        record.status = TaskStatus::InputRequired;
                        record.approval = input.approval();
                        record.input_requests = Some(
                            pending
                                .into_iter()
                                .map(|(key, (_, request))| (key, request))
                                .collect(),
                        );
                    }
                    outcome => record.apply(TaskOutcome::of(outcome)),
                }
            }
            record.touch();
            live.running.store(false, Ordering::Release);
            if let Err(error) = tasks.save(&mut record).await {
                tracing::warn!(target: "toolwright_mcp::tasks", task = %record.id, %error.message, "a task's outcome could not be saved");
            }
            if record.status.is_terminal() {
                tasks.forget_finished(&record.id);
            }
        });
    }

    /// Lets the tasks running in this process finish, for up to `grace`; then stops
    /// those still running and records each as `failed`, saying the server shut down,
    /// so that no stored task reads `working` with nothing left to run it. From the
    /// moment this is called, no task starts (a call that would start one is refused)
    /// and none resumes (its answers are refused, and it keeps waiting on them for the
    /// next server that opens the store). Tasks waiting on their client's answers, and
    /// finished ones, are left as they are.
    ///
    /// [`McpHttpServer`](crate::McpHttpServer) does this when it shuts down, with its
    /// shutdown grace; a server mounted in an application's own router
    /// ([`router`](Self::router)) calls it at the application's shutdown.
    pub async fn shutdown_tasks(&self, grace: Duration) {
        self.shared.tasks.shut_down(grace).await;
    }

    /// Runs the call of the task `record`, handed to this process by a [`TaskRunner`],
    /// as the server that started it would have run it: with the same tools and call
    /// options, the caller's [`Principal`] in its context, and its idempotency key
    /// (`owner:task-id`) the same however often it runs. Answers how it ended, for the
    /// runner to record ([`TaskRecord::settle`]); the record itself is not touched.
    ///
    /// There is no client to ask: a call that needs approval is denied (under
    /// [`ApprovalMode::Elicit`](crate::ApprovalMode)), and a tool that asks with
    /// [`McpPeer::ask`](crate::McpPeer::ask) finds no `McpPeer` in its context.
    pub async fn run_task(&self, record: &TaskRecord) -> TaskOutcome {
        let catalog = self.shared.catalog();
        let mut ctx = ToolContext::new(record.owner.as_str());
        if let Some(caller) = &record.caller {
            ctx = ctx.with_state(Principal {
                subject: caller.subject.clone(),
                scopes: caller.scopes.clone(),
                claims: caller.claims.clone(),
            });
        }
        let call = ToolCall::new(
            record.id.clone(),
            record.tool.clone(),
            Value::Object(record.arguments.clone()),
        );
        let approver: &dyn Approver = match self.shared.options.approval {
            ApprovalMode::Elicit => &NobodyToAsk,
            ApprovalMode::TrustClient => &ApproveAll,
        };
        let result = catalog
            .runner
            .run_with(call, ctx, approver, CallOptions::new())
            .await;
        TaskOutcome::of(super::call_result(result))
    }

    pub(crate) async fn get_task_state(
        &self,
        params: GetTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let live = self
            .shared
            .tasks
            .find(&params.task_id, &owner(context))
            .await?;
        let record = live.record.lock().await;
        Ok(GetTaskResult::new(record.detailed()))
    }

    pub(crate) async fn update_task_state(
        &self,
        params: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let tasks = &self.shared.tasks;
        let live = tasks.find(&params.task_id, &owner(&context)).await?;
        let mut record = live.record.lock().await;
        if record.status != TaskStatus::InputRequired {
            return Ok(());
        }
        // Before any answer is taken: the task keeps waiting, for the next server.
        tasks.refuse_when_closing()?;
        let mut pending = record.input_requests.take().unwrap_or_default();
        // Only answers to questions still open are taken; others are ignored.
        for (key, answer) in params.input_responses {
            if pending.remove(&key).is_some() {
                record.answers.insert(key, answer);
            }
        }
        let resume = pending.is_empty();
        if resume {
            record.status = TaskStatus::Working;
            record.lease_until_ms = tasks.lease_until();
        } else {
            record.input_requests = Some(pending);
        }
        record.touch();
        tasks.save(&mut record).await?;
        drop(record);
        if resume {
            self.spawn_round(live, context);
        }
        Ok(())
    }

    pub(crate) async fn cancel_task_state(
        &self,
        params: CancelTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let tasks = &self.shared.tasks;
        let live = tasks.find(&params.task_id, &owner(context)).await?;
        let mut record = live.record.lock().await;
        if record.status.is_terminal() {
            return Ok(());
        }
        if record.handed_off {
            tasks.cancel_handed_off(&mut record).await?;
            tasks.forget_finished(&record.id);
            return Ok(());
        }
        live.cancel.cancel();
        // A call running here settles as cancelled when it stops. A task waiting on
        // answers runs nothing, and one running on another server sharing the store
        // stops there when that server next renews its lease: both are cancelled now.
        if record.status == TaskStatus::InputRequired || !live.running.load(Ordering::Acquire) {
            record.status = TaskStatus::Cancelled;
            record.input_requests = None;
            record.touch();
            tasks.save(&mut record).await?;
            tasks.forget_finished(&record.id);
        }
        Ok(())
    }
}

/// Denies every call that needs approval: a task whose work runs on a [`TaskRunner`]
/// has no caller to ask.
struct NobodyToAsk;

#[async_trait]
impl Approver for NobodyToAsk {
    async fn approve(&self, call: &ToolCall, _tool: &dyn Tool) -> ApprovalDecision {
        ApprovalDecision::Denied(ToolError::denied(format!(
            "`{}` needs a person's approval, and this task runs on a task runner, where \
             nobody can be asked; the call did not run",
            call.name
        )))
    }
}

/// A JSON-RPC error as a failed task inlines it.
fn error_object(error: &McpError) -> JsonObject {
    match serde_json::to_value(error) {
        Ok(Value::Object(error)) => error,
        _ => JsonObject::new(),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, millis)
}

/// `ms` since the epoch as an RFC 3339 UTC timestamp.
fn timestamp(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(timestamp(1_798_761_599_000), "2026-12-31T23:59:59.000Z");
    }
}

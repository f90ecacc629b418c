//! Calling a server's tools as tasks (the `io.modelcontextprotocol/tasks` extension):
//! the client declares the extension, so a server may answer a call of one of its task
//! tools with a task instead of a result.
//!
//! A tool of [`McpClient::toolset`] awaits such a task for its caller: it polls the task
//! (as often as the server asks), answers the questions the task asks with the same
//! handlers that answer a server's other questions (elicitation, sampling, roots), and
//! cancels it when the call is cancelled. [`McpClient::start_task`] hands the task to
//! the application instead: [`McpTask`] reads it, answers it, cancels it, or waits for
//! its result.

use super::{ClientState, McpClient, answer_question, service_error};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult,
    DEFAULT_MRTR_MAX_ROUNDS, DetailedTask, GetTaskParams, InputResponses, TaskPayload,
    UpdateTaskParams,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use toolwright_core::{AgentError, AgentResult, ToolError};

/// How a call started as a task was answered.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskStart {
    /// The server runs the call as a task.
    Task(McpTask),
    /// The server answered at once (the tool does not run as a task, or finished
    /// quickly).
    Complete(CallToolResult),
}

/// A task on an MCP server: a call its server runs in the background.
pub struct McpTask {
    service: Arc<RunningService<RoleClient, ClientState>>,
    tool: Arc<str>,
    id: String,
    poll_interval: Duration,
}

impl std::fmt::Debug for McpTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTask")
            .field("tool", &self.tool)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Polls at least this often, and at most this rarely, whatever the server suggests.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(5));

impl McpTask {
    pub(crate) fn new(
        service: Arc<RunningService<RoleClient, ClientState>>,
        tool: Arc<str>,
        created: CreateTaskResult,
    ) -> Self {
        let poll_interval = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(500))
            .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
        Self {
            service,
            tool,
            id: created.task.task_id,
            poll_interval,
        }
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The task as the server reports it now (`tasks/get`): its status, and the
    /// questions it waits on, its result or its error.
    pub async fn get(&self) -> AgentResult<DetailedTask> {
        Ok(self.get_task().await?)
    }

    /// Answers the task's questions, by the keys of its `inputRequests` (`tasks/update`).
    pub async fn answer(&self, answers: InputResponses) -> AgentResult<()> {
        self.service
            .peer()
            .update_task(UpdateTaskParams::new(self.id.clone(), answers))
            .await
            .map_err(|e| service_error(&self.tool, e))?;
        Ok(())
    }

    /// Asks the server to cancel the task (`tasks/cancel`); [`get`](Self::get) shows when
    /// it has.
    pub async fn cancel(&self) -> AgentResult<()> {
        self.service
            .peer()
            .cancel_task(CancelTaskParams::new(self.id.clone()))
            .await
            .map_err(|e| service_error(&self.tool, e))?;
        Ok(())
    }

    /// Waits for the task's result, polling as often as the server suggests and
    /// answering its questions with the client's handlers. A task that failed or was
    /// cancelled is an error saying so.
    pub async fn wait(&self) -> AgentResult<CallToolResult> {
        Ok(self.settle().await?)
    }

    async fn get_task(&self) -> Result<DetailedTask, ToolError> {
        self.service
            .peer()
            .get_task(GetTaskParams::new(self.id.clone()))
            .await
            .map(|got| got.task)
            .map_err(|e| service_error(&self.tool, e))
    }

    /// [`wait`](Self::wait), for a tool's call.
    pub(crate) async fn settle(&self) -> Result<CallToolResult, ToolError> {
        loop {
            let task = self.get_task().await?;
            match task.payload {
                TaskPayload::Completed { result } => {
                    return serde_json::from_value(Value::Object(result)).map_err(|e| {
                        ToolError::execution(format!(
                            "the MCP server's result of task `{}` of `{}` is not a tool \
                             result: {e}",
                            self.id, self.tool
                        ))
                    });
                }
                TaskPayload::Failed { error } => {
                    let message = error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message");
                    return Err(ToolError::execution(format!(
                        "task `{}` of `{}` failed on the MCP server: {message}",
                        self.id, self.tool
                    )));
                }
                TaskPayload::Cancelled => return Err(ToolError::cancelled(&self.tool)),
                TaskPayload::InputRequired { input_requests } => {
                    let answers = futures::future::try_join_all(input_requests.into_iter().map(
                        |(key, request)| answer_question(&self.service, &self.tool, key, request),
                    ))
                    .await?;
                    self.service
                        .peer()
                        .update_task(UpdateTaskParams::new(
                            self.id.clone(),
                            answers.into_iter().collect(),
                        ))
                        .await
                        .map_err(|e| service_error(&self.tool, e))?;
                }
                // Working: the server says how long to wait before asking again.
                _ => tokio::time::sleep(self.poll_interval).await,
            }
        }
    }
}

impl McpClient {
    /// Calls the server's tool `name` with `arguments`, asking for a task: a server that
    /// runs the tool as a task answers with one ([`TaskStart::Task`]), which the
    /// application polls, answers, cancels or awaits; otherwise the result comes at once.
    /// Questions the server asks before it starts the task are answered by the client's
    /// handlers.
    pub async fn start_task(&self, name: &str, arguments: Value) -> AgentResult<TaskStart> {
        let Value::Object(arguments) = arguments else {
            return Err(AgentError::InvalidState(format!(
                "the arguments of `{name}` must be a JSON object, not {arguments}"
            )));
        };
        let tool: Arc<str> = Arc::from(name);
        let mut params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        for _round in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let response = self
                .service
                .peer()
                .call_tool_once(params.clone())
                .await
                .map_err(|e| service_error(name, e))?;
            let asked = match response {
                CallToolResponse::Task(created) => {
                    return Ok(TaskStart::Task(McpTask::new(
                        self.service.clone(),
                        tool,
                        created,
                    )));
                }
                CallToolResponse::Complete(result) => return Ok(TaskStart::Complete(result)),
                CallToolResponse::InputRequired(asked) => asked,
                other => {
                    return Err(AgentError::InvalidState(format!(
                        "the MCP server answered `{name}` in a way this client does not \
                         know: {other:?}"
                    )));
                }
            };
            let answers = futures::future::try_join_all(
                asked
                    .input_requests
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(key, request)| answer_question(&self.service, &tool, key, request)),
            )
            .await?;
            params.input_responses = Some(answers.into_iter().collect());
            params.request_state = asked.request_state;
        }
        Err(AgentError::InvalidState(format!(
            "the MCP server still asked for input after {DEFAULT_MRTR_MAX_ROUNDS} rounds of \
             answers to `{name}`, so the call was given up"
        )))
    }
}

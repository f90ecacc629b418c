//! Errors: [`ToolError`] is what a tool call produced for the model, [`AgentError`] is
//! what the framework returns to the application.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Result type used across the framework.
pub type AgentResult<T> = Result<T, AgentError>;

/// What kind of failure a tool call ended in. The kind survives every conversion, so
/// policies (retry, fail the run, report) can act on it without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// The arguments did not match the tool's schema.
    InvalidArguments,
    /// The tool ran and failed.
    Execution,
    /// The tool did not finish within its timeout.
    Timeout,
    /// The call was cancelled before it finished.
    Cancelled,
    /// No callable tool has that name.
    UnknownTool,
    /// A person or a policy refused the call.
    Denied,
}

impl ToolErrorKind {
    /// The kind's stable snake_case name, as it appears in serialized errors.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::Execution => "execution",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::UnknownTool => "unknown_tool",
            Self::Denied => "denied",
        }
    }

    /// Whether running the call again could succeed where this attempt failed: a timeout
    /// or an execution error (panics included). Invalid arguments, an unknown tool and a
    /// refusal fail alike every time, and a cancelled call is not wanted any more.
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::Execution | Self::Timeout)
    }
}

/// A failed tool call: a kind and a message written for the model to act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    kind: ToolErrorKind,
    message: String,
}

impl ToolError {
    /// A tool error of the given kind.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The arguments did not fit the schema; the message should name the field.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::new(ToolErrorKind::InvalidArguments, message)
    }

    /// The tool ran and failed.
    pub fn execution(message: impl Into<String>) -> Self {
        Self::new(ToolErrorKind::Execution, message)
    }

    /// The tool exceeded its timeout.
    pub fn timeout(tool: &str, timeout_ms: u64) -> Self {
        Self::new(
            ToolErrorKind::Timeout,
            format!("tool `{tool}` timed out after {timeout_ms}ms"),
        )
    }

    /// The call was cancelled.
    pub fn cancelled(tool: &str) -> Self {
        Self::new(
            ToolErrorKind::Cancelled,
            format!("tool `{tool}` was cancelled"),
        )
    }

    /// No callable tool has this name. `available` is listed so the model can correct
    /// itself; long lists are shortened.
    pub fn unknown_tool<'a>(name: &str, available: impl IntoIterator<Item = &'a str>) -> Self {
        const SHOWN: usize = 20;
        let mut names: Vec<&str> = available.into_iter().collect();
        names.sort_unstable();
        let listed = if names.is_empty() {
            "none".to_owned()
        } else if names.len() > SHOWN {
            format!(
                "{}, and {} more",
                names[..SHOWN].join(", "),
                names.len() - SHOWN
            )
        } else {
            names.join(", ")
        };
        Self::new(
            ToolErrorKind::UnknownTool,
            format!("Unknown tool: {name}. Available tools: {listed}"),
        )
    }

    /// A person or policy refused the call; the reason reaches the model.
    pub fn denied(reason: impl Into<String>) -> Self {
        Self::new(ToolErrorKind::Denied, reason)
    }

    /// The kind of failure.
    pub fn kind(&self) -> ToolErrorKind {
        self.kind
    }

    /// The message meant for the model.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

/// An error the framework returns to the application.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentError {
    /// A tool call failed; the [`ToolError`] keeps its kind.
    Tool(ToolError),
    /// A tool with this name is already registered.
    DuplicateTool(String),
    /// A tool cannot be registered as written (bad name, schema root not an object...).
    InvalidTool {
        /// The tool's name.
        tool: String,
        /// What is wrong and what was expected.
        reason: String,
    },
    /// The model client failed, and says how: rate limited, context too long..., or
    /// [`LlmError::Other`](crate::model::llm_error::LlmError::Other) with a message.
    Model(crate::model::llm_error::LlmError),
    /// The application asked for something the current state does not allow.
    InvalidState(String),
    /// The run went beyond one of its [`UsageLimits`](crate::model::usage::UsageLimits).
    UsageLimit {
        /// Which limit.
        limit: crate::model::usage::UsageLimit,
        /// How much the run used, or would have with its next request.
        used: u64,
        /// The limit.
        max: u64,
    },
    /// A run asked for its final answer ([`Agent::prompt`](crate::Agent::prompt))
    /// ended without one: it paused for a person, reached its turn limit, or was
    /// cancelled.
    Unfinished(Box<crate::model::pending::RunOutcome>),
    /// The model's final answer did not match the output type, as many times as the
    /// agent allows ([`Agent::run_typed`](crate::Agent::run_typed)).
    InvalidOutput {
        /// The answers given, the first and every retry.
        attempts: u32,
        /// What was wrong with the last.
        reason: String,
    },
    /// The durable-execution engine recording the run's steps (a
    /// [`Journal`](crate::run::Journal)) stopped the run: it was cancelled there, or a
    /// step could not be recorded. The message says which.
    Journal(String),
}

impl AgentError {
    /// The tool error inside, if this is one.
    pub fn as_tool_error(&self) -> Option<&ToolError> {
        match self {
            Self::Tool(error) => Some(error),
            _ => None,
        }
    }

    /// The tool error kind inside, if this is a tool error.
    pub fn tool_error_kind(&self) -> Option<ToolErrorKind> {
        self.as_tool_error().map(ToolError::kind)
    }
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Tool(error) => fmt::Display::fmt(error, f),
            Self::DuplicateTool(name) => {
                write!(f, "a tool named `{name}` is already registered")
            }
            Self::InvalidTool { tool, reason } => write!(f, "tool `{tool}` is invalid: {reason}"),
            Self::Model(error) => write!(f, "model client error: {error}"),
            Self::InvalidState(message) => f.write_str(message),
            Self::Journal(message) => write!(f, "durable execution stopped the run: {message}"),
            Self::UsageLimit { limit, used, max } => write!(
                f,
                "usage limit exceeded: {used} {limit}, but the run may use at most {max}"
            ),
            Self::Unfinished(outcome) => match &**outcome {
                crate::model::pending::RunOutcome::Paused { pending } => {
                    let names: Vec<&str> = pending.iter().map(|p| p.call.name.as_str()).collect();
                    write!(
                        f,
                        "the run paused before its final answer, waiting on a person for: {}",
                        names.join(", ")
                    )
                }
                crate::model::pending::RunOutcome::TurnLimit => {
                    f.write_str("the run reached its turn limit before a final answer")
                }
                crate::model::pending::RunOutcome::Cancelled => {
                    f.write_str("the run was cancelled before its final answer")
                }
                crate::model::pending::RunOutcome::Finished { .. } => {
                    f.write_str("the run finished")
                }
            },
            Self::InvalidOutput { attempts, reason } => write!(
                f,
                "the model's final answer did not match the output type after {attempts} \
                 attempt(s): {reason}"
            ),
        }
    }
}

impl std::error::Error for AgentError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Tool(error) => Some(error),
            Self::Model(error) => Some(error),
            _ => None,
        }
    }
}

impl From<crate::model::llm_error::LlmError> for AgentError {
    fn from(error: crate::model::llm_error::LlmError) -> Self {
        Self::Model(error)
    }
}

impl From<ToolError> for AgentError {
    fn from(error: ToolError) -> Self {
        Self::Tool(error)
    }
}

impl From<AgentError> for ToolError {
    fn from(error: AgentError) -> Self {
        match error {
            AgentError::Tool(error) => error,
            other => ToolError::execution(other.to_string()),
        }
    }
}

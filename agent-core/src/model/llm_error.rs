//! [`LlmError`]: what can go wrong when a model is asked, typed so that an application
//! can act on it (wait and retry, shorten the conversation, fix its key) without parsing
//! messages.

use crate::model::message::AssistantMessage;
use std::fmt;
use std::time::Duration;

/// A failed model call. Every variant keeps the provider's own message (with the
/// provider's name and, where the server sent one, its request id), and its
/// [`Display`](fmt::Display) is that message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LlmError {
    /// Too many requests or tokens for the account (HTTP 429): wait and try again.
    RateLimited {
        /// The provider's message.
        message: String,
        /// How long the server asked to wait, when it said (`Retry-After`).
        retry_after: Option<Duration>,
    },
    /// The conversation and the answer do not fit in the model's context window.
    ContextTooLong {
        /// The provider's message.
        message: String,
    },
    /// The key is missing, wrong, or not allowed this model (HTTP 401 or 403).
    Authentication {
        /// The provider's message.
        message: String,
    },
    /// The provider refused the request as written (HTTP 400, 404, 422...), or it could
    /// not be built (a tool the provider's schema dialect cannot express).
    BadRequest {
        /// The provider's message.
        message: String,
    },
    /// The provider failed or is overloaded (HTTP 5xx, Anthropic's 529).
    Server {
        /// The HTTP status, or 0 for an error event in a stream.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The request took longer than the client's timeout.
    Timeout {
        /// What timed out, and after how long.
        message: String,
    },
    /// The server could not be reached.
    Connection {
        /// What failed.
        message: String,
    },
    /// A streamed answer broke off: the connection was cut, or an event was not valid.
    /// The events already delivered stand; `partial` is the message they make up.
    BrokenStream {
        /// What broke.
        message: String,
        /// The answer as far as it was received.
        partial: Box<AssistantMessage>,
    },
    /// The provider answered with something that is not the API's format.
    InvalidResponse {
        /// What was wrong, with an excerpt of the answer.
        message: String,
    },
    /// The provider withheld the answer (a content filter, a refusal).
    Refused {
        /// The provider's reason.
        message: String,
    },
    /// Any other failure.
    Other {
        /// What failed.
        message: String,
    },
}

/// The `message` field of any variant, by reference or by mutable reference as
/// `$error` is.
macro_rules! message_of {
    ($error:expr) => {
        match $error {
            LlmError::RateLimited { message, .. }
            | LlmError::ContextTooLong { message }
            | LlmError::Authentication { message }
            | LlmError::BadRequest { message }
            | LlmError::Server { message, .. }
            | LlmError::Timeout { message }
            | LlmError::Connection { message }
            | LlmError::BrokenStream { message, .. }
            | LlmError::InvalidResponse { message }
            | LlmError::Refused { message }
            | LlmError::Other { message } => message,
        }
    };
}

impl LlmError {
    /// The message, whatever the kind.
    pub fn message(&self) -> &str {
        message_of!(self)
    }

    /// The message, to add to or reword (a client adds how many attempts it made).
    pub fn message_mut(&mut self) -> &mut String {
        message_of!(self)
    }

    /// The kind's stable snake_case name (`rate_limited`, `context_too_long`...), for
    /// logs and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::RateLimited { .. } => "rate_limited",
            Self::ContextTooLong { .. } => "context_too_long",
            Self::Authentication { .. } => "authentication",
            Self::BadRequest { .. } => "bad_request",
            Self::Server { .. } => "server",
            Self::Timeout { .. } => "timeout",
            Self::Connection { .. } => "connection",
            Self::BrokenStream { .. } => "broken_stream",
            Self::InvalidResponse { .. } => "invalid_response",
            Self::Refused { .. } => "refused",
            Self::Other { .. } => "other",
        }
    }

    /// Whether asking again, unchanged, could succeed: rate limits, server errors,
    /// timeouts, connection failures and broken streams.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::Server { .. }
                | Self::Timeout { .. }
                | Self::Connection { .. }
                | Self::BrokenStream { .. }
        )
    }

    /// The wait the server asked for, if this is a rate limit that named one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// An [`Other`](Self::Other) error.
    pub fn other(message: impl Into<String>) -> Self {
        Self::Other {
            message: message.into(),
        }
    }
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for LlmError {}

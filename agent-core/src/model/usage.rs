//! What a run has spent ([`RunUsage`]) and how much it may spend ([`UsageLimits`]).

use crate::model::message::Usage;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A run's running totals: model requests answered, tool calls the model made, and the
/// tokens the provider reported, added up over every turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunUsage {
    /// Model requests answered.
    #[serde(default)]
    pub requests: u64,
    /// Tool calls the model made.
    #[serde(default)]
    pub tool_calls: u64,
    /// Tokens, as the provider reported them (zero from clients that do not).
    #[serde(default)]
    pub tokens: Usage,
}

impl RunUsage {
    /// Whether nothing has been spent.
    pub fn is_zero(&self) -> bool {
        *self == Self::default()
    }

    /// How much of `limit` is used.
    pub fn used(&self, limit: UsageLimit) -> u64 {
        match limit {
            UsageLimit::Requests => self.requests,
            UsageLimit::InputTokens => self.tokens.input_tokens,
            UsageLimit::OutputTokens => self.tokens.output_tokens,
            UsageLimit::ToolCalls => self.tool_calls,
        }
    }
}

/// One kind of limit of [`UsageLimits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UsageLimit {
    /// Model requests.
    Requests,
    /// Input tokens, over all requests.
    InputTokens,
    /// Output tokens, over all requests.
    OutputTokens,
    /// Tool calls the model made.
    ToolCalls,
}

impl fmt::Display for UsageLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Requests => "model requests",
            Self::InputTokens => "input tokens",
            Self::OutputTokens => "output tokens",
            Self::ToolCalls => "tool calls",
        })
    }
}

/// The most a run may spend. A run about to make a model request beyond
/// `max_requests`, or whose totals go beyond another limit once an answer arrives, ends
/// as failed with [`AgentError::UsageLimit`](crate::AgentError::UsageLimit) (the tool
/// calls of that answer do not run). Set per agent
/// ([`AgentBuilder::usage_limits`](crate::agent_loop::agent::AgentBuilder::usage_limits)) and per run
/// ([`RunState::usage_limits`](crate::RunState::usage_limits)); the lower of the two
/// applies.
///
/// ```
/// use toolwright_core::agent::UsageLimits;
///
/// let limits = UsageLimits::new().max_requests(10).max_output_tokens(4_000);
/// assert_eq!(limits.requests, Some(10));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UsageLimits {
    /// The most model requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// The most input tokens, all requests together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// The most output tokens, all requests together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// The most tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<u64>,
}

impl UsageLimits {
    /// No limit.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `max` model requests.
    pub fn max_requests(mut self, max: u64) -> Self {
        self.requests = Some(max);
        self
    }

    /// At most `max` input tokens.
    pub fn max_input_tokens(mut self, max: u64) -> Self {
        self.input_tokens = Some(max);
        self
    }

    /// At most `max` output tokens.
    pub fn max_output_tokens(mut self, max: u64) -> Self {
        self.output_tokens = Some(max);
        self
    }

    /// At most `max` tool calls.
    pub fn max_tool_calls(mut self, max: u64) -> Self {
        self.tool_calls = Some(max);
        self
    }

    /// Whether no limit is set.
    pub fn is_unset(&self) -> bool {
        *self == Self::default()
    }

    /// The limit of this kind, if set.
    pub fn get(&self, limit: UsageLimit) -> Option<u64> {
        match limit {
            UsageLimit::Requests => self.requests,
            UsageLimit::InputTokens => self.input_tokens,
            UsageLimit::OutputTokens => self.output_tokens,
            UsageLimit::ToolCalls => self.tool_calls,
        }
    }

    /// Each limit the lower of these and `other`'s.
    pub fn tightest(&self, other: &UsageLimits) -> UsageLimits {
        let min = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        UsageLimits {
            requests: min(self.requests, other.requests),
            input_tokens: min(self.input_tokens, other.input_tokens),
            output_tokens: min(self.output_tokens, other.output_tokens),
            tool_calls: min(self.tool_calls, other.tool_calls),
        }
    }

    /// The first limit `usage` goes beyond, as `(limit, used, max)`.
    pub fn exceeded(&self, usage: &RunUsage) -> Option<(UsageLimit, u64, u64)> {
        [
            UsageLimit::Requests,
            UsageLimit::InputTokens,
            UsageLimit::OutputTokens,
            UsageLimit::ToolCalls,
        ]
        .into_iter()
        .find_map(|limit| {
            let max = self.get(limit)?;
            let used = usage.used(limit);
            (used > max).then_some((limit, used, max))
        })
    }
}

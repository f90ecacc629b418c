//! [`ToolConfig`]: the runtime's settings for running tools.

use crate::model::tool::{ApprovalPolicy, ErrorPolicy, Tool};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

/// Which calls of one turn may overlap when neither the tool nor its
/// [`ToolConcurrency::sequential`](crate::model::tool::ToolConcurrency::sequential) says.
///
/// A call that does not run in parallel runs alone: it starts after every earlier call
/// of the turn has finished, and later calls start after it has finished. Results come
/// back in call order whatever the rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ParallelRule {
    /// Tools stated `read_only` or `idempotent` run in parallel; the rest run alone,
    /// because two writes racing each other is the failure nobody debugs happily.
    #[default]
    EffectHints,
    /// Every tool runs in parallel unless it is marked sequential.
    All,
    /// Every tool runs alone unless it is marked `sequential: Some(false)`.
    None,
}

/// How the runtime runs tools. Start from `ToolConfig::default()` and change fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolConfig {
    /// Timeout for tools that do not set their own, in milliseconds.
    pub default_tool_timeout_ms: u64,
    /// At most this many tool calls run at once (values below 1 count as 1).
    pub max_concurrency: usize,
    /// Results longer than this many characters keep their head and tail around a
    /// notice of what was cut, and so do failed calls' messages (see
    /// [`truncate_output`](crate::model::truncate::truncate_output) and
    /// [`truncate_error`](crate::model::truncate::truncate_error)). `None`: no limit.
    pub max_output_chars: Option<usize>,
    /// Destructive tools that do not state an approval policy need approval.
    pub destructive_requires_approval: bool,
    /// Which calls run in parallel when the tool does not say.
    pub parallel: ParallelRule,
    /// Overrides every tool's [`Tool::on_error`](crate::Tool::on_error) when set.
    pub on_error: Option<ErrorPolicy>,
    /// What a call to a tool that is not offered does to the run.
    pub on_unknown_tool: ErrorPolicy,
    /// How many times a failed call (a timeout or an execution error, panics included)
    /// of a tool stated `read_only` or `idempotent` is run again before its error
    /// counts; other tools are never retried. Each attempt gets the full timeout.
    pub max_retries: u32,
    /// What a call whose arguments cannot be read does to the run. Such a call is the
    /// model's mistake, not the tool's, so it does not follow the tool's own policy.
    pub on_invalid_arguments: ErrorPolicy,
}

impl Default for ToolConfig {
    fn default() -> Self {
        Self {
            default_tool_timeout_ms: 30_000,
            max_concurrency: 8,
            max_output_chars: None,
            destructive_requires_approval: true,
            parallel: ParallelRule::EffectHints,
            on_error: None,
            max_retries: 0,
            on_unknown_tool: ErrorPolicy::ReturnToModel,
            on_invalid_arguments: ErrorPolicy::ReturnToModel,
        }
    }
}

impl ToolConfig {
    /// The config with this default timeout (kept in milliseconds, at most
    /// `u64::MAX` of them).
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_tool_timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The timeout of tools that do not set their own.
    pub fn default_timeout(&self) -> Duration {
        Duration::from_millis(self.default_tool_timeout_ms)
    }

    /// The config with this global concurrency limit.
    pub fn with_max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = limit;
        self
    }

    /// The config with this output budget, in characters.
    pub fn with_max_output_chars(mut self, chars: usize) -> Self {
        self.max_output_chars = Some(chars);
        self
    }

    /// The config with this many retries for read-only and idempotent tools.
    pub fn with_max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// How many times a failed call of `tool` is run again
    /// ([`max_retries`](Self::max_retries)): none unless the tool is stated read-only or
    /// idempotent, as running any other tool twice could repeat a side effect.
    pub fn retries_for(&self, tool: &dyn Tool) -> u32 {
        if self.max_retries == 0 {
            return 0;
        }
        let hints = tool.annotations();
        if hints.is_read_only() || hints.is_idempotent() {
            self.max_retries
        } else {
            0
        }
    }

    /// The config with this parallelism rule.
    pub fn with_parallel(mut self, rule: ParallelRule) -> Self {
        self.parallel = rule;
        self
    }

    /// Whether a call of `tool` with `arguments` waits for a person's approval: as the
    /// tool's own rule ([`Tool::approval`]) says, else, when the tool states none, if it
    /// is destructive and [`destructive_requires_approval`](Self::destructive_requires_approval)
    /// holds. An application-wide rule ([`ApprovalRule`](crate::execution::pipeline::ApprovalRule)) comes before
    /// both; the executor applies it.
    pub fn needs_approval(&self, tool: &dyn Tool, arguments: &Value) -> bool {
        self.approval_after(ApprovalPolicy::Unspecified, tool, arguments, || {
            tool.annotations().is_destructive()
        })
    }

    /// [`needs_approval`](Self::needs_approval) once an application's rule has said
    /// `decided`; `destructive` is asked only if the decision falls to the default.
    pub(crate) fn approval_after(
        &self,
        decided: ApprovalPolicy,
        tool: &dyn Tool,
        arguments: &Value,
        destructive: impl FnOnce() -> bool,
    ) -> bool {
        let decided = match decided {
            ApprovalPolicy::Unspecified => tool.approval(arguments),
            decided => decided,
        };
        match decided {
            ApprovalPolicy::Required => true,
            ApprovalPolicy::NotRequired => false,
            ApprovalPolicy::Unspecified => self.destructive_requires_approval && destructive(),
        }
    }
}

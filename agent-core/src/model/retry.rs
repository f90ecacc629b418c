//! One retry policy for every remote call the framework makes: how many attempts,
//! exponential backoff with jitter between them, and a server's `Retry-After` honoured
//! in both of its forms.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, SystemTime};

/// When and how often a failed request is sent again.
///
/// The wait before retry `n` (1-based) is `initial_backoff * 2^(n-1)`, capped at
/// `max_backoff`, less up to a quarter of random jitter (so that clients told to back
/// off at once do not come back at once). A wait the server asked for (`Retry-After`,
/// see [`parse_retry_after`](Self::parse_retry_after)) is used instead when it is no
/// longer than `max_retry_after`.
///
/// ```
/// use toolwright_core::{exec::{RetryDecision, RetryPolicy}};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let policy = RetryPolicy { initial_backoff: Duration::from_millis(1), ..RetryPolicy::DEFAULT };
/// let mut calls = 0;
/// let result: Result<&str, &str> = policy
///     .run(
///         |_attempt| {
///             calls += 1;
///             let fail = calls < 3;
///             async move {
///                 if fail {
///                     RetryDecision::Retry { error: "busy", wait: None }
///                 } else {
///                     RetryDecision::Done(Ok("done"))
///                 }
///             }
///         },
///         |_attempt, _error, _wait| {},
///     )
///     .await;
/// assert_eq!(result, Ok("done"));
/// assert_eq!(calls, 3);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a request is sent at most, the first time included (at least 1).
    pub max_attempts: u32,
    /// The wait before the first retry.
    pub initial_backoff: Duration,
    /// The longest computed wait.
    pub max_backoff: Duration,
    /// The longest wait a server's `Retry-After` is honoured for; a longer one falls
    /// back to the computed backoff.
    pub max_retry_after: Duration,
}

/// What one attempt of [`RetryPolicy::run`] came to.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryDecision<T, E> {
    /// Finished, well or not: no further attempt.
    Done(Result<T, E>),
    /// Failed in a way another attempt may mend.
    Retry {
        /// Why the attempt failed; returned when no attempt is left.
        error: E,
        /// The wait the server asked for, if it did.
        wait: Option<Duration>,
    },
}

impl RetryPolicy {
    /// Three attempts, backoff from 500 ms to 8 s, `Retry-After` honoured up to 60 s (the
    /// official model SDKs' defaults).
    pub const DEFAULT: Self = Self {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(500),
        max_backoff: Duration::from_secs(8),
        max_retry_after: Duration::from_secs(60),
    };

    /// One attempt, no retries.
    pub const NEVER: Self = Self {
        max_attempts: 1,
        ..Self::DEFAULT
    };

    /// The computed wait before retry `retry` (1-based), jittered.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .initial_backoff
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20));
        let capped = exp.min(self.max_backoff);
        // `RandomState` is a randomly seeded hasher: enough randomness for jitter.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        capped - capped.mul_f64((random % 1000) as f64 / 4000.0)
    }

    /// The wait before retry `retry` (1-based): the server's `requested` wait when it
    /// has one no longer than [`max_retry_after`](Self::max_retry_after), else the
    /// computed [`backoff`](Self::backoff).
    pub fn delay(&self, retry: u32, requested: Option<Duration>) -> Duration {
        requested
            .filter(|wait| *wait <= self.max_retry_after)
            .unwrap_or_else(|| self.backoff(retry))
    }

    /// The wait a `Retry-After` header value asks for, in either of its forms:
    /// delta-seconds (`120`, and the fractional `1.5` some servers send) or an
    /// HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`), counted from `now`; a date already
    /// past is no wait. `None` when the value is neither.
    pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
        let value = value.trim();
        if let Ok(secs) = value.parse::<f64>() {
            return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
        }
        let date = httpdate::parse_http_date(value).ok()?;
        Some(date.duration_since(now).unwrap_or(Duration::ZERO))
    }

    /// Runs `attempt` (given the 1-based attempt number) until it is
    /// [`Done`](RetryDecision::Done) or the attempts are used up, sleeping
    /// [`delay`](Self::delay) between attempts. `on_retry` hears of each retry before
    /// its wait, with the number of the attempt to come, the error and the wait. When
    /// the attempts are used up, the last error is returned.
    pub async fn run<T, E, F, Fut>(
        &self,
        mut attempt: F,
        mut on_retry: impl FnMut(u32, &E, Duration),
    ) -> Result<T, E>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = RetryDecision<T, E>>,
    {
        let attempts = self.max_attempts.max(1);
        let mut number = 1;
        loop {
            let (error, requested) = match attempt(number).await {
                RetryDecision::Done(result) => return result,
                RetryDecision::Retry { error, wait } => (error, wait),
            };
            if number >= attempts {
                return Err(error);
            }
            let wait = self.delay(number, requested);
            number += 1;
            on_retry(number, &error, wait);
            tokio::time::sleep(wait).await;
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(1),
        };
        let within = |retry, full: u64| {
            let wait = policy.backoff(retry);
            let full = Duration::from_millis(full);
            assert!(wait <= full && wait >= full * 3 / 4, "{wait:?} vs {full:?}");
        };
        within(1, 100);
        within(2, 200);
        within(3, 400);
        within(5, 1000);
        within(40, 1000);
    }

    #[test]
    fn retry_after_in_seconds() {
        let now = SystemTime::now();
        let parse = |v| RetryPolicy::parse_retry_after(v, now);
        assert_eq!(parse("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse(" 1.5 "), Some(Duration::from_millis(1500)));
        assert_eq!(parse("-1"), None);
        assert_eq!(parse("soon"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn retry_after_as_an_http_date() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        let parse = |v| RetryPolicy::parse_retry_after(v, now);
        assert_eq!(
            parse("Wed, 21 Oct 2015 07:28:30 GMT"),
            Some(Duration::from_secs(30))
        );
        // The obsolete forms HTTP still asks recipients to accept.
        assert_eq!(
            parse("Wednesday, 21-Oct-15 07:29:00 GMT"),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            parse("Wed Oct 21 07:28:05 2015"),
            Some(Duration::from_secs(5))
        );
        // A date gone by asks for no wait.
        assert_eq!(parse("Wed, 21 Oct 2015 07:00:00 GMT"), Some(Duration::ZERO));
        assert_eq!(parse("Wed, 32 Oct 2015 07:00:00 GMT"), None);
    }

    #[test]
    fn a_long_server_wait_falls_back_to_the_backoff() {
        let policy = RetryPolicy {
            max_retry_after: Duration::from_secs(5),
            ..RetryPolicy::DEFAULT
        };
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert!(policy.delay(1, Some(Duration::from_secs(60))) <= Duration::from_millis(500));
        assert!(policy.delay(1, None) <= Duration::from_millis(500));
    }

    #[tokio::test]
    async fn run_stops_at_the_last_attempt_with_its_error() {
        let policy = RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            max_retry_after: Duration::from_secs(1),
        };
        let mut retries = Vec::new();
        let result: Result<(), String> = policy
            .run(
                |n| async move {
                    RetryDecision::Retry {
                        error: format!("failure {n}"),
                        wait: None,
                    }
                },
                |n, error: &String, _| retries.push((n, error.clone())),
            )
            .await;
        assert_eq!(result, Err("failure 3".to_owned()));
        assert_eq!(
            retries,
            [(2, "failure 1".to_owned()), (3, "failure 2".to_owned())]
        );
        let done: Result<u8, String> = RetryPolicy::NEVER
            .run(
                |_| async { RetryDecision::Done(Ok(7)) },
                |_, _: &String, _| {},
            )
            .await;
        assert_eq!(done, Ok(7));
    }
}

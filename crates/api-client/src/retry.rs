//! When and how long to wait before trying a request again.
//!
//! Retried: HTTP 408, 409, 429, 5xx (529 included), connection errors and timeouts, a stream
//! that ends before `message_stop` or holds an event that cannot be decoded, and in-stream
//! `overloaded_error` / `api_error` / `rate_limit_error` / `timeout_error` events. Never other
//! 4xx. A connection refused at a loopback address (nothing listening there) gets only
//! [`RetryPolicy::local_connect_attempts`] attempts: waiting minutes for a server that is not
//! running helps nobody. `x-should-retry: false` forbids a
//! retry and `true` forces one. The delay is exponential backoff with jitter, or the server's
//! `retry-after-ms` / `retry-after` when that is at most [`RetryPolicy::max_retry_after`].
//!
//! Each retry is announced as a [`RetryNotice`] *before* the wait, so a UI can show
//! "retrying in 4 s (attempt 2 of 10)".

use std::fmt;
use std::time::Duration;

use crate::error::ApiError;

/// Retry limits and backoff shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts including the first (1 disables retries). Default 10.
    pub max_attempts: u32,
    /// Delay before the first retry; doubles each time. Default 500 ms.
    pub base_delay: Duration,
    /// Cap on the computed backoff. Default 32 s.
    pub max_delay: Duration,
    /// A server `retry-after` up to this long is honoured; a longer one is ignored in favour of
    /// the computed backoff. Default 60 s.
    pub max_retry_after: Duration,
    /// Fraction of the delay removed at random (0.25 → delay × [0.75, 1.0]). Default 0.25.
    pub jitter: f64,
    /// Total attempts when a loopback address refuses the connection
    /// ([`ApiError::NothingListening`]), capped by `max_attempts`. Default 3 (about 1.5 s).
    pub local_connect_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 10,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(32),
            max_retry_after: Duration::from_secs(60),
            jitter: 0.25,
            local_connect_attempts: 3,
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// How many attempts in all `error` allows.
    pub fn attempts_for(&self, error: &ApiError) -> u32 {
        match error.classified() {
            ApiError::NothingListening { .. } => self
                .local_connect_attempts
                .clamp(1, self.max_attempts.max(1)),
            // `classified` has unwrapped it already; recursing keeps the match exhaustive.
            ApiError::OpenAi(inner) => self.attempts_for(inner),
            ApiError::MissingCredentials
            | ApiError::MissingOpenAiKey
            | ApiError::Unsupported { .. }
            | ApiError::Config { .. }
            | ApiError::Connection { .. }
            | ApiError::Timeout { .. }
            | ApiError::Status { .. }
            | ApiError::StreamError { .. }
            | ApiError::IncompleteStream { .. }
            | ApiError::Decode { .. }
            | ApiError::CorruptStream { .. }
            | ApiError::InvalidToolInput { .. }
            | ApiError::Protocol { .. } => self.max_attempts,
        }
    }

    /// Whether `error`, having ended attempt number `attempt` (1-based), may be retried.
    pub fn should_retry(&self, error: &ApiError, attempt: u32) -> bool {
        if attempt >= self.attempts_for(error) {
            return false;
        }
        if let ApiError::Status {
            should_retry: Some(forced),
            ..
        } = error.classified()
        {
            return *forced;
        }
        error.is_retryable()
    }

    /// The wait before attempt `attempt + 1`, after `error` ended attempt `attempt` (1-based).
    pub fn delay(&self, error: &ApiError, attempt: u32) -> Duration {
        if let ApiError::Status {
            retry_after: Some(hint),
            ..
        } = error.classified()
            && *hint <= self.max_retry_after
        {
            return *hint;
        }
        let exponent = attempt.saturating_sub(1).min(30);
        let backoff = self
            .base_delay
            .saturating_mul(1u32 << exponent)
            .min(self.max_delay);
        let jitter = self.jitter.clamp(0.0, 1.0);
        backoff.mul_f64(1.0 - jitter * fastrand::f64())
    }

    /// The notice for retrying after `error` ended attempt `attempt`, or `None` when the policy
    /// says give up. `discard_partial` says whether events of the failed attempt were yielded.
    pub fn notice(
        &self,
        error: &ApiError,
        attempt: u32,
        discard_partial: bool,
    ) -> Option<RetryNotice> {
        self.should_retry(error, attempt).then(|| RetryNotice {
            attempt: attempt + 1,
            max_attempts: self.attempts_for(error),
            delay: self.delay(error, attempt),
            reason: error.clone(),
            discard_partial,
        })
    }
}

/// "The last attempt failed; attempt `attempt` of `max_attempts` starts after `delay`."
///
/// **Contract:** when `discard_partial` is true, events of the failed attempt were already
/// yielded; every consumer must drop whatever it built from stream events since the last
/// `message_start` (text shown live, partial tool input, an accumulator: call
/// [`crate::MessageAccumulator::reset`]). The next attempt starts again from `message_start`, so
/// a consumer that honours this never shows duplicated content.
#[derive(Debug, Clone)]
pub struct RetryNotice {
    /// The attempt about to be made (2 for the first retry).
    pub attempt: u32,
    /// Attempts there will be at most.
    pub max_attempts: u32,
    /// How long until the attempt.
    pub delay: Duration,
    /// Why the previous attempt failed.
    pub reason: ApiError,
    /// True when the failed attempt had already yielded stream events that must be discarded.
    pub discard_partial: bool,
}

impl fmt::Display for RetryNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.delay.as_secs_f64();
        if secs >= 1.0 {
            write!(f, "retrying in {} s", secs.round())?;
        } else {
            write!(f, "retrying in {} ms", self.delay.as_millis())?;
        }
        write!(
            f,
            " (attempt {} of {}): {}",
            self.attempt, self.max_attempts, self.reason
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> ApiError {
        ApiError::from_response(code, b"", None, None, None)
    }

    #[test]
    fn retries_only_the_retryable_statuses() {
        let policy = RetryPolicy::default();
        for code in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(policy.should_retry(&status(code), 1), "{code} should retry");
        }
        for code in [400, 401, 402, 403, 404, 413, 422] {
            assert!(
                !policy.should_retry(&status(code), 1),
                "{code} must not retry"
            );
        }
    }

    #[test]
    fn x_should_retry_overrides_status() {
        let policy = RetryPolicy::default();
        let forced = ApiError::from_response(400, b"", None, None, Some(true));
        let forbidden = ApiError::from_response(529, b"", None, None, Some(false));
        assert!(policy.should_retry(&forced, 1));
        assert!(!policy.should_retry(&forbidden, 1));
    }

    #[test]
    fn stops_at_max_attempts() {
        let policy = RetryPolicy {
            max_attempts: 3,
            ..RetryPolicy::default()
        };
        assert!(policy.should_retry(&status(529), 2));
        assert!(!policy.should_retry(&status(529), 3));
        assert!(!RetryPolicy::none().should_retry(&status(529), 1));
    }

    #[test]
    fn nothing_listening_locally_gets_few_attempts() {
        let policy = RetryPolicy::default();
        let refused = ApiError::NothingListening {
            url: "http://127.0.0.1:9".into(),
        };
        assert!(policy.should_retry(&refused, 2));
        assert!(!policy.should_retry(&refused, 3));
        assert_eq!(policy.notice(&refused, 1, false).unwrap().max_attempts, 3);
        // A remote connection error keeps the full budget.
        let remote = ApiError::Connection {
            message: "refused".into(),
        };
        assert!(policy.should_retry(&remote, 9));
        assert_eq!(policy.notice(&remote, 1, false).unwrap().max_attempts, 10);
        // Never more than max_attempts, never fewer than one.
        assert!(!RetryPolicy::none().should_retry(&refused, 1));
        let none_local = RetryPolicy {
            local_connect_attempts: 0,
            ..RetryPolicy::default()
        };
        assert!(!none_local.should_retry(&refused, 1));
    }

    #[test]
    fn a_corrupt_stream_is_retried_like_a_dropped_one() {
        let policy = RetryPolicy::default();
        let corrupt = ApiError::CorruptStream {
            message: "expected value".into(),
            request_id: None,
        };
        assert!(policy.should_retry(&corrupt, 1));
    }

    #[test]
    fn backoff_grows_with_jitter_and_cap() {
        let policy = RetryPolicy::default();
        for attempt in 1..=12u32 {
            let d = policy.delay(&status(500), attempt);
            let full = Duration::from_millis(500)
                .saturating_mul(1 << (attempt - 1).min(30))
                .min(Duration::from_secs(32));
            assert!(d <= full, "attempt {attempt}: {d:?} > {full:?}");
            assert!(
                d >= full.mul_f64(0.75),
                "attempt {attempt}: {d:?} < 0.75 × {full:?}"
            );
        }
    }

    #[test]
    fn honours_retry_after_up_to_limit() {
        let policy = RetryPolicy::default();
        let short = ApiError::from_response(429, b"", None, Some(Duration::from_secs(7)), None);
        assert_eq!(policy.delay(&short, 1), Duration::from_secs(7));
        let long = ApiError::from_response(429, b"", None, Some(Duration::from_secs(600)), None);
        assert!(policy.delay(&long, 1) <= Duration::from_millis(500));
    }

    #[test]
    fn notice_reads_like_a_status_line() {
        let policy = RetryPolicy::default();
        let error = ApiError::from_response(429, b"", None, Some(Duration::from_secs(4)), None);
        let notice = policy.notice(&error, 1, false).expect("retryable");
        assert_eq!(notice.attempt, 2);
        let text = notice.to_string();
        assert!(
            text.starts_with("retrying in 4 s (attempt 2 of 10)"),
            "{text}"
        );
    }
}

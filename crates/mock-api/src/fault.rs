//! Injected failures: a [`Fault`] answers with an HTTP error instead of the reply, or strikes
//! after a 200 (an in-stream `error`, a dropped connection, a corrupt frame), or refuses the
//! prompt as too long.

use serde::Deserialize;

/// An injected failure. In JSON, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Fault {
    /// An HTTP error instead of a response (429, 529, 500, ...).
    Http {
        status: u16,
        /// Seconds, sent as `retry-after`.
        #[serde(default)]
        retry_after: Option<u64>,
        /// Sent as `x-should-retry`.
        #[serde(default)]
        should_retry: Option<bool>,
        /// Defaults to the real type for the status.
        #[serde(default)]
        error_type: Option<String>,
        #[serde(default)]
        message: Option<String>,
    },
    /// HTTP 200, then an SSE `error` event after this many events (non-streaming requests get
    /// the error as an HTTP status instead).
    SseError {
        #[serde(default = "default_after_events")]
        after_events: usize,
        #[serde(default = "default_sse_error_type")]
        error_type: String,
        #[serde(default)]
        message: Option<String>,
    },
    /// The connection drops after this many events: the body ends before `message_stop`.
    Drop {
        #[serde(default = "default_after_events")]
        after_events: usize,
    },
    /// After this many events, one frame whose `data:` is not valid JSON, then the body ends
    /// (non-streaming requests get a 200 whose body is not JSON).
    Corrupt {
        #[serde(default = "default_after_events")]
        after_events: usize,
    },
    /// `prompt is too long` for this request whatever its size; `tokens` defaults to the
    /// prompt's estimate, `maximum` to the context window.
    PromptTooLong {
        #[serde(default)]
        tokens: Option<u64>,
        #[serde(default)]
        maximum: Option<u64>,
    },
}

fn default_after_events() -> usize {
    3
}

fn default_sse_error_type() -> String {
    "overloaded_error".to_string()
}

impl Fault {
    /// HTTP `status` with the real error type and message.
    pub fn http(status: u16) -> Self {
        Fault::Http {
            status,
            retry_after: None,
            should_retry: None,
            error_type: None,
            message: None,
        }
    }

    /// HTTP `status` with `retry-after: seconds`.
    pub fn http_retry_after(status: u16, seconds: u64) -> Self {
        Fault::Http {
            status,
            retry_after: Some(seconds),
            should_retry: None,
            error_type: None,
            message: None,
        }
    }

    /// An `overloaded_error` SSE event after `after_events` events.
    pub fn sse_error(after_events: usize) -> Self {
        Fault::SseError {
            after_events,
            error_type: default_sse_error_type(),
            message: None,
        }
    }

    pub fn drop_after(after_events: usize) -> Self {
        Fault::Drop { after_events }
    }

    /// A frame of invalid JSON after `after_events` events.
    pub fn corrupt_after(after_events: usize) -> Self {
        Fault::Corrupt { after_events }
    }

    pub fn prompt_too_long() -> Self {
        Fault::PromptTooLong {
            tokens: None,
            maximum: None,
        }
    }
}

//! Typed errors of the Messages API: from the HTTP status and the body's `error.type`, from an
//! `error` event arriving after HTTP 200, and from the transport, the stream and the client's
//! own configuration.
//!
//! `ApiError` is `Clone` (it holds strings, not transport handles) so it can ride inside a
//! [`crate::RetryNotice`] and be scripted by [`crate::ScriptedClient`].

use std::time::Duration;

use serde::Deserialize;

/// The API's `error.type`, or the status it implies when the body did not say.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ApiErrorKind {
    /// 400 `invalid_request_error`.
    InvalidRequest,
    /// 401 `authentication_error`.
    Authentication,
    /// 402 `billing_error`.
    Billing,
    /// 403 `permission_error`.
    Permission,
    /// 404 `not_found_error`.
    NotFound,
    /// 413 `request_too_large`.
    RequestTooLarge,
    /// 429 `rate_limit_error`.
    RateLimit,
    /// 500 `api_error`.
    Api,
    /// 504 `timeout_error`.
    Timeout,
    /// 529 `overloaded_error`.
    Overloaded,
    /// A type this crate does not know, kept as sent.
    Other(String),
}

impl ApiErrorKind {
    /// From the body's `error.type`.
    pub fn from_type(error_type: &str) -> Self {
        match error_type {
            "invalid_request_error" => Self::InvalidRequest,
            "authentication_error" => Self::Authentication,
            "billing_error" => Self::Billing,
            "permission_error" => Self::Permission,
            "not_found_error" => Self::NotFound,
            "request_too_large" => Self::RequestTooLarge,
            "rate_limit_error" => Self::RateLimit,
            "api_error" => Self::Api,
            "timeout_error" => Self::Timeout,
            "overloaded_error" => Self::Overloaded,
            other => Self::Other(other.to_owned()),
        }
    }

    /// From the HTTP status alone (a body without a recognisable `error.type`).
    pub fn from_status(status: u16) -> Self {
        match status {
            400 => Self::InvalidRequest,
            401 => Self::Authentication,
            402 => Self::Billing,
            403 => Self::Permission,
            404 => Self::NotFound,
            413 => Self::RequestTooLarge,
            429 => Self::RateLimit,
            504 => Self::Timeout,
            529 => Self::Overloaded,
            500..=599 => Self::Api,
            other => Self::Other(format!("http_{other}")),
        }
    }

    /// The wire name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::InvalidRequest => "invalid_request_error",
            Self::Authentication => "authentication_error",
            Self::Billing => "billing_error",
            Self::Permission => "permission_error",
            Self::NotFound => "not_found_error",
            Self::RequestTooLarge => "request_too_large",
            Self::RateLimit => "rate_limit_error",
            Self::Api => "api_error",
            Self::Timeout => "timeout_error",
            Self::Overloaded => "overloaded_error",
            Self::Other(s) => s,
        }
    }

    /// What the user can do about it, appended to the error message.
    fn hint(&self) -> &'static str {
        match self {
            Self::Authentication => " (check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN)",
            Self::Billing => " (check the account's billing and credit balance)",
            Self::Permission => " (the key is not allowed to use this model or feature)",
            Self::NotFound => " (check the model name and ANTHROPIC_BASE_URL)",
            Self::RequestTooLarge => {
                " (the request body is too large; compact or drop attachments)"
            }
            Self::RateLimit => " (rate limited; wait or lower concurrency)",
            Self::Overloaded => " (the API is overloaded; try again shortly)",
            Self::InvalidRequest | Self::Api | Self::Timeout | Self::Other(_) => "",
        }
    }
}

impl std::fmt::Display for ApiErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that can go wrong talking to the Messages API.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ApiError {
    /// No credentials in the environment.
    #[error(
        "no Anthropic credentials: set ANTHROPIC_API_KEY to an API key (sent as x-api-key), \
         or ANTHROPIC_AUTH_TOKEN to a bearer token"
    )]
    MissingCredentials,

    /// The client's configuration is unusable (bad base URL, header value, ...).
    #[error("invalid client configuration: {message}")]
    Config { message: String },

    /// The server answered with an error status.
    #[error("HTTP {status} {kind}: {message}{}{}", kind.hint(), request_id_suffix(.request_id))]
    Status {
        status: u16,
        kind: ApiErrorKind,
        message: String,
        request_id: Option<String>,
        /// `retry-after-ms` / `retry-after`, when the server sent one.
        retry_after: Option<Duration>,
        /// `x-should-retry`, when the server sent it.
        should_retry: Option<bool>,
    },

    /// An `error` event arrived inside a stream that had started with HTTP 200.
    #[error("stream error {kind}: {message}{}{}", kind.hint(), request_id_suffix(.request_id))]
    StreamError {
        kind: ApiErrorKind,
        message: String,
        request_id: Option<String>,
    },

    /// Could not connect, or the connection broke.
    #[error(
        "connection to the Anthropic API failed: {message} (check the network and ANTHROPIC_BASE_URL)"
    )]
    Connection { message: String },

    /// A loopback address refused the connection: no server runs there (a local proxy or
    /// simulator that was not started, a wrong port). Retried only briefly.
    #[error(
        "nothing is listening at {url} (connection refused): start the server there, or check \
         ANTHROPIC_BASE_URL"
    )]
    NothingListening { url: String },

    /// The client gave up waiting (connect, headers, or no stream data for too long).
    #[error("timed out after {} s waiting for {what}", after.as_secs_f64())]
    Timeout { what: String, after: Duration },

    /// The stream ended before `message_stop`.
    #[error("the response stream ended before message_stop{}", request_id_suffix(.request_id))]
    IncompleteStream { request_id: Option<String> },

    /// A body or event that is not the JSON / SSE the API sends.
    #[error("could not decode {what}: {message}")]
    Decode { what: String, message: String },

    /// A streamed response held an event that could not be decoded (a corrupt frame, invalid
    /// JSON in a `data:` line). Retried like a dropped stream: the reply is incomplete either way.
    #[error("the response stream held an event that could not be decoded: {message}{}", request_id_suffix(.request_id))]
    CorruptStream {
        message: String,
        request_id: Option<String>,
    },

    /// A tool call's assembled `input` JSON did not parse at block stop.
    #[error("tool call `{name}` (block {index}) has invalid input JSON: {message}")]
    InvalidToolInput {
        index: usize,
        name: String,
        message: String,
        partial_json: String,
    },

    /// Stream events in an order the protocol does not allow (a delta for a block never started).
    #[error("stream protocol violation: {message}")]
    Protocol { message: String },
}

fn request_id_suffix(request_id: &Option<String>) -> String {
    match request_id {
        Some(id) => format!(" [request-id {id}]"),
        None => String::new(),
    }
}

/// `{"type":"error","error":{"type":..,"message":..},"request_id":..}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct ErrorBody {
    #[serde(rename = "type", default)]
    pub error_type: String,
    #[serde(default)]
    pub message: String,
}

#[derive(Deserialize)]
struct ErrorEnvelope {
    error: Option<ErrorBody>,
    request_id: Option<String>,
}

impl ApiError {
    /// Build the error for a non-success HTTP response from its status, headers' values and body.
    pub fn from_response(
        status: u16,
        body: &[u8],
        request_id: Option<String>,
        retry_after: Option<Duration>,
        should_retry: Option<bool>,
    ) -> Self {
        let envelope = serde_json::from_slice::<ErrorEnvelope>(body).ok();
        let (kind, message, body_request_id) = match envelope {
            Some(ErrorEnvelope {
                error: Some(error),
                request_id,
            }) => {
                let kind = if error.error_type.is_empty() {
                    ApiErrorKind::from_status(status)
                } else {
                    ApiErrorKind::from_type(&error.error_type)
                };
                (kind, error.message, request_id)
            }
            _ => {
                let text = String::from_utf8_lossy(body);
                let text = text.trim();
                let message = if text.is_empty() {
                    "(empty body)".to_owned()
                } else {
                    text.chars().take(500).collect()
                };
                (ApiErrorKind::from_status(status), message, None)
            }
        };
        Self::Status {
            status,
            kind,
            message,
            request_id: request_id.or(body_request_id),
            retry_after,
            should_retry,
        }
    }

    /// The error for an in-stream `error` event.
    pub fn from_stream_error(error: &ErrorBody, request_id: Option<String>) -> Self {
        Self::StreamError {
            kind: ApiErrorKind::from_type(&error.error_type),
            message: error.message.clone(),
            request_id,
        }
    }

    /// The API's error kind, for HTTP and in-stream errors.
    pub fn kind(&self) -> Option<&ApiErrorKind> {
        match self {
            Self::Status { kind, .. } | Self::StreamError { kind, .. } => Some(kind),
            Self::MissingCredentials
            | Self::Config { .. }
            | Self::Connection { .. }
            | Self::NothingListening { .. }
            | Self::Timeout { .. }
            | Self::IncompleteStream { .. }
            | Self::Decode { .. }
            | Self::CorruptStream { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol { .. } => None,
        }
    }

    /// The HTTP status, for HTTP errors.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            Self::MissingCredentials
            | Self::Config { .. }
            | Self::Connection { .. }
            | Self::NothingListening { .. }
            | Self::Timeout { .. }
            | Self::StreamError { .. }
            | Self::IncompleteStream { .. }
            | Self::Decode { .. }
            | Self::CorruptStream { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol { .. } => None,
        }
    }

    /// The server's request id, when known (quote it in bug reports).
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::Status { request_id, .. }
            | Self::StreamError { request_id, .. }
            | Self::CorruptStream { request_id, .. }
            | Self::IncompleteStream { request_id } => request_id.as_deref(),
            Self::MissingCredentials
            | Self::Config { .. }
            | Self::Connection { .. }
            | Self::NothingListening { .. }
            | Self::Timeout { .. }
            | Self::Decode { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol { .. } => None,
        }
    }

    /// The API's message text, for HTTP and in-stream errors.
    pub fn api_message(&self) -> Option<&str> {
        match self {
            Self::Status { message, .. } | Self::StreamError { message, .. } => Some(message),
            Self::MissingCredentials
            | Self::Config { .. }
            | Self::Connection { .. }
            | Self::NothingListening { .. }
            | Self::Timeout { .. }
            | Self::IncompleteStream { .. }
            | Self::Decode { .. }
            | Self::CorruptStream { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol { .. } => None,
        }
    }

    /// `prompt is too long: N tokens > M maximum` → `(N, M)`.
    pub fn prompt_too_long(&self) -> Option<(u64, u64)> {
        parse_prompt_too_long(self.api_message()?)
    }

    /// ``input length and `max_tokens` exceed context limit: a + b > c`` → `(a, b, c)`.
    pub fn context_limit_exceeded(&self) -> Option<(u64, u64, u64)> {
        parse_context_limit(self.api_message()?)
    }

    /// Whether the retry policy may try again after this error (before `x-should-retry`, which
    /// [`crate::RetryPolicy`] consults separately).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Status { status, .. } => matches!(*status, 408 | 409 | 429 | 500..=599),
            Self::StreamError { kind, .. } => matches!(
                kind,
                ApiErrorKind::Overloaded
                    | ApiErrorKind::Api
                    | ApiErrorKind::RateLimit
                    | ApiErrorKind::Timeout
            ),
            Self::Connection { .. }
            | Self::NothingListening { .. }
            | Self::Timeout { .. }
            | Self::IncompleteStream { .. }
            | Self::CorruptStream { .. } => true,
            Self::MissingCredentials
            | Self::Config { .. }
            | Self::Decode { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol { .. } => false,
        }
    }
}

/// Parse `prompt is too long: 219898 tokens > 200000 maximum` (anywhere in `message`).
pub fn parse_prompt_too_long(message: &str) -> Option<(u64, u64)> {
    let rest = &message[message.find("prompt is too long:")? + "prompt is too long:".len()..];
    let (actual, rest) = leading_number(rest)?;
    let rest = rest
        .trim_start()
        .strip_prefix("tokens")?
        .trim_start()
        .strip_prefix('>')?;
    let (limit, _) = leading_number(rest)?;
    Some((actual, limit))
}

/// Parse ``input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000``.
pub fn parse_context_limit(message: &str) -> Option<(u64, u64, u64)> {
    const NEEDLE: &str = "exceed context limit:";
    let rest = &message[message.find(NEEDLE)? + NEEDLE.len()..];
    let (input, rest) = leading_number(rest)?;
    let rest = rest.trim_start().strip_prefix('+')?;
    let (max_tokens, rest) = leading_number(rest)?;
    let rest = rest.trim_start().strip_prefix('>')?;
    let (limit, _) = leading_number(rest)?;
    Some((input, max_tokens, limit))
}

/// Skip spaces, read digits (commas allowed as thousands separators).
fn leading_number(s: &str) -> Option<(u64, &str)> {
    let s = s.trim_start();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == ','))
        .unwrap_or(s.len());
    let digits: String = s[..end].chars().filter(char::is_ascii_digit).collect();
    if digits.is_empty() {
        return None;
    }
    Some((digits.parse().ok()?, &s[end..]))
}

/// Clamp absurd hints so `Duration::from_secs_f64` cannot overflow (the policy ignores anything
/// over 60 s anyway).
const MAX_HINT_SECS: f64 = 86_400.0;

/// `retry-after-ms` (milliseconds, fractional allowed) wins over `retry-after` (seconds, or an
/// HTTP date which we do not interpret).
pub fn parse_retry_after(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
) -> Option<Duration> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(MAX_HINT_SECS)));
    }
    let secs = retry_after?.trim().parse::<f64>().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(MAX_HINT_SECS)))
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;

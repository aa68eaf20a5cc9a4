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

impl ApiErrorKind {
    /// [`ApiErrorKind::hint`] for an OpenAI-compatible endpoint (its variables, not Anthropic's).
    fn openai_hint(&self) -> &'static str {
        match self {
            Self::Authentication => {
                " (check OPENAI_API_KEY; local servers accept any non-empty value)"
            }
            Self::NotFound => " (check the model name and OPENAI_BASE_URL, which includes /v1)",
            Self::Billing
            | Self::Permission
            | Self::RequestTooLarge
            | Self::RateLimit
            | Self::Overloaded
            | Self::InvalidRequest
            | Self::Api
            | Self::Timeout
            | Self::Other(_) => self.hint(),
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

    /// The openai provider has no API key.
    #[error(
        "no API key for the openai provider: set OPENAI_API_KEY (local servers such as Ollama, \
         llama.cpp, vLLM and LM Studio accept any non-empty value, e.g. OPENAI_API_KEY=local)"
    )]
    MissingOpenAiKey,

    /// The endpoint has no such operation (`count_tokens` on an OpenAI-compatible server).
    #[error("{what} is not supported by this endpoint")]
    Unsupported {
        /// What is not supported.
        what: String,
    },

    /// A failure of an OpenAI-compatible endpoint. `.0` classifies it exactly as the Anthropic
    /// error it corresponds to (status, kind, retry hints, request id); only the advice in the
    /// message differs (`OPENAI_BASE_URL`, `OPENAI_API_KEY`). Every accessor looks through it.
    #[error("{}", openai_message(.0))]
    OpenAi(Box<ApiError>),

    /// The client's configuration is unusable (bad base URL, header value, ...).
    #[error("invalid client configuration: {message}")]
    Config {
        /// What is wrong with it.
        message: String,
    },

    /// The server answered with an error status.
    #[error("HTTP {status} {kind}: {message}{}{}", kind.hint(), request_id_suffix(.request_id))]
    Status {
        /// The HTTP status.
        status: u16,
        /// The error's kind, from the status and `error.type`.
        kind: ApiErrorKind,
        /// The server's message.
        message: String,
        /// The `request-id` header, when sent.
        request_id: Option<String>,
        /// `retry-after-ms` / `retry-after`, when the server sent one.
        retry_after: Option<Duration>,
        /// `x-should-retry`, when the server sent it.
        should_retry: Option<bool>,
    },

    /// An `error` event arrived inside a stream that had started with HTTP 200.
    #[error("stream error {kind}: {message}{}{}", kind.hint(), request_id_suffix(.request_id))]
    StreamError {
        /// The error's kind, from `error.type`.
        kind: ApiErrorKind,
        /// The server's message.
        message: String,
        /// The response's `request-id`, when sent.
        request_id: Option<String>,
    },

    /// Could not connect, or the connection broke.
    #[error(
        "connection to the Anthropic API failed: {message} (check the network and ANTHROPIC_BASE_URL)"
    )]
    Connection {
        /// What failed.
        message: String,
    },

    /// A loopback address refused the connection: no server runs there (a local proxy or
    /// simulator that was not started, a wrong port). Retried only briefly.
    #[error(
        "nothing is listening at {url} (connection refused): start the server there, or check \
         ANTHROPIC_BASE_URL"
    )]
    NothingListening {
        /// The URL nothing listens at.
        url: String,
    },

    /// The client gave up waiting (connect, headers, or no stream data for too long).
    #[error("timed out after {} s waiting for {what}", after.as_secs_f64())]
    Timeout {
        /// What the client waited for.
        what: String,
        /// How long it waited.
        after: Duration,
    },

    /// The stream ended before `message_stop`.
    #[error("the response stream ended before message_stop{}", request_id_suffix(.request_id))]
    IncompleteStream {
        /// The response's `request-id`, when sent.
        request_id: Option<String>,
    },

    /// A body or event that is not the JSON / SSE the API sends.
    #[error("could not decode {what}: {message}")]
    Decode {
        /// What could not be decoded.
        what: String,
        /// The decoder's message.
        message: String,
    },

    /// A streamed response held an event that could not be decoded (a corrupt frame, invalid
    /// JSON in a `data:` line). Retried like a dropped stream: the reply is incomplete either way.
    #[error("the response stream held an event that could not be decoded: {message}{}", request_id_suffix(.request_id))]
    CorruptStream {
        /// The decoder's message.
        message: String,
        /// The response's `request-id`, when sent.
        request_id: Option<String>,
    },

    /// A tool call's assembled `input` JSON did not parse at block stop.
    #[error("tool call `{name}` (block {index}) has invalid input JSON: {message}")]
    InvalidToolInput {
        /// The content block's index.
        index: usize,
        /// The tool called.
        name: String,
        /// The JSON parser's message.
        message: String,
        /// The input as assembled.
        partial_json: String,
    },

    /// Stream events in an order the protocol does not allow (a delta for a block never started).
    #[error("stream protocol violation: {message}")]
    Protocol {
        /// What arrived out of order.
        message: String,
    },
}

/// An [`ApiError::OpenAi`]'s message: the inner error worded for the openai provider.
fn openai_message(inner: &ApiError) -> String {
    match inner {
        ApiError::Status {
            status,
            kind,
            message,
            request_id,
            ..
        } => format!(
            "HTTP {status} {kind}: {message}{}{}",
            kind.openai_hint(),
            request_id_suffix(request_id)
        ),
        ApiError::StreamError {
            kind,
            message,
            request_id,
        } => format!(
            "stream error {kind}: {message}{}{}",
            kind.openai_hint(),
            request_id_suffix(request_id)
        ),
        ApiError::Connection { message } => format!(
            "connection to the OpenAI-compatible endpoint failed: {message} (check the network \
             and OPENAI_BASE_URL)"
        ),
        ApiError::NothingListening { url } => format!(
            "nothing is listening at {url} (connection refused): start the server there (for \
             Ollama, `ollama serve`), or check OPENAI_BASE_URL"
        ),
        ApiError::IncompleteStream { request_id } => format!(
            "the response stream ended before `data: [DONE]` or a finish_reason{}",
            request_id_suffix(request_id)
        ),
        other => other.to_string(),
    }
}

/// An error body that is not the JSON expected, as a message: its text, at most 500 characters.
pub(crate) fn body_text(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        "(empty body)".to_owned()
    } else {
        text.chars().take(500).collect()
    }
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
    /// `error.type` (`overloaded_error`, `invalid_request_error`, ...).
    #[serde(rename = "type", default)]
    pub error_type: String,
    /// `error.message`.
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
            _ => (ApiErrorKind::from_status(status), body_text(body), None),
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

    /// The error an [`ApiError::OpenAi`] wraps, or this one: what retry decisions look at.
    pub fn classified(&self) -> &ApiError {
        match self {
            Self::OpenAi(inner) => inner.classified(),
            other => other,
        }
    }

    /// The API's error kind, for HTTP and in-stream errors.
    pub fn kind(&self) -> Option<&ApiErrorKind> {
        self.facts().kind
    }

    /// The HTTP status, for HTTP errors.
    pub fn status(&self) -> Option<u16> {
        self.facts().status
    }

    /// The server's request id, when known (quote it in bug reports).
    pub fn request_id(&self) -> Option<&str> {
        self.facts().request_id
    }

    /// The API's message text, for HTTP and in-stream errors.
    pub fn api_message(&self) -> Option<&str> {
        self.facts().api_message
    }

    /// What the error says about the server's answer, looked through [`ApiError::OpenAi`].
    fn facts(&self) -> Facts<'_> {
        match self {
            Self::Status {
                status,
                kind,
                message,
                request_id,
                ..
            } => Facts {
                kind: Some(kind),
                status: Some(*status),
                request_id: request_id.as_deref(),
                api_message: Some(message),
            },
            Self::StreamError {
                kind,
                message,
                request_id,
            } => Facts {
                kind: Some(kind),
                status: None,
                request_id: request_id.as_deref(),
                api_message: Some(message),
            },
            Self::CorruptStream { request_id, .. } | Self::IncompleteStream { request_id } => {
                Facts {
                    request_id: request_id.as_deref(),
                    ..Facts::NONE
                }
            }
            Self::OpenAi(inner) => inner.facts(),
            Self::MissingCredentials
            | Self::MissingOpenAiKey
            | Self::Unsupported { .. }
            | Self::Config { .. }
            | Self::Connection { .. }
            | Self::NothingListening { .. }
            | Self::Timeout { .. }
            | Self::Decode { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol { .. } => Facts::NONE,
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

    /// The server said the prompt does not fit the model's context, in words no parser here
    /// reads numbers from (an OpenAI-compatible server's `context_length_exceeded`). The
    /// numbers, when the message has them, come from [`ApiError::prompt_too_long`] and
    /// [`ApiError::context_limit_exceeded`] as on Anthropic's API.
    pub fn is_context_length_exceeded(&self) -> bool {
        self.kind()
            .is_some_and(|kind| kind.as_str() == CONTEXT_LENGTH_EXCEEDED)
            || self.prompt_too_long().is_some()
            || self.context_limit_exceeded().is_some()
    }

    /// Whether the retry policy may try again after this error (before `x-should-retry`, which
    /// [`crate::RetryPolicy`] consults separately).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::OpenAi(inner) => inner.is_retryable(),
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
            | Self::MissingOpenAiKey
            | Self::Unsupported { .. }
            | Self::Config { .. }
            | Self::Decode { .. }
            | Self::InvalidToolInput { .. }
            | Self::Protocol { .. } => false,
        }
    }
}

/// What an [`ApiError`] says about the server's answer (none of it for the client's own errors).
struct Facts<'a> {
    kind: Option<&'a ApiErrorKind>,
    status: Option<u16>,
    request_id: Option<&'a str>,
    api_message: Option<&'a str>,
}

impl<'a> Facts<'a> {
    const NONE: Self = Facts {
        kind: None,
        status: None,
        request_id: None,
        api_message: None,
    };
}

/// The error kind an OpenAI-compatible server's "prompt does not fit" maps to
/// (`ApiErrorKind::Other`, named after OpenAI's `code`).
pub(crate) const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";

/// Parse `prompt is too long: 219898 tokens > 200000 maximum` (anywhere in `message`).
pub(crate) fn parse_prompt_too_long(message: &str) -> Option<(u64, u64)> {
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
pub(crate) fn parse_context_limit(message: &str) -> Option<(u64, u64, u64)> {
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
pub(crate) fn leading_number(s: &str) -> Option<(u64, &str)> {
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

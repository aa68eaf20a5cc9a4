//! Errors of OpenAI-compatible servers as our [`ApiError`]s, so retries and recovery behave as
//! on Anthropic's API.
//!
//! Bodies come in several shapes: OpenAI's `{"error": {"message", "type", "code"}}`, Ollama's
//! `{"error": "text"}`, older vLLM's bare `{"object": "error", "message", ...}`, FastAPI's
//! `{"detail": ...}`, or plain text. The HTTP status gives the kind (429 and 5xx are retried,
//! `retry-after` honoured), except that `insufficient_quota` is a billing error and never
//! retried. A prompt that does not fit (OpenAI's code `context_length_exceeded`, llama.cpp's
//! `exceed_context_size_error`, the wordings of vLLM, llama.cpp and Ollama) gets the kind
//! [`CONTEXT_LENGTH_EXCEEDED`], and its message gains Anthropic's own phrase with the numbers
//! when the server gave them, so the loop's reactive compaction runs either way.

use std::time::Duration;

use serde_json::Value;

use crate::error::{
    ApiError, ApiErrorKind, CONTEXT_LENGTH_EXCEEDED, ErrorBody, body_text, leading_number,
};

/// An error body, whatever shape it came in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ChatError {
    pub message: String,
    pub error_type: Option<String>,
    /// `code`, a string (`context_length_exceeded`) or a number (`400`) as text.
    pub code: Option<String>,
    /// llama.cpp's figures on `exceed_context_size_error`.
    pub n_prompt_tokens: Option<u64>,
    pub n_ctx: Option<u64>,
}

fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl ChatError {
    /// From a parsed body (or a chunk holding an error).
    pub fn from_value(value: &Value) -> Self {
        let object = match value {
            Value::Object(map) => match map.get("error") {
                Some(Value::Object(inner)) => inner,
                Some(Value::String(text)) => {
                    return Self {
                        message: text.clone(),
                        ..Self::default()
                    };
                }
                _ => map,
            },
            Value::String(text) => {
                return Self {
                    message: text.clone(),
                    ..Self::default()
                };
            }
            _ => {
                return Self::default();
            }
        };
        let message = text_of(object.get("message"))
            .or_else(|| match object.get("detail") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(other @ (Value::Array(_) | Value::Object(_))) => Some(other.to_string()),
                _ => None,
            })
            .unwrap_or_default();
        Self {
            message,
            error_type: text_of(object.get("type")),
            code: text_of(object.get("code")),
            n_prompt_tokens: object.get("n_prompt_tokens").and_then(Value::as_u64),
            n_ctx: object.get("n_ctx").and_then(Value::as_u64),
        }
    }

    /// From a response body: JSON in any of the shapes above, or text.
    pub fn from_body(body: &[u8]) -> Self {
        if let Ok(value) = serde_json::from_slice::<Value>(body) {
            let error = Self::from_value(&value);
            if !error.message.is_empty() || error.error_type.is_some() || error.code.is_some() {
                return error;
            }
        }
        Self {
            message: body_text(body),
            ..Self::default()
        }
    }

    fn is(&self, name: &str) -> bool {
        self.code.as_deref() == Some(name) || self.error_type.as_deref() == Some(name)
    }
}

/// A prompt that does not fit, with what the server said about its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// The prompt alone: `(tokens, maximum)` when known.
    Prompt(Option<u64>, Option<u64>),
    /// The prompt plus the output asked for: `input + max_tokens > limit`.
    WithOutput { input: u64, output: u64, limit: u64 },
}

/// The number after `needle` in `text` (both lowercase), if any.
fn number_after(text: &str, needle: &str) -> Option<u64> {
    let at = text.find(needle)? + needle.len();
    leading_number(&text[at..]).map(|(n, _)| n)
}

/// Whether `error` says the prompt does not fit; `status` is `None` for an in-stream error.
pub(crate) fn overflow(status: Option<u16>, error: &ChatError) -> Option<Overflow> {
    let lower = error.message.to_ascii_lowercase();
    let by_code = error.is(CONTEXT_LENGTH_EXCEEDED) || error.is("exceed_context_size_error");
    // Wording alone counts only where a prompt can be refused (never on a 429 rate limit).
    let by_words = matches!(status, None | Some(400 | 413 | 422 | 500))
        && [
            "maximum context length",
            "context length exceeded",
            "context_length_exceeded",
            "exceeds the context",
            "exceed the context",
            "exceeds the available context",
            "exceeds the maximum context",
            "context window",
            "longer than the maximum model length",
            "prompt is too long",
            "input length exceeds",
        ]
        .iter()
        .any(|needle| lower.contains(needle));
    if !(by_code || by_words) {
        return None;
    }
    if let (Some(tokens), Some(maximum)) = (error.n_prompt_tokens, error.n_ctx) {
        return Some(Overflow::Prompt(Some(tokens), Some(maximum)));
    }
    // vLLM, OpenAI: "This model's maximum context length is M tokens. However, ..."
    let maximum = number_after(&lower, "maximum context length is")
        .or_else(|| number_after(&lower, "maximum model length of"))
        .or_else(|| number_after(&lower, "context length of"))
        .or_else(|| number_after(&lower, "context window of"));
    // "... you requested X tokens (P in the messages, K in the completion)"
    if let (Some(limit), Some(at)) = (maximum, lower.find("tokens (")) {
        let rest = &lower[at + "tokens (".len()..];
        if let Some((input, rest)) = leading_number(rest)
            && let Some(rest) = rest.trim_start().strip_prefix("in the messages,")
            && let Some((output, _)) = leading_number(rest)
        {
            return Some(Overflow::WithOutput {
                input,
                output,
                limit,
            });
        }
    }
    // newer vLLM: "... and your request has P input tokens (K > M - P)"
    if let (Some(limit), Some(input)) = (maximum, number_after(&lower, "your request has")) {
        let output = lower
            .find("input tokens (")
            .and_then(|at| leading_number(&lower[at + "input tokens (".len()..]))
            .map(|(n, _)| n);
        if let Some(output) = output {
            return Some(Overflow::WithOutput {
                input,
                output,
                limit,
            });
        }
    }
    let tokens = number_after(&lower, "resulted in")
        .or_else(|| number_after(&lower, "prompt (length"))
        .or_else(|| number_after(&lower, "decoder prompt (length"));
    Some(Overflow::Prompt(tokens, maximum))
}

/// The message with Anthropic's phrase for an overflow appended, so the numbers parse as they
/// do from Anthropic's API.
fn explained(message: &str, overflow: Overflow) -> String {
    match overflow {
        Overflow::Prompt(Some(tokens), Some(maximum)) => {
            format!("{message} (prompt is too long: {tokens} tokens > {maximum} maximum)")
        }
        Overflow::Prompt(..) => message.to_owned(),
        Overflow::WithOutput {
            input,
            output,
            limit,
        } => format!(
            "{message} (input length and `max_tokens` exceed context limit: {input} + {output} > \
             {limit})"
        ),
    }
}

/// The error for a non-success response.
pub(crate) fn from_response(
    status: u16,
    body: &[u8],
    request_id: Option<String>,
    retry_after: Option<Duration>,
    should_retry: Option<bool>,
) -> ApiError {
    let error = ChatError::from_body(body);
    let (kind, message, should_retry) = if let Some(overflow) = overflow(Some(status), &error) {
        (
            ApiErrorKind::Other(CONTEXT_LENGTH_EXCEEDED.to_owned()),
            explained(&error.message, overflow),
            should_retry,
        )
    } else if error.is("insufficient_quota") {
        // A 429 that waiting does not fix.
        (ApiErrorKind::Billing, error.message, Some(false))
    } else {
        (
            ApiErrorKind::from_status(status),
            error.message,
            should_retry,
        )
    };
    ApiError::OpenAi(Box::new(ApiError::Status {
        status,
        kind,
        message,
        request_id,
        retry_after,
        should_retry,
    }))
}

/// The `error` event for an error that arrived inside a stream: its type is the Anthropic type
/// that retries alike (a server error is retried, a bad request is not).
pub(crate) fn stream_error_body(error: &ChatError) -> ErrorBody {
    if let Some(overflow) = overflow(None, error) {
        return ErrorBody {
            error_type: CONTEXT_LENGTH_EXCEEDED.to_owned(),
            message: explained(&error.message, overflow),
        };
    }
    let named = error
        .code
        .as_deref()
        .into_iter()
        .chain(error.error_type.as_deref())
        .find_map(|name| match name.parse::<u16>() {
            Ok(status) => Some(ApiErrorKind::from_status(status)),
            Err(_) => kind_named(name),
        })
        .unwrap_or(ApiErrorKind::Api);
    let message = if error.message.is_empty() {
        "the server reported an error without a message".to_owned()
    } else {
        error.message.clone()
    };
    ErrorBody {
        error_type: named.as_str().to_owned(),
        message,
    }
}

/// The kind an OpenAI-style `type` or `code` names, if it names one we know.
fn kind_named(name: &str) -> Option<ApiErrorKind> {
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_str() {
        "server_error" | "internal_error" | "internalservererror" | "api_error" => {
            ApiErrorKind::Api
        }
        "rate_limit_exceeded" | "rate_limit_error" | "ratelimiterror" => ApiErrorKind::RateLimit,
        "overloaded" | "overloaded_error" | "serviceunavailableerror" | "service_unavailable" => {
            ApiErrorKind::Overloaded
        }
        "timeout" | "timeout_error" => ApiErrorKind::Timeout,
        "invalid_request_error" | "badrequesterror" | "invalid_request" => {
            ApiErrorKind::InvalidRequest
        }
        "insufficient_quota" => ApiErrorKind::Billing,
        _ => return None,
    })
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;

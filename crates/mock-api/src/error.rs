//! Errors: [`ApiError`] is what the simulated API answers (status, type, message, as the real
//! API words them); [`MockError`] is what the library returns to its caller.

use std::path::PathBuf;

use serde_json::{Value, json};

/// An error response of the simulated API: `{"type":"error","error":{"type":..,"message":..}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub error_type: String,
    pub message: String,
    /// Seconds, sent as `retry-after`.
    pub retry_after: Option<u64>,
    /// Sent as `x-should-retry` when set.
    pub should_retry: Option<bool>,
    /// OpenAI's `code` on the chat-completions route (`context_length_exceeded`).
    pub code: Option<String>,
}

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            error_type: error_type_for_status(status).to_string(),
            message: message.into(),
            retry_after: None,
            should_retry: None,
            code: None,
        }
    }

    /// 400 `invalid_request_error`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }

    /// The JSON body, with the request id as the real API adds it.
    pub fn body(&self, request_id: &str) -> Value {
        json!({
            "type": "error",
            "error": {"type": self.error_type, "message": self.message},
            "request_id": request_id,
        })
    }
}

/// The error type the real API uses for a status.
pub fn error_type_for_status(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// The HTTP status the API uses for an error type sent as an SSE event.
pub(crate) fn status_for_type(error_type: &str) -> u16 {
    match error_type {
        "overloaded_error" => 529,
        "rate_limit_error" => 429,
        "invalid_request_error" => 400,
        "timeout_error" => 504,
        _ => 500,
    }
}

/// The message the real API sends with an error type, for faults that do not give their own.
pub fn default_message_for_type(error_type: &str) -> &'static str {
    match error_type {
        "rate_limit_error" => "Number of request tokens has exceeded your per-minute rate limit",
        "overloaded_error" => "Overloaded",
        "authentication_error" => "invalid x-api-key",
        "permission_error" => {
            "Your API key does not have permission to use the specified resource."
        }
        "not_found_error" => "Not found",
        "request_too_large" => "Request exceeds the maximum allowed number of bytes.",
        "timeout_error" => "Request timed out",
        "billing_error" => "Your credit balance is too low to access the Anthropic API.",
        "invalid_request_error" => "Invalid request",
        _ => "Internal server error",
    }
}

/// Errors of the library itself (starting the server, loading a scenario).
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    #[error(
        "could not bind 127.0.0.1:{port}: {source} (is the port in use? use 0 for any free port)"
    )]
    Bind {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("could not read scenario file {path}: {source}")]
    ReadScenario {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("scenario {origin} is not valid: {message}")]
    Scenario { origin: String, message: String },
    #[error("could not open the request log in {dir}: {source}")]
    Log {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

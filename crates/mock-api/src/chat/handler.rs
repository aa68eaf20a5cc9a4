//! `POST /v1/chat/completions`: the request is checked, converted to the Messages form, run
//! through the same scenario rules, and answered with OpenAI chunks; faults apply as on
//! `/v1/messages` (`after_events` counts chunks, the first being the one with the role).

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use bytes::Bytes;
use serde_json::Value;

use crate::cache::Usage;
use crate::chat::convert::{analyze, check_body, check_headers, to_messages_form};
use crate::chat::render::{
    ChunkSource, chunks, completion_json, corrupt_chunk, error_body, error_chunk,
};
use crate::error::ApiError;
use crate::json::str_field;
use crate::log::RequestRecord;
use crate::prompt::Prompt;
use crate::route::{Exchange, Scripted, Shared, Wire, base_headers};

/// The route.
pub const PATH: &str = "/v1/chat/completions";

/// llama-cpp-python's token counter (the `llama-cpp` dialect only; 404 otherwise).
pub const TOKENIZE_COUNT_PATH: &str = "/extras/tokenize/count";

/// `POST /extras/tokenize/count` `{"input": TEXT}` → `{"count": N}`, at the mock's 4 bytes a
/// token, as llama-cpp-python's server answers it; logged like any request.
pub(crate) async fn tokenize_count(
    axum::extract::State(shared): axum::extract::State<std::sync::Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let mut record = shared.new_record(false, TOKENIZE_COUNT_PATH, &headers, &body);
    let input = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("input").and_then(Value::as_str).map(str::len));
    let (status, out) = match (shared.chat_dialect, input) {
        (crate::chat::ChatDialect::LlamaCpp, Some(bytes)) => (
            200,
            serde_json::json!({"count": (bytes as u64).div_ceil(4)}),
        ),
        (crate::chat::ChatDialect::LlamaCpp, None) => {
            (422, serde_json::json!({"detail": "input: Field required"}))
        }
        _ => (404, serde_json::json!({"detail": "Not Found"})),
    };
    record.status = status;
    shared.record(record);
    let status = axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::OK);
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        out.to_string(),
    )
        .into_response()
}

/// OpenAI's `code` for a prompt that does not fit.
const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";

/// The chat-completions wire.
const CHAT: Wire = Wire {
    path: PATH,
    check_headers,
    check_body,
    too_long,
    no_room,
    headers: headers_for,
    error_body: |err, _request_id| error_body(err).to_string(),
    error_frame: error_chunk,
    corrupt_frame: corrupt_chunk,
    frame_names: ["chunks", "error chunk", "corrupt chunk"],
};

/// The Messages API's headers, and the request id again as OpenAI names it.
fn headers_for(request_id: &str, content_type: &'static str) -> HeaderMap {
    let mut h = base_headers(request_id, content_type);
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert(HeaderName::from_static("x-request-id"), v);
    }
    h
}

fn too_long(tokens: u64, window: u64) -> ApiError {
    let mut err = ApiError::invalid(format!(
        "This model's maximum context length is {window} tokens. However, your messages \
         resulted in {tokens} tokens. Please reduce the length of the messages."
    ));
    err.code = Some(CONTEXT_LENGTH_EXCEEDED.to_string());
    err
}

fn no_room(input: u64, max_tokens: u64, window: u64) -> ApiError {
    let mut err = ApiError::invalid(format!(
        "This model's maximum context length is {window} tokens. However, you requested {} \
         tokens ({input} in the messages, {max_tokens} in the completion). Please reduce the \
         length of the messages or completion.",
        input + max_tokens,
    ));
    err.code = Some(CONTEXT_LENGTH_EXCEEDED.to_string());
    err
}

/// A `/v1/chat/completions` request, prepared.
pub(crate) struct ChatExchange {
    model: String,
    include_usage: bool,
    prompt: Prompt,
    scripted: Scripted,
    usage: Usage,
}

impl Exchange for ChatExchange {
    const WIRE: Wire = CHAT;

    fn prepare(shared: &Shared, body: Value, record: &mut RequestRecord) -> Result<Self, ApiError> {
        let converted = to_messages_form(&body);
        record.normalized = Some(converted.clone());
        let include_usage = body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let model = str_field(&body, "model").to_string();
        let max_tokens = converted
            .get("max_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        let prompt = analyze(&body);
        let scripted = CHAT.script(shared, &converted, record, max_tokens, prompt.total_tokens)?;
        let cached = shared.chat_cache().cached_tokens(&prompt);
        let usage = Usage {
            input_tokens: prompt.total_tokens - cached,
            cache_read_input_tokens: cached,
            output_tokens: scripted.completion.output_tokens,
            ..Usage::default()
        };
        record.usage = Some(usage);
        Ok(Self {
            model,
            include_usage,
            prompt,
            scripted,
            usage,
        })
    }

    fn scripted(&self) -> &Scripted {
        &self.scripted
    }

    /// Its prefixes become readable.
    fn commit(&self, shared: &Shared) {
        shared.chat_cache().commit(&self.prompt);
    }

    fn frames(&self, shared: &Shared, number: u64) -> Vec<Bytes> {
        chunks(&self.source(shared, &completion_id(number)))
    }

    fn body(&self, shared: &Shared, number: u64) -> String {
        completion_json(&self.source(shared, &completion_id(number))).to_string()
    }
}

impl ChatExchange {
    fn source<'a>(&'a self, shared: &Shared, id: &'a str) -> ChunkSource<'a> {
        ChunkSource {
            id,
            model: &self.model,
            created: shared.clock.now().as_secs(),
            completion: &self.scripted.completion,
            usage: &self.usage,
            include_usage: self.include_usage,
            dialect: shared.chat_dialect,
        }
    }
}

fn completion_id(number: u64) -> String {
    format!("chatcmpl-mock-{number:06}")
}

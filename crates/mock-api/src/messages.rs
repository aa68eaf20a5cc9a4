//! `POST /v1/messages` (streaming and not) and `POST /v1/messages/count_tokens`, with the real
//! API's validation, prompt-cache accounting, the scripted reply and its faults; and the 404
//! every other path gets.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Value, json};

use crate::cache::{Usage, WriteTicket};
use crate::error::ApiError;
use crate::json::str_field;
use crate::log::RequestRecord;
use crate::prompt::analyze;
use crate::route::{Exchange, Scripted, Shared, Wire, base_headers};
use crate::sse;
use crate::validate::{Endpoint, check_body, check_headers, parse_body};

/// The route.
pub(crate) const PATH: &str = "/v1/messages";

/// The token-counting route.
pub(crate) const COUNT_TOKENS_PATH: &str = "/v1/messages/count_tokens";

/// The Messages API's wire.
const MESSAGES: Wire = Wire {
    path: PATH,
    check_headers,
    check_body: |body| check_body(body, Endpoint::Messages),
    too_long,
    no_room,
    headers: base_headers,
    error_body: |err, request_id| err.body(request_id).to_string(),
    error_frame: |err| sse::error_event(&err.error_type, &err.message),
    corrupt_frame: sse::corrupt_frame,
    frame_names: ["events", "sse error", "corrupt frame"],
};

fn too_long(tokens: u64, maximum: u64) -> ApiError {
    ApiError::invalid(format!(
        "prompt is too long: {tokens} tokens > {maximum} maximum"
    ))
}

fn no_room(input: u64, max_tokens: u64, window: u64) -> ApiError {
    ApiError::invalid(format!(
        "input length and `max_tokens` exceed context limit: {input} + {max_tokens} > {window}, decrease input length or `max_tokens` and try again"
    ))
}

/// Any other path: 404 in the Messages API's form.
pub(crate) async fn not_found(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let record = shared.new_record(false, "?", &headers, &body);
    MESSAGES.fail(&shared, record, &ApiError::new(404, "Not found"))
}

pub(crate) async fn count_tokens(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut record = shared.new_record(false, COUNT_TOKENS_PATH, &headers, &body);
    let result = check_headers(&headers)
        .and_then(|()| parse_body(&body))
        .and_then(|json| {
            check_body(&json, Endpoint::CountTokens)?;
            analyze(&json)
        });
    match result {
        Err(err) => MESSAGES.fail(&shared, record, &err),
        Ok(prompt) => {
            let h = base_headers(&record.request_id, "application/json");
            let out = json!({"input_tokens": prompt.total_tokens}).to_string();
            record.status = 200;
            shared.record(record);
            (StatusCode::OK, h, out).into_response()
        }
    }
}

/// A `/v1/messages` request, prepared.
pub(crate) struct MessagesExchange {
    model: String,
    scripted: Scripted,
    usage: Usage,
    ticket: WriteTicket,
}

impl Exchange for MessagesExchange {
    const WIRE: Wire = MESSAGES;

    fn prepare(shared: &Shared, body: Value, record: &mut RequestRecord) -> Result<Self, ApiError> {
        let model = str_field(&body, "model").to_string();
        let max_tokens = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(1);
        let prompt = analyze(&body)?;
        let mut scripted =
            MESSAGES.script(shared, &body, record, max_tokens, prompt.total_tokens)?;
        let scenario = &shared.script.scenario;
        let min = scenario.min_cacheable_for(&model);
        let (report, ticket) = shared.cache().account(&prompt, min, shared.clock.now());
        crate::script::check_server_tools(&mut scripted.completion, &body);
        let mut usage = report.usage;
        usage.output_tokens = scripted.completion.output_tokens;
        record.usage = Some(usage);
        record.cache = Some(report);
        Ok(Self {
            model,
            scripted,
            usage,
            ticket,
        })
    }

    fn scripted(&self) -> &Scripted {
        &self.scripted
    }

    fn abandon(&self, shared: &Shared) {
        shared.cache().abandon(&self.ticket);
    }

    /// Its cache writes become readable.
    fn commit(&self, shared: &Shared) {
        shared.cache().commit(&self.ticket, shared.clock.now());
    }

    fn frames(&self, _shared: &Shared, number: u64) -> Vec<Bytes> {
        let id = message_id(number);
        sse::events(&id, &self.model, &self.scripted.completion, &self.usage)
    }

    fn body(&self, _shared: &Shared, number: u64) -> String {
        let id = message_id(number);
        sse::message_json(&id, &self.model, &self.scripted.completion, &self.usage).to_string()
    }
}

fn message_id(number: u64) -> String {
    format!("msg_mock_{number:06}")
}

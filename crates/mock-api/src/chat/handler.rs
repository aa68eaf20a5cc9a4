//! `POST /v1/chat/completions`: the request is checked, converted to the Messages form, run
//! through the same scenario rules, and answered with OpenAI chunks; faults apply as on
//! `/v1/messages` (`after_events` counts chunks, the first being the one with the role).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use crate::cache::Usage;
use crate::chat::convert::{analyze, check_body, check_headers, to_messages_form};
use crate::chat::render::{
    ChunkSource, chunks, completion_json, corrupt_chunk, error_body, error_chunk,
};
use crate::error::{ApiError, default_message_for_type};
use crate::log::RequestRecord;
use crate::prompt::{Prompt, RequestTexts};
use crate::scenario::Fault;
use crate::script::{Completion, MatchInput, render};
use crate::server::{
    MAX_BODY_BYTES, Shared, base_headers, error_response_with, event_stream, new_record,
    status_for_type,
};
use crate::validate::parse_body;

/// The route.
pub const PATH: &str = "/v1/chat/completions";

/// OpenAI's `code` for a prompt that does not fit.
const CONTEXT_LENGTH_EXCEEDED: &str = "context_length_exceeded";

fn headers_for(request_id: &str, content_type: &'static str) -> HeaderMap {
    let mut h = base_headers(request_id, content_type);
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert(HeaderName::from_static("x-request-id"), v);
    }
    h
}

fn fail(shared: &Shared, mut record: RequestRecord, err: &ApiError) -> Response {
    record.status = err.status;
    record.error = Some(err.message.clone());
    let response = error_response_with(err, &record.request_id, error_body(err).to_string());
    shared.record(record);
    response
}

fn too_long(window: u64, tokens: u64) -> ApiError {
    let mut err = ApiError::invalid(format!(
        "This model's maximum context length is {window} tokens. However, your messages \
         resulted in {tokens} tokens. Please reduce the length of the messages."
    ));
    err.code = Some(CONTEXT_LENGTH_EXCEEDED.to_string());
    err
}

struct Prepared {
    model: String,
    stream: bool,
    include_usage: bool,
    prompt: Prompt,
    completion: Completion,
    usage: Usage,
    fault: Option<Fault>,
    latency: Duration,
    chunk_delay: Duration,
}

fn prepare(
    shared: &Shared,
    headers: &HeaderMap,
    bytes: &Bytes,
    record: &mut RequestRecord,
) -> Result<Prepared, ApiError> {
    check_headers(headers)?;
    if bytes.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            413,
            default_message_for_type("request_too_large"),
        ));
    }
    let body = parse_body(bytes)?;
    check_body(&body)?;
    let converted = to_messages_form(&body);
    record.normalized = Some(converted.clone());
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    record.stream = stream;
    let include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let max_tokens = converted
        .get("max_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let prompt = analyze(&body);
    let scenario = &shared.script.scenario;
    let window = scenario.context_window;
    if prompt.total_tokens > window {
        return Err(too_long(window, prompt.total_tokens));
    }
    if scenario.check_output_room && prompt.total_tokens + max_tokens > window {
        let mut err = ApiError::invalid(format!(
            "This model's maximum context length is {window} tokens. However, you requested {} \
             tokens ({} in the messages, {max_tokens} in the completion). Please reduce the \
             length of the messages or completion.",
            prompt.total_tokens + max_tokens,
            prompt.total_tokens
        ));
        err.code = Some(CONTEXT_LENGTH_EXCEEDED.to_string());
        return Err(err);
    }
    let texts = RequestTexts::from_body(&converted);
    let selection = shared.script.select(&MatchInput {
        body: &converted,
        texts: &texts,
        request: record.number,
        stream,
        max_tokens,
    });
    record.rule = Some(selection.label.clone());
    match &selection.fault {
        Some(Fault::Http {
            status,
            retry_after,
            should_retry,
            error_type,
            message,
        }) => {
            let mut err = ApiError::new(*status, "");
            if let Some(t) = error_type {
                err.error_type = t.clone();
            }
            err.message = message
                .clone()
                .unwrap_or_else(|| default_message_for_type(&err.error_type).to_string());
            err.retry_after = *retry_after;
            err.should_retry = *should_retry;
            record.fault = Some(format!("http {status}"));
            return Err(err);
        }
        Some(Fault::PromptTooLong { tokens, maximum }) => {
            record.fault = Some("prompt_too_long".to_string());
            return Err(too_long(
                maximum.unwrap_or(window),
                tokens.unwrap_or_else(|| prompt.total_tokens.max(window + 1)),
            ));
        }
        Some(Fault::SseError { .. } | Fault::Drop { .. } | Fault::Corrupt { .. }) | None => {}
    }
    let cached = shared.chat_cache().cached_tokens(&prompt);
    let completion = render(
        &selection.reply,
        &selection.captures,
        max_tokens,
        &shared.script,
    );
    let usage = Usage {
        input_tokens: prompt.total_tokens - cached,
        cache_read_input_tokens: cached,
        output_tokens: completion.output_tokens,
        ..Usage::default()
    };
    record.usage = Some(usage);
    let latency = selection.reply.latency_ms.unwrap_or(scenario.latency_ms);
    let chunk_delay = selection
        .reply
        .chunk_delay_ms
        .unwrap_or(scenario.chunk_delay_ms);
    Ok(Prepared {
        model,
        stream,
        include_usage,
        prompt,
        completion,
        usage,
        fault: selection.fault,
        latency: Duration::from_millis(latency),
        chunk_delay: Duration::from_millis(chunk_delay),
    })
}

/// The error a fault scripts for after a 200.
fn stream_fault_error(error_type: &str, message: &Option<String>) -> ApiError {
    let mut err = ApiError::new(status_for_type(error_type), "");
    err.error_type = error_type.to_string();
    err.message = message
        .clone()
        .unwrap_or_else(|| default_message_for_type(error_type).to_string());
    err
}

pub(crate) async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let number = shared.messages_requests.fetch_add(1, Ordering::Relaxed) + 1;
    let mut record = new_record(&shared, number, PATH, &headers, &body);
    let prepared = match prepare(&shared, &headers, &body, &mut record) {
        Ok(p) => p,
        Err(err) => return fail(&shared, record, &err),
    };
    if !prepared.latency.is_zero() {
        tokio::time::sleep(prepared.latency).await;
    }
    if !prepared.stream
        && let Some(Fault::SseError {
            error_type,
            message,
            ..
        }) = &prepared.fault
    {
        record.fault = Some(format!("error {error_type}"));
        record.usage = None;
        return fail(&shared, record, &stream_fault_error(error_type, message));
    }
    // The response starts now: its prefixes become readable.
    shared.chat_cache().commit(&prepared.prompt);
    let request_id = record.request_id.clone();
    let id = format!("chatcmpl-mock-{number:06}");
    let created = shared.clock.now().as_secs();
    let source = ChunkSource {
        id: &id,
        model: &prepared.model,
        created,
        completion: &prepared.completion,
        usage: &prepared.usage,
        include_usage: prepared.include_usage,
        dialect: shared.chat_dialect,
    };
    let response = if prepared.stream {
        let mut events = chunks(&source);
        let mut drop_at_end = false;
        match &prepared.fault {
            Some(Fault::SseError {
                after_events,
                error_type,
                message,
            }) => {
                events.truncate(*after_events);
                events.push(error_chunk(&stream_fault_error(error_type, message)));
                record.fault = Some(format!("error chunk after {after_events} chunks"));
            }
            Some(Fault::Drop { after_events }) => {
                events.truncate(*after_events);
                drop_at_end = true;
                record.fault = Some(format!("drop after {after_events} chunks"));
            }
            Some(Fault::Corrupt { after_events }) => {
                events.truncate(*after_events);
                events.push(corrupt_chunk());
                record.fault = Some(format!("corrupt chunk after {after_events} chunks"));
            }
            Some(Fault::Http { .. } | Fault::PromptTooLong { .. }) | None => {}
        }
        let mut h = headers_for(&request_id, "text/event-stream; charset=utf-8");
        h.insert(
            HeaderName::from_static("cache-control"),
            HeaderValue::from_static("no-cache"),
        );
        let body = Body::from_stream(event_stream(events, prepared.chunk_delay, drop_at_end));
        (StatusCode::OK, h, body).into_response()
    } else {
        let h = headers_for(&request_id, "application/json");
        let json = completion_json(&source).to_string();
        match &prepared.fault {
            Some(Fault::Drop { .. }) => {
                record.fault = Some("drop before the body".to_string());
                let body =
                    Body::from_stream(event_stream(Vec::<Bytes>::new(), Duration::ZERO, true));
                (StatusCode::OK, h, body).into_response()
            }
            Some(Fault::Corrupt { .. }) => {
                record.fault = Some("corrupt body".to_string());
                let cut = json.len() / 2;
                (StatusCode::OK, h, json.as_bytes()[..cut].to_vec()).into_response()
            }
            _ => (StatusCode::OK, h, json).into_response(),
        }
    };
    shared.record(record);
    response
}

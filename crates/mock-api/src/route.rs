//! What the model routes (`/v1/messages`, `/v1/chat/completions`) share: the server's state,
//! the request record, the context-window checks, the scripted reply with the faults that
//! answer instead of it, and the response, whole or streamed with the faults that strike after
//! a 200, in one handler ([`handle`]). What differs is a route's [`Exchange`]: its checks, its
//! prompt and cache, its response's shapes; and its [`Wire`]: the wording of errors, their
//! body, the headers, the frames a fault sends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use crate::cache::PromptCache;
use crate::chat::convert::PrefixCache;
use crate::chat::render::ChatDialect;
use crate::clock::MockClock;
use crate::error::{ApiError, default_message_for_type, status_for_type};
use crate::fault::Fault;
use crate::log::{RequestLog, RequestRecord};
use crate::prompt::RequestTexts;
use crate::scenario::Scenario;
use crate::script::{Completion, MatchInput, Script, render};
use crate::validate::parse_body;

/// The largest request body the real API accepts (32 MB).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The server's state, shared by every route.
pub(crate) struct Shared {
    pub(crate) script: Script,
    cache: Mutex<PromptCache>,
    chat_cache: Mutex<PrefixCache>,
    pub(crate) chat_dialect: ChatDialect,
    log: Mutex<RequestLog>,
    pub(crate) clock: MockClock,
    /// Model requests so far (both routes count): the record's `number`.
    messages_requests: AtomicU64,
    /// Every request so far: the request id.
    all_requests: AtomicU64,
}

impl Shared {
    pub(crate) fn new(
        scenario: Scenario,
        chat_dialect: ChatDialect,
        log: RequestLog,
        clock: MockClock,
    ) -> Self {
        Self {
            script: Script::new(scenario),
            cache: Mutex::new(PromptCache::new()),
            chat_cache: Mutex::new(PrefixCache::default()),
            chat_dialect,
            log: Mutex::new(log),
            clock,
            messages_requests: AtomicU64::new(0),
            all_requests: AtomicU64::new(0),
        }
    }

    /// Appends to the request log.
    pub(crate) fn record(&self, record: RequestRecord) {
        self.log().push(record);
    }

    pub(crate) fn log(&self) -> MutexGuard<'_, RequestLog> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn cache(&self) -> MutexGuard<'_, PromptCache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn chat_cache(&self) -> MutexGuard<'_, PrefixCache> {
        self.chat_cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The record of a new request to `path`; `model` when it asks the model (it gets the next
    /// number), else numbered 0.
    pub(crate) fn new_record(
        &self,
        model: bool,
        path: &str,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> RequestRecord {
        let number = if model {
            self.messages_requests.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            0
        };
        let id = self.all_requests.fetch_add(1, Ordering::Relaxed) + 1;
        RequestRecord {
            number,
            path: path.to_string(),
            request_id: format!("req_mock_{id:06}"),
            headers: header_pairs(headers),
            body: body.clone(),
            status: 200,
            stream: false,
            usage: None,
            cache: None,
            rule: None,
            fault: None,
            error: None,
            normalized: None,
        }
    }
}

fn header_pairs(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// One model route's request as its handler prepares and answers it. [`handle`] runs the
/// steps every model route takes.
pub(crate) trait Exchange: Sized + Send + Sync {
    /// Its wire's route, checks, words and shapes.
    const WIRE: Wire;

    /// Everything decided before the response starts, from the checked `body` (whether it
    /// streams is in `record` already): its prompt read, its reply scripted (written to
    /// `record`); or the error that answers it.
    fn prepare(shared: &Shared, body: Value, record: &mut RequestRecord) -> Result<Self, ApiError>;

    /// What the scenario scripted.
    fn scripted(&self) -> &Scripted;

    /// The response will not start: let go of what preparing it reserved.
    fn abandon(&self, _shared: &Shared) {}

    /// The response starts: what it cached becomes readable.
    fn commit(&self, shared: &Shared);

    /// The streamed response's frames; `number` is the request's.
    fn frames(&self, shared: &Shared, number: u64) -> Vec<Bytes>;

    /// The whole response's body.
    fn body(&self, shared: &Shared, number: u64) -> String;
}

/// A model route's handler: the numbered record, the request checked and prepared (or
/// refused), the scripted latency, then the response (an error status instead, for a
/// non-streaming request whose fault is an in-stream error).
pub(crate) async fn handle<E: Exchange>(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let wire = &E::WIRE;
    let mut record = shared.new_record(true, wire.path, &headers, &body);
    let prepared = (wire.check_headers)(&headers)
        .and_then(|()| read_body(&body))
        .and_then(|body| {
            (wire.check_body)(&body)?;
            record.stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
            E::prepare(&shared, body, &mut record)
        });
    let prepared = match prepared {
        Ok(p) => p,
        Err(err) => return wire.fail(&shared, record, &err),
    };
    let scripted = prepared.scripted();
    if !scripted.latency.is_zero() {
        tokio::time::sleep(scripted.latency).await;
    }
    if let Some(err) = error_instead_of_200(scripted, &mut record) {
        prepared.abandon(&shared);
        return wire.fail(&shared, record, &err);
    }
    prepared.commit(&shared);
    let number = record.number;
    wire.respond(
        &shared,
        record,
        scripted,
        || prepared.frames(&shared, number),
        || prepared.body(&shared, number),
    )
}

/// What one route's wire does its own way.
pub(crate) struct Wire {
    /// The route.
    pub(crate) path: &'static str,
    /// The headers' checks (credentials, and what else the wire asks for).
    pub(crate) check_headers: fn(&HeaderMap) -> Result<(), ApiError>,
    /// The body's fields and structure, in the wire's words.
    pub(crate) check_body: fn(&Value) -> Result<(), ApiError>,
    /// The error for a prompt of `tokens` over a window of `maximum`.
    pub(crate) too_long: fn(tokens: u64, maximum: u64) -> ApiError,
    /// The error for a prompt of `input` tokens leaving no room for `max_tokens` in `window`.
    pub(crate) no_room: fn(input: u64, max_tokens: u64, window: u64) -> ApiError,
    /// A response's headers.
    pub(crate) headers: fn(request_id: &str, content_type: &'static str) -> HeaderMap,
    /// An error response's body.
    pub(crate) error_body: fn(error: &ApiError, request_id: &str) -> String,
    /// The frame that reports an error after a 200.
    pub(crate) error_frame: fn(error: &ApiError) -> Bytes,
    /// A frame cut inside its JSON.
    pub(crate) corrupt_frame: fn() -> Bytes,
    /// What the log calls the stream's frames, and the two a fault adds.
    pub(crate) frame_names: [&'static str; 3],
}

/// `content-type` and `request-id`, as every response of the API carries them.
pub(crate) fn base_headers(request_id: &str, content_type: &'static str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        HeaderName::from_static("content-type"),
        HeaderValue::from_static(content_type),
    );
    if let Ok(v) = HeaderValue::from_str(request_id) {
        h.insert(HeaderName::from_static("request-id"), v);
    }
    h
}

/// The request body as JSON; 413 for one larger than the API accepts.
pub(crate) fn read_body(body: &Bytes) -> Result<Value, ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            413,
            default_message_for_type("request_too_large"),
        ));
    }
    parse_body(body)
}

/// What the scenario scripts for a request, once the faults that answer with an error status
/// instead have answered.
pub(crate) struct Scripted {
    pub(crate) completion: Completion,
    /// A fault that strikes once the response has started.
    pub(crate) fault: Option<Fault>,
    /// Before the response starts.
    pub(crate) latency: Duration,
    /// Between the frames of a stream.
    pub(crate) chunk_delay: Duration,
}

impl Wire {
    /// Answers `err` (recorded as the request's outcome).
    pub(crate) fn fail(
        &self,
        shared: &Shared,
        mut record: RequestRecord,
        err: &ApiError,
    ) -> Response {
        record.status = err.status;
        record.error = Some(err.message.clone());
        // Error responses carry the Messages API's headers on either wire.
        let headers = base_headers(&record.request_id, "application/json");
        let body = (self.error_body)(err, &record.request_id);
        let response = error_response(err, headers, body);
        shared.record(record);
        response
    }

    /// The scenario's reply to a request (`body` in the Messages form the rules read, its
    /// prompt `prompt_tokens` long), the rule that gave it written to `record`; or the error
    /// that answers instead: the scenario's window refusing the prompt alone, then (when the
    /// scenario checks it) with the output asked for, or the error status the rule's fault
    /// scripts.
    pub(crate) fn script(
        &self,
        shared: &Shared,
        body: &Value,
        record: &mut RequestRecord,
        max_tokens: u64,
        prompt_tokens: u64,
    ) -> Result<Scripted, ApiError> {
        let scenario = &shared.script.scenario;
        let window = scenario.context_window;
        if prompt_tokens > window {
            return Err((self.too_long)(prompt_tokens, window));
        }
        if scenario.check_output_room && prompt_tokens + max_tokens > window {
            return Err((self.no_room)(prompt_tokens, max_tokens, window));
        }
        let texts = RequestTexts::from_body(body);
        let input = MatchInput {
            body,
            texts: &texts,
            request: record.number,
            stream: record.stream,
            max_tokens,
        };
        let selection = shared.script.select(&input);
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
                return Err((self.too_long)(
                    tokens.unwrap_or_else(|| prompt_tokens.max(window + 1)),
                    maximum.unwrap_or(window),
                ));
            }
            Some(Fault::SseError { .. } | Fault::Drop { .. } | Fault::Corrupt { .. }) | None => {}
        }
        let completion = render(
            &selection.reply,
            &selection.captures,
            max_tokens,
            &shared.script,
        );
        let latency = selection.reply.latency_ms.unwrap_or(scenario.latency_ms);
        let chunk_delay = selection
            .reply
            .chunk_delay_ms
            .unwrap_or(scenario.chunk_delay_ms);
        Ok(Scripted {
            completion,
            fault: selection.fault,
            latency: Duration::from_millis(latency),
            chunk_delay: Duration::from_millis(chunk_delay),
        })
    }

    /// The response once it starts: `frames` paced by `chunk_delay` when it streams, else the
    /// whole `body`; a fault truncates, corrupts or drops it. Records the request.
    fn respond(
        &self,
        shared: &Shared,
        mut record: RequestRecord,
        scripted: &Scripted,
        frames: impl FnOnce() -> Vec<Bytes>,
        body: impl FnOnce() -> String,
    ) -> Response {
        let [unit, error_frame, corrupt_frame] = self.frame_names;
        let response = if record.stream {
            let mut frames = frames();
            let mut drop_at_end = false;
            match &scripted.fault {
                Some(Fault::SseError {
                    after_events,
                    error_type,
                    message,
                }) => {
                    frames.truncate(*after_events);
                    frames.push((self.error_frame)(&fault_error(error_type, message)));
                    record.fault = Some(format!("{error_frame} after {after_events} {unit}"));
                }
                Some(Fault::Drop { after_events }) => {
                    frames.truncate(*after_events);
                    drop_at_end = true;
                    record.fault = Some(format!("drop after {after_events} {unit}"));
                }
                Some(Fault::Corrupt { after_events }) => {
                    frames.truncate(*after_events);
                    frames.push((self.corrupt_frame)());
                    record.fault = Some(format!("{corrupt_frame} after {after_events} {unit}"));
                }
                Some(Fault::Http { .. } | Fault::PromptTooLong { .. }) | None => {}
            }
            let mut h = (self.headers)(&record.request_id, "text/event-stream; charset=utf-8");
            h.insert(
                HeaderName::from_static("cache-control"),
                HeaderValue::from_static("no-cache"),
            );
            let body = Body::from_stream(paced(frames, scripted.chunk_delay, drop_at_end));
            (StatusCode::OK, h, body).into_response()
        } else {
            let h = (self.headers)(&record.request_id, "application/json");
            let json = body();
            match &scripted.fault {
                Some(Fault::Drop { .. }) => {
                    record.fault = Some("drop before the body".to_string());
                    let body = Body::from_stream(paced(Vec::new(), Duration::ZERO, true));
                    (StatusCode::OK, h, body).into_response()
                }
                Some(Fault::Corrupt { .. }) => {
                    record.fault = Some("corrupt body".to_string());
                    let cut = json.len() / 2;
                    (StatusCode::OK, h, json.as_bytes()[..cut].to_vec()).into_response()
                }
                Some(Fault::SseError { .. } | Fault::Http { .. } | Fault::PromptTooLong { .. })
                | None => (StatusCode::OK, h, json).into_response(),
            }
        };
        shared.record(record);
        response
    }
}

/// A non-streaming request cannot get an error after a 200: the error status a scripted
/// in-stream error gives it instead (written to `record`).
fn error_instead_of_200(scripted: &Scripted, record: &mut RequestRecord) -> Option<ApiError> {
    match &scripted.fault {
        Some(Fault::SseError {
            error_type,
            message,
            ..
        }) if !record.stream => {
            record.fault = Some(format!("error {error_type}"));
            record.usage = None;
            Some(fault_error(error_type, message))
        }
        _ => None,
    }
}

/// The error a fault scripts by its type, with the API's message for it unless it gives one.
fn fault_error(error_type: &str, message: &Option<String>) -> ApiError {
    let mut err = ApiError::new(status_for_type(error_type), "");
    err.error_type = error_type.to_string();
    err.message = message
        .clone()
        .unwrap_or_else(|| default_message_for_type(error_type).to_string());
    err
}

/// An error status with `err`'s `retry-after` and `x-should-retry`, `headers` and `body`.
fn error_response(err: &ApiError, mut headers: HeaderMap, body: String) -> Response {
    if let Some(secs) = err.retry_after {
        headers.insert(
            HeaderName::from_static("retry-after"),
            HeaderValue::from(secs),
        );
    }
    if let Some(retry) = err.should_retry {
        headers.insert(
            HeaderName::from_static("x-should-retry"),
            HeaderValue::from_static(if retry { "true" } else { "false" }),
        );
    }
    let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, headers, body).into_response()
}

/// The frames, `delay` apart, optionally ending with an error that aborts the connection.
fn paced(
    frames: Vec<Bytes>,
    delay: Duration,
    drop_at_end: bool,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let state = (frames.into_iter(), true, drop_at_end);
    futures::stream::unfold(state, move |(mut it, first, drop_at_end)| async move {
        match it.next() {
            Some(frame) => {
                if !first && !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok(frame), (it, false, drop_at_end)))
            }
            None if drop_at_end => {
                // Let hyper flush what was sent (a Pending body does), then abort.
                tokio::time::sleep(Duration::from_millis(10)).await;
                Some((
                    Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "tine-mock: connection dropped by a scripted fault",
                    )),
                    (it, false, false),
                ))
            }
            None => None,
        }
    })
}

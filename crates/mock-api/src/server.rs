//! The HTTP server: `POST /v1/messages` (streaming and not) and `POST /v1/messages/count_tokens`,
//! with validation, cache accounting, the scripted reply and injected faults; `POST
//! /v1/chat/completions` (in `chat::handler`) runs the same scenario over OpenAI's wire; and
//! [`MockServer`], the handle tests use to start it, read its log, move its clock and stop it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::cache::{PromptCache, Usage, WriteTicket};
use crate::chat::{ChatDialect, PrefixCache};
use crate::clock::MockClock;
use crate::error::{ApiError, MockError, default_message_for_type};
use crate::log::{RequestLog, RequestRecord, spawn_jsonl_writer};
use crate::prompt::{RequestTexts, analyze};
use crate::scenario::{Fault, Scenario};
use crate::script::{Completion, MatchInput, Script, render};
use crate::sse;
use crate::validate::{Endpoint, check_body, check_headers, parse_body};

/// The largest request body the real API accepts (32 MB).
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How to start a [`MockServer`].
#[derive(Debug, Clone)]
pub struct MockConfig {
    pub scenario: Scenario,
    /// The clock cache TTLs are measured on; keep a clone (or use `server.clock()`) to advance it.
    pub clock: MockClock,
    /// 0 for any free port.
    pub port: u16,
    /// When set, every request is appended to `DIR/requests.jsonl`.
    pub log_dir: Option<PathBuf>,
    /// How many records the in-memory log keeps (the oldest are dropped first).
    pub log_limit: usize,
    /// Whose habits `/v1/chat/completions` follows.
    pub chat_dialect: ChatDialect,
}

impl Default for MockConfig {
    fn default() -> Self {
        Self::new(Scenario::new())
    }
}

impl MockConfig {
    pub fn new(scenario: Scenario) -> Self {
        Self {
            scenario,
            clock: MockClock::system(),
            port: 0,
            log_dir: None,
            log_limit: 10_000,
            chat_dialect: ChatDialect::default(),
        }
    }

    pub fn chat_dialect(mut self, dialect: ChatDialect) -> Self {
        self.chat_dialect = dialect;
        self
    }

    pub fn clock(mut self, clock: MockClock) -> Self {
        self.clock = clock;
        self
    }

    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    pub fn log_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.log_dir = Some(dir.into());
        self
    }

    pub fn log_limit(mut self, limit: usize) -> Self {
        self.log_limit = limit;
        self
    }
}

pub(crate) struct Shared {
    pub(crate) script: Script,
    cache: Mutex<PromptCache>,
    chat_cache: Mutex<PrefixCache>,
    pub(crate) chat_dialect: ChatDialect,
    log: Mutex<RequestLog>,
    pub(crate) clock: MockClock,
    pub(crate) messages_requests: AtomicU64,
    all_requests: AtomicU64,
}

impl Shared {
    pub(crate) fn record(&self, record: RequestRecord) {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record);
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, PromptCache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn chat_cache(&self) -> std::sync::MutexGuard<'_, PrefixCache> {
        self.chat_cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A running simulator on 127.0.0.1.
pub struct MockServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    writer: Option<JoinHandle<()>>,
    log_path: Option<PathBuf>,
}

impl MockServer {
    /// Binds 127.0.0.1 on the configured port (0: any) and starts serving.
    pub async fn start(config: MockConfig) -> Result<Self, MockError> {
        let (jsonl, writer, log_path) = match &config.log_dir {
            Some(dir) => {
                let (tx, handle, path) = spawn_jsonl_writer(dir).await?;
                (Some(tx), Some(handle), Some(path))
            }
            None => (None, None, None),
        };
        let shared = Arc::new(Shared {
            script: Script::new(config.scenario),
            cache: Mutex::new(PromptCache::new()),
            chat_cache: Mutex::new(PrefixCache::default()),
            chat_dialect: config.chat_dialect,
            log: Mutex::new(RequestLog::new(config.log_limit, jsonl)),
            clock: config.clock,
            messages_requests: AtomicU64::new(0),
            all_requests: AtomicU64::new(0),
        });
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", config.port))
            .await
            .map_err(|source| MockError::Bind {
                port: config.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| MockError::Bind {
            port: config.port,
            source,
        })?;
        let app = router(shared.clone());
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = rx.await;
            });
            if let Err(err) = serve.await {
                tracing::warn!(%err, "tine-mock server stopped with an error");
            }
        });
        tracing::info!(%addr, "tine-mock listening");
        Ok(Self {
            shared,
            addr,
            shutdown: Some(tx),
            task: Some(task),
            writer,
            log_path,
        })
    }

    /// `http://127.0.0.1:PORT`, the base URL for a client (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request seen so far (up to the configured limit), oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .snapshot()
    }

    /// Forgets the in-memory log (the JSONL file is kept).
    pub fn clear_requests(&self) {
        self.shared
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// The clock cache TTLs use: `server.clock().advance(Duration::from_secs(301))`.
    pub fn clock(&self) -> MockClock {
        self.shared.clock.clone()
    }

    /// Empties the prompt cache (and the chat route's prefix cache).
    pub fn clear_cache(&self) {
        self.shared.cache().clear();
        self.shared.chat_cache().clear();
    }

    /// The base URL an OpenAI SDK takes: `http://127.0.0.1:PORT/v1`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// The JSONL log file, when logging.
    pub fn log_path(&self) -> Option<&Path> {
        self.log_path.as_deref()
    }

    /// Stops accepting, lets running responses finish (at most 5 s), and flushes the log.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
        // Close the JSONL channel so the writer drains and ends.
        *self.shared.log.lock().unwrap_or_else(|e| e.into_inner()) = RequestLog::new(0, None);
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/messages", post(messages))
        .route("/v1/messages/count_tokens", post(count_tokens))
        .route(
            crate::chat::handler::PATH,
            post(crate::chat::handler::chat_completions),
        )
        .fallback(not_found)
        .layer(DefaultBodyLimit::disable())
        .with_state(shared)
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

fn error_response(err: &ApiError, request_id: &str) -> Response {
    error_response_with(err, request_id, err.body(request_id).to_string())
}

/// An error status with `err`'s headers (`retry-after`, `x-should-retry`) and `body`.
pub(crate) fn error_response_with(err: &ApiError, request_id: &str, body: String) -> Response {
    let mut h = base_headers(request_id, "application/json");
    if let Some(secs) = err.retry_after {
        h.insert(
            HeaderName::from_static("retry-after"),
            HeaderValue::from(secs),
        );
    }
    if let Some(retry) = err.should_retry {
        h.insert(
            HeaderName::from_static("x-should-retry"),
            HeaderValue::from_static(if retry { "true" } else { "false" }),
        );
    }
    let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, h, body).into_response()
}

pub(crate) fn new_record(
    shared: &Shared,
    number: u64,
    path: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> RequestRecord {
    let id = shared.all_requests.fetch_add(1, Ordering::Relaxed) + 1;
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

fn fail(shared: &Shared, mut record: RequestRecord, err: &ApiError) -> Response {
    record.status = err.status;
    record.error = Some(err.message.clone());
    let response = error_response(err, &record.request_id);
    shared.record(record);
    response
}

async fn not_found(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let record = new_record(&shared, 0, "?", &headers, &body);
    fail(&shared, record, &ApiError::new(404, "Not found"))
}

async fn count_tokens(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut record = new_record(&shared, 0, "/v1/messages/count_tokens", &headers, &body);
    let result = check_headers(&headers)
        .and_then(|()| parse_body(&body))
        .and_then(|json| {
            check_body(&json, Endpoint::CountTokens)?;
            analyze(&json)
        });
    match result {
        Err(err) => fail(&shared, record, &err),
        Ok(prompt) => {
            let h = base_headers(&record.request_id, "application/json");
            let out = json!({"input_tokens": prompt.total_tokens}).to_string();
            record.status = 200;
            shared.record(record);
            (StatusCode::OK, h, out).into_response()
        }
    }
}

/// Everything decided about a `/v1/messages` request before its response starts.
struct Prepared {
    model: String,
    stream: bool,
    completion: Completion,
    usage: Usage,
    ticket: WriteTicket,
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
    check_body(&body, Endpoint::Messages)?;
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    record.stream = stream;
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let max_tokens = body.get("max_tokens").and_then(Value::as_u64).unwrap_or(1);
    let prompt = analyze(&body)?;
    let scenario = &shared.script.scenario;
    let window = scenario.context_window;
    if prompt.total_tokens > window {
        return Err(ApiError::invalid(format!(
            "prompt is too long: {} tokens > {window} maximum",
            prompt.total_tokens
        )));
    }
    if scenario.check_output_room && prompt.total_tokens + max_tokens > window {
        return Err(ApiError::invalid(format!(
            "input length and `max_tokens` exceed context limit: {} + {max_tokens} > {window}, decrease input length or `max_tokens` and try again",
            prompt.total_tokens
        )));
    }
    let texts = RequestTexts::from_body(&body);
    let selection = shared.script.select(&MatchInput {
        body: &body,
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
            return Err(ApiError::invalid(format!(
                "prompt is too long: {} tokens > {} maximum",
                tokens.unwrap_or_else(|| prompt.total_tokens.max(window + 1)),
                maximum.unwrap_or(window)
            )));
        }
        Some(Fault::SseError { .. } | Fault::Drop { .. } | Fault::Corrupt { .. }) | None => {}
    }
    let min = scenario.min_cacheable_for(&model);
    let now = shared.clock.now();
    let (report, ticket) = shared.cache().account(&prompt, min, now);
    let mut completion = render(
        &selection.reply,
        &selection.captures,
        max_tokens,
        &shared.script,
    );
    crate::script::check_server_tools(&mut completion, &body);
    let mut usage = report.usage;
    usage.output_tokens = completion.output_tokens;
    record.usage = Some(usage);
    record.cache = Some(report);
    let latency = selection.reply.latency_ms.unwrap_or(scenario.latency_ms);
    let chunk_delay = selection
        .reply
        .chunk_delay_ms
        .unwrap_or(scenario.chunk_delay_ms);
    Ok(Prepared {
        model,
        stream,
        completion,
        usage,
        ticket,
        fault: selection.fault,
        latency: Duration::from_millis(latency),
        chunk_delay: Duration::from_millis(chunk_delay),
    })
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

async fn messages(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let number = shared.messages_requests.fetch_add(1, Ordering::Relaxed) + 1;
    let mut record = new_record(&shared, number, "/v1/messages", &headers, &body);
    let prepared = match prepare(&shared, &headers, &body, &mut record) {
        Ok(p) => p,
        Err(err) => return fail(&shared, record, &err),
    };
    if !prepared.latency.is_zero() {
        tokio::time::sleep(prepared.latency).await;
    }
    let request_id = record.request_id.clone();
    let message_id = format!("msg_mock_{number:06}");

    // A non-streaming request cannot get an error after a 200: it gets the status instead.
    if !prepared.stream
        && let Some(Fault::SseError {
            error_type,
            message,
            ..
        }) = &prepared.fault
    {
        shared.cache().abandon(&prepared.ticket);
        let mut err = ApiError::new(status_for_type(error_type), "");
        err.error_type = error_type.clone();
        err.message = message
            .clone()
            .unwrap_or_else(|| default_message_for_type(error_type).to_string());
        record.fault = Some(format!("error {error_type}"));
        record.usage = None;
        return fail(&shared, record, &err);
    }

    // The response starts now: its cache writes become readable.
    shared.cache().commit(&prepared.ticket, shared.clock.now());

    let response = if prepared.stream {
        let mut events = sse::events(
            &message_id,
            &prepared.model,
            &prepared.completion,
            &prepared.usage,
        );
        let mut drop_at_end = false;
        match &prepared.fault {
            Some(Fault::SseError {
                after_events,
                error_type,
                message,
            }) => {
                events.truncate(*after_events);
                let message = message
                    .clone()
                    .unwrap_or_else(|| default_message_for_type(error_type).to_string());
                events.push(sse::error_event(error_type, &message));
                record.fault = Some(format!("sse error after {after_events} events"));
            }
            Some(Fault::Drop { after_events }) => {
                events.truncate(*after_events);
                drop_at_end = true;
                record.fault = Some(format!("drop after {after_events} events"));
            }
            Some(Fault::Corrupt { after_events }) => {
                events.truncate(*after_events);
                events.push(sse::corrupt_frame());
                record.fault = Some(format!("corrupt frame after {after_events} events"));
            }
            Some(Fault::Http { .. } | Fault::PromptTooLong { .. }) | None => {}
        }
        let mut h = base_headers(&request_id, "text/event-stream; charset=utf-8");
        h.insert(
            HeaderName::from_static("cache-control"),
            HeaderValue::from_static("no-cache"),
        );
        let body = Body::from_stream(event_stream(events, prepared.chunk_delay, drop_at_end));
        (StatusCode::OK, h, body).into_response()
    } else {
        let h = base_headers(&request_id, "application/json");
        let json = sse::message_json(
            &message_id,
            &prepared.model,
            &prepared.completion,
            &prepared.usage,
        )
        .to_string();
        if let Some(Fault::Drop { .. }) = &prepared.fault {
            record.fault = Some("drop before the body".to_string());
            let body = Body::from_stream(event_stream(Vec::new(), Duration::ZERO, true));
            (StatusCode::OK, h, body).into_response()
        } else if let Some(Fault::Corrupt { .. }) = &prepared.fault {
            record.fault = Some("corrupt body".to_string());
            let cut = json.len() / 2;
            (StatusCode::OK, h, json.as_bytes()[..cut].to_vec()).into_response()
        } else {
            (StatusCode::OK, h, json).into_response()
        }
    };
    shared.record(record);
    response
}

/// The events, `delay` apart, optionally ending with an error that aborts the connection.
pub(crate) fn event_stream(
    events: Vec<Bytes>,
    delay: Duration,
    drop_at_end: bool,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    let state = (events.into_iter(), true, drop_at_end);
    futures::stream::unfold(state, move |(mut it, first, drop_at_end)| async move {
        match it.next() {
            Some(ev) => {
                if !first && !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                Some((Ok(ev), (it, false, drop_at_end)))
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

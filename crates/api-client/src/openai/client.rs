//! `OpenAiClient`: a [`ModelClient`] for OpenAI-compatible chat completions (OpenAI, Ollama,
//! vLLM, llama.cpp's server, LM Studio, hosted endpoints).
//!
//! Same contract as [`crate::HttpClient`]: the request is mapped and serialized once and those
//! bytes go out on every attempt; the stream yields the Anthropic event sequence (see
//! [`super::stream`]) and [`ClientEvent::Retry`] between attempts, under the same
//! `discard_partial` contract; it ends after `message_stop` or with an `Err` as its last item.
//! Errors are wrapped in [`ApiError::OpenAi`] so their advice names this provider's variables.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::client::{header_str, header_value, is_loopback, is_refused, map_transport_for};
use crate::error::{ApiError, parse_retry_after};
use crate::events::StreamEvent;
use crate::model_client::{ClientEvent, EventStream, ModelClient};
use crate::openai::config::OpenAiConfig;
use crate::openai::error::from_response;
use crate::openai::request::chat_request_bytes;
use crate::openai::stream::ChunkDecoder;
use crate::types::MessagesRequest;

/// What waiting for a transport step is called in a timeout message.
const ENDPOINT: &str = "the OpenAI-compatible endpoint";

/// OpenAI-compatible chat completions over HTTP. Cheap to clone (one connection pool).
#[derive(Clone, Debug)]
pub struct OpenAiClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    config: OpenAiConfig,
    headers: HeaderMap,
    url: String,
    local: bool,
}

/// A failure as this provider words it.
fn openai(error: ApiError) -> ApiError {
    match error {
        ApiError::OpenAi(_) => error,
        other => ApiError::OpenAi(Box::new(other)),
    }
}

impl OpenAiClient {
    /// A client for `config`. Fails only on unusable configuration (a key that is not a valid
    /// header value, a TLS backend that cannot start).
    pub fn new(config: OpenAiConfig) -> Result<Self, ApiError> {
        if config.api_key.trim().is_empty() {
            return Err(ApiError::MissingOpenAiKey);
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            reqwest::header::AUTHORIZATION,
            header_value(
                "authorization",
                &format!("Bearer {}", config.api_key.trim()),
                true,
            )?,
        );
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .user_agent(config.user_agent.clone())
            .build()
            .map_err(|e| ApiError::Config {
                message: format!("could not start the HTTP client: {e}"),
            })?;
        let local = is_loopback(&config.base_url);
        let url = config.chat_completions_url();
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                config,
                headers,
                url,
                local,
            }),
        })
    }

    /// [`OpenAiConfig::from_env`] then [`OpenAiClient::new`].
    pub fn from_env() -> Result<Self, ApiError> {
        Self::new(OpenAiConfig::from_env()?)
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &OpenAiConfig {
        &self.inner.config
    }

    /// The bytes [`ModelClient::stream`] posts for `request`.
    pub fn request_bytes(&self, request: &MessagesRequest) -> Vec<u8> {
        chat_request_bytes(request, self.inner.config.max_tokens_field)
    }
}

impl Inner {
    /// POST the body; a non-success status becomes the typed error.
    async fn post(&self, body: Bytes) -> Result<(reqwest::Response, Option<String>), ApiError> {
        let request = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .body(body);
        let timeout = self.config.request_timeout;
        let response = tokio::time::timeout(timeout, request.send())
            .await
            .map_err(|_| ApiError::Timeout {
                what: format!("response headers from {ENDPOINT}"),
                after: timeout,
            })?
            .map_err(|e| {
                if self.local && e.is_connect() && is_refused(&e) {
                    openai(ApiError::NothingListening {
                        url: self.config.base_url.clone(),
                    })
                } else {
                    openai(map_transport_for(&e, timeout, ENDPOINT))
                }
            })?;
        let headers = response.headers();
        let request_id = header_str(headers, "x-request-id")
            .or_else(|| header_str(headers, "request-id"))
            .map(str::to_owned);
        let status = response.status();
        if status.is_success() {
            return Ok((response, request_id));
        }
        let retry_after = parse_retry_after(
            header_str(headers, "retry-after-ms"),
            header_str(headers, "retry-after"),
        );
        let should_retry = match header_str(headers, "x-should-retry") {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        };
        let body = tokio::time::timeout(timeout, response.bytes())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let error = from_response(
            status.as_u16(),
            &body,
            request_id,
            retry_after,
            should_retry,
        );
        tracing::debug!(status = status.as_u16(), request_id = ?error.request_id(), "chat completions error response");
        Err(error)
    }
}

impl ModelClient for OpenAiClient {
    fn stream(&self, request: MessagesRequest) -> EventStream {
        let state = StreamState {
            inner: Arc::clone(&self.inner),
            body: Bytes::from(self.request_bytes(&request)),
            model: request.model,
            attempt: 0,
            phase: Phase::Connect,
        };
        Box::pin(futures::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        }))
    }

    /// Chat completions has no token-counting endpoint.
    fn count_tokens(&self, _request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>> {
        Box::pin(async {
            Err(ApiError::Unsupported {
                what: "counting tokens (count_tokens)".to_owned(),
            })
        })
    }

    fn context_window(&self, model: &str) -> u64 {
        self.inner
            .config
            .context_window
            .unwrap_or_else(|| crate::usage::context_window(model))
    }
}

struct Attempt {
    chunks: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: ChunkDecoder,
    pending: VecDeque<StreamEvent>,
    scratch: Vec<StreamEvent>,
    /// A decode error found after some good events: yielded once those are out.
    deferred: Option<ApiError>,
    /// The body ended (complete or not): nothing more to read.
    ended: bool,
    yielded: bool,
    request_id: Option<String>,
}

enum Phase {
    Connect,
    Wait(Duration),
    Streaming(Box<Attempt>),
    Done,
}

struct StreamState {
    inner: Arc<Inner>,
    /// Serialized once: every attempt sends identical bytes.
    body: Bytes,
    model: String,
    attempt: u32,
    phase: Phase,
}

impl StreamState {
    async fn next(&mut self) -> Option<Result<ClientEvent, ApiError>> {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Done => return None,
                Phase::Wait(delay) => {
                    tokio::time::sleep(delay).await;
                    self.phase = Phase::Connect;
                }
                Phase::Connect => {
                    self.attempt += 1;
                    match self.inner.post(self.body.clone()).await {
                        Ok((response, request_id)) => {
                            self.phase = Phase::Streaming(Box::new(Attempt {
                                chunks: response.bytes_stream().boxed(),
                                decoder: ChunkDecoder::new(self.model.clone()),
                                pending: VecDeque::new(),
                                scratch: Vec::new(),
                                deferred: None,
                                ended: false,
                                yielded: false,
                                request_id,
                            }));
                        }
                        Err(error) => return Some(self.fail(error, false)),
                    }
                }
                Phase::Streaming(mut attempt) => {
                    if let Some(event) = attempt.pending.pop_front() {
                        match event {
                            StreamEvent::Error { error } => {
                                let error = openai(ApiError::from_stream_error(
                                    &error,
                                    attempt.request_id.clone(),
                                ));
                                return Some(self.fail(error, attempt.yielded));
                            }
                            StreamEvent::MessageStop => {
                                return Some(Ok(ClientEvent::Stream(StreamEvent::MessageStop)));
                            }
                            event @ (StreamEvent::MessageStart { .. }
                            | StreamEvent::ContentBlockStart { .. }
                            | StreamEvent::ContentBlockDelta { .. }
                            | StreamEvent::ContentBlockStop { .. }
                            | StreamEvent::MessageDelta { .. }
                            | StreamEvent::Ping) => {
                                attempt.yielded = true;
                                self.phase = Phase::Streaming(attempt);
                                return Some(Ok(ClientEvent::Stream(event)));
                            }
                        }
                    }
                    if let Some(error) = attempt.deferred.take() {
                        let error = openai(ApiError::CorruptStream {
                            message: error.to_string(),
                            request_id: attempt.request_id.clone(),
                        });
                        return Some(self.fail(error, attempt.yielded));
                    }
                    if attempt.ended {
                        let error = openai(ApiError::IncompleteStream {
                            request_id: attempt.request_id.clone(),
                        });
                        return Some(self.fail(error, attempt.yielded));
                    }
                    let idle = self.inner.config.stream_idle_timeout;
                    match tokio::time::timeout(idle, attempt.chunks.next()).await {
                        Err(_) => {
                            let error = ApiError::Timeout {
                                what: format!("stream data from {ENDPOINT}"),
                                after: idle,
                            };
                            return Some(self.fail(error, attempt.yielded));
                        }
                        Ok(Some(Ok(chunk))) => {
                            let Attempt {
                                decoder,
                                scratch,
                                pending,
                                deferred,
                                ..
                            } = &mut *attempt;
                            if let Err(error) = decoder.feed(&chunk, scratch) {
                                *deferred = Some(error);
                            }
                            pending.extend(scratch.drain(..));
                            self.phase = Phase::Streaming(attempt);
                        }
                        Ok(Some(Err(error))) => {
                            let error = openai(map_transport_for(&error, idle, ENDPOINT));
                            return Some(self.fail(error, attempt.yielded));
                        }
                        Ok(None) => {
                            let Attempt {
                                decoder,
                                scratch,
                                pending,
                                ended,
                                ..
                            } = &mut *attempt;
                            // Complete: the end events are queued, and message_stop ends us.
                            // Not complete: `ended` makes the next round fail the attempt.
                            decoder.finish(scratch);
                            pending.extend(scratch.drain(..));
                            *ended = true;
                            self.phase = Phase::Streaming(attempt);
                        }
                    }
                }
            }
        }
    }

    fn fail(&mut self, error: ApiError, yielded: bool) -> Result<ClientEvent, ApiError> {
        match self
            .inner
            .config
            .retry
            .notice(&error, self.attempt, yielded)
        {
            Some(notice) => {
                tracing::warn!(%notice, "chat completions attempt failed");
                self.phase = Phase::Wait(notice.delay);
                Ok(ClientEvent::Retry(notice))
            }
            None => {
                self.phase = Phase::Done;
                Err(error)
            }
        }
    }
}

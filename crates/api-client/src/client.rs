//! `HttpClient`: the real [`ModelClient`], over reqwest.
//!
//! A streamed call serializes the request once (with `stream: true`) and sends those same bytes
//! on every attempt. The returned stream is a small state machine: connect → stream events →
//! on a retryable failure yield a [`ClientEvent::Retry`], wait, reconnect. It ends after
//! `message_stop`, or with an `Err` as its last item.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;

use crate::config::{ANTHROPIC_VERSION, ClientConfig};
use crate::error::{ApiError, parse_retry_after};
use crate::events::StreamEvent;
use crate::model_client::{ClientEvent, EventStream, ModelClient};
use crate::sse::EventDecoder;
use crate::types::MessagesRequest;

/// The Messages API over HTTP. Cheap to clone (shares one connection pool).
#[derive(Clone, Debug)]
pub struct HttpClient {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    http: reqwest::Client,
    config: ClientConfig,
    headers: HeaderMap,
    /// The base URL is a loopback address: a refused connection means nothing runs there.
    local: bool,
}

pub(crate) fn header_value(
    name: &str,
    value: &str,
    sensitive: bool,
) -> Result<HeaderValue, ApiError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| ApiError::Config {
        message: format!(
            "the value for the `{name}` header contains characters not allowed in HTTP headers"
        ),
    })?;
    value.set_sensitive(sensitive);
    Ok(value)
}

impl HttpClient {
    /// A client for `config`. Fails only on unusable configuration (credentials that are not
    /// valid header values, a TLS backend that cannot start).
    pub fn new(config: ClientConfig) -> Result<Self, ApiError> {
        if config.credentials.api_key.is_none() && config.credentials.auth_token.is_none() {
            return Err(ApiError::MissingCredentials);
        }
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if let Some(key) = &config.credentials.api_key {
            headers.insert(
                HeaderName::from_static("x-api-key"),
                header_value("x-api-key", key, true)?,
            );
        }
        if let Some(token) = &config.credentials.auth_token {
            headers.insert(
                reqwest::header::AUTHORIZATION,
                header_value("authorization", &format!("Bearer {token}"), true)?,
            );
        }
        if !config.betas.is_empty() {
            headers.insert(
                HeaderName::from_static("anthropic-beta"),
                header_value("anthropic-beta", &config.betas.join(","), false)?,
            );
        }
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .user_agent(config.user_agent.clone())
            .build()
            .map_err(|e| ApiError::Config {
                message: format!("could not start the HTTP client: {e}"),
            })?;
        let local = is_loopback(&config.base_url);
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                config,
                headers,
                local,
            }),
        })
    }

    /// [`ClientConfig::from_env`] then [`HttpClient::new`].
    pub fn from_env() -> Result<Self, ApiError> {
        Self::new(ClientConfig::from_env()?)
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }
}

/// Whether `base_url` names this machine (localhost, 127.0.0.0/8, ::1, or the unspecified
/// address, which connects locally).
pub(crate) fn is_loopback(base_url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
    else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => host.eq_ignore_ascii_case("localhost") || host.ends_with(".localhost"),
    }
}

/// Whether the connection was refused (an `io::Error` somewhere in the source chain).
pub(crate) fn is_refused(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::ConnectionRefused
        {
            return true;
        }
        source = cause.source();
    }
    false
}

fn map_transport(error: &reqwest::Error, after: Duration) -> ApiError {
    map_transport_for(error, after, "the Anthropic API")
}

/// A transport error as [`ApiError::Timeout`] (waiting for `what`) or [`ApiError::Connection`].
pub(crate) fn map_transport_for(error: &reqwest::Error, after: Duration, what: &str) -> ApiError {
    if error.is_timeout() {
        ApiError::Timeout {
            what: what.to_owned(),
            after,
        }
    } else {
        // reqwest's Display names the URL, never headers: no secret leaks here.
        let mut message = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        ApiError::Connection { message }
    }
}

pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

impl Inner {
    /// POST `body` to `path`; a non-success status becomes the typed error.
    async fn post(
        &self,
        path: &str,
        body: Bytes,
        sse: bool,
        one_million: bool,
    ) -> Result<(reqwest::Response, Option<String>), ApiError> {
        let mut headers = self.headers.clone();
        if one_million {
            // A `[1m]` model: its beta joins the configured ones (never twice).
            let mut betas = self.config.betas.clone();
            if !betas.iter().any(|b| b == crate::usage::CONTEXT_1M_BETA) {
                betas.push(crate::usage::CONTEXT_1M_BETA.to_owned());
            }
            headers.insert(
                HeaderName::from_static("anthropic-beta"),
                header_value("anthropic-beta", &betas.join(","), false)?,
            );
        }
        let mut request = self
            .http
            .post(self.config.url(path))
            .headers(headers)
            .body(body);
        if sse {
            request = request.header(reqwest::header::ACCEPT, "text/event-stream");
        }
        let timeout = self.config.request_timeout;
        let response = tokio::time::timeout(timeout, request.send())
            .await
            .map_err(|_| ApiError::Timeout {
                what: "response headers".to_owned(),
                after: timeout,
            })?
            .map_err(|e| {
                if self.local && e.is_connect() && is_refused(&e) {
                    ApiError::NothingListening {
                        url: self.config.base_url.clone(),
                    }
                } else {
                    map_transport(&e, timeout)
                }
            })?;
        let headers = response.headers();
        let request_id = header_str(headers, "request-id")
            .or_else(|| header_str(headers, "x-request-id"))
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
        // The error body is small; if it cannot be read, the status alone still types the error.
        let body = tokio::time::timeout(timeout, response.bytes())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let error = ApiError::from_response(
            status.as_u16(),
            &body,
            request_id,
            retry_after,
            should_retry,
        );
        tracing::debug!(status = status.as_u16(), request_id = ?error.request_id(), "API error response");
        Err(error)
    }

    async fn count_tokens_once(&self, body: Bytes, one_million: bool) -> Result<u64, ApiError> {
        #[derive(Deserialize)]
        struct CountTokensResponse {
            input_tokens: u64,
        }
        let (response, _) = self
            .post("/v1/messages/count_tokens", body, false, one_million)
            .await?;
        let timeout = self.config.request_timeout;
        let bytes = tokio::time::timeout(timeout, response.bytes())
            .await
            .map_err(|_| ApiError::Timeout {
                what: "the count_tokens response".to_owned(),
                after: timeout,
            })?
            .map_err(|e| map_transport(&e, timeout))?;
        let parsed: CountTokensResponse =
            serde_json::from_slice(&bytes).map_err(|e| ApiError::Decode {
                what: "count_tokens response".to_owned(),
                message: e.to_string(),
            })?;
        Ok(parsed.input_tokens)
    }
}

impl ModelClient for HttpClient {
    fn stream(&self, request: MessagesRequest) -> EventStream {
        let (request, one_million) = wire_model(request);
        let state = StreamState {
            inner: Arc::clone(&self.inner),
            body: Bytes::from(request.streaming().to_json_bytes()),
            attempt: 0,
            phase: Phase::Connect,
            one_million,
        };
        Box::pin(futures::stream::unfold(state, |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        }))
    }

    fn context_window(&self, model: &str) -> u64 {
        self.inner
            .config
            .context_window
            .unwrap_or_else(|| crate::usage::context_window(model))
    }

    fn count_tokens(&self, request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>> {
        let inner = Arc::clone(&self.inner);
        let (request, one_million) = wire_model(request);
        let body = Bytes::from(request.count_tokens_body());
        Box::pin(async move {
            let policy = inner.config.retry;
            let mut attempt = 1;
            loop {
                match inner.count_tokens_once(body.clone(), one_million).await {
                    Ok(tokens) => return Ok(tokens),
                    Err(error) => match policy.notice(&error, attempt, false) {
                        Some(notice) => {
                            tracing::warn!(%notice, "count_tokens failed");
                            tokio::time::sleep(notice.delay).await;
                            attempt += 1;
                        }
                        None => return Err(error),
                    },
                }
            }
        })
    }
}

/// `request` as the API takes it: a `[1m]` model is sent without the suffix (with the
/// 1M beta header, see [`Inner::post`]); whether it had one.
fn wire_model(mut request: MessagesRequest) -> (MessagesRequest, bool) {
    let (id, one_million) = crate::usage::split_one_million(&request.model);
    if one_million {
        request.model = id.to_owned();
    }
    (request, one_million)
}

/// One attempt's response being read.
struct Attempt {
    chunks: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: EventDecoder,
    pending: VecDeque<StreamEvent>,
    scratch: Vec<StreamEvent>,
    /// A decode error found after some good events: yielded once those are out.
    deferred: Option<ApiError>,
    /// Whether this attempt already yielded events (a retry must then discard them).
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
    attempt: u32,
    phase: Phase,
    /// The model was `…[1m]`: the beta header goes with every attempt, and the reply's model
    /// gets its suffix back (the rest of tine knows the model by that name).
    one_million: bool,
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
                    match self
                        .inner
                        .post("/v1/messages", self.body.clone(), true, self.one_million)
                        .await
                    {
                        Ok((response, request_id)) => {
                            self.phase = Phase::Streaming(Box::new(Attempt {
                                chunks: response.bytes_stream().boxed(),
                                decoder: EventDecoder::new(),
                                pending: VecDeque::new(),
                                scratch: Vec::new(),
                                deferred: None,
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
                                let error =
                                    ApiError::from_stream_error(&error, attempt.request_id.clone());
                                return Some(self.fail(error, attempt.yielded));
                            }
                            StreamEvent::MessageStop => {
                                // Phase stays Done: anything after message_stop is ignored.
                                return Some(Ok(ClientEvent::Stream(StreamEvent::MessageStop)));
                            }
                            StreamEvent::MessageStart { mut message } => {
                                if self.one_million
                                    && !crate::usage::split_one_million(&message.model).1
                                {
                                    message.model.push_str("[1m]");
                                }
                                attempt.yielded = true;
                                self.phase = Phase::Streaming(attempt);
                                return Some(Ok(ClientEvent::Stream(StreamEvent::MessageStart {
                                    message,
                                })));
                            }
                            event @ (StreamEvent::ContentBlockStart { .. }
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
                        // A corrupt frame leaves the reply incomplete, like a dropped stream.
                        let error = ApiError::CorruptStream {
                            message: error.to_string(),
                            request_id: attempt.request_id.clone(),
                        };
                        return Some(self.fail(error, attempt.yielded));
                    }
                    let idle = self.inner.config.stream_idle_timeout;
                    match tokio::time::timeout(idle, attempt.chunks.next()).await {
                        Err(_) => {
                            let error = ApiError::Timeout {
                                what: "stream data".to_owned(),
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
                            let error = map_transport(&error, idle);
                            return Some(self.fail(error, attempt.yielded));
                        }
                        Ok(None) => {
                            attempt.decoder.finish();
                            let error = ApiError::IncompleteStream {
                                request_id: attempt.request_id.clone(),
                            };
                            return Some(self.fail(error, attempt.yielded));
                        }
                    }
                }
            }
        }
    }

    /// Attempt `self.attempt` failed with `error`: a retry notice (and a wait) or the end.
    fn fail(&mut self, error: ApiError, yielded: bool) -> Result<ClientEvent, ApiError> {
        match self
            .inner
            .config
            .retry
            .notice(&error, self.attempt, yielded)
        {
            Some(notice) => {
                tracing::warn!(%notice, "Messages API attempt failed");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_base_urls_are_local() {
        for url in [
            "http://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://localhost:9",
            "http://LOCALHOST",
            "http://api.localhost",
            "http://[::1]:8080",
            "http://0.0.0.0:80",
        ] {
            assert!(is_loopback(url), "{url}");
        }
        for url in [
            "https://api.anthropic.com",
            "http://10.0.0.5:8080",
            "http://[2001:db8::1]",
            "http://localhost.example.com",
            "not a url",
        ] {
            assert!(!is_loopback(url), "{url}");
        }
    }
}

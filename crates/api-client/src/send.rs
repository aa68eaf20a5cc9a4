//! The send/retry state machine both HTTP clients run, generic over the wire [`Dialect`].
//!
//! A streamed call's body is serialized once and those bytes go out on every attempt. The
//! stream connects, yields the attempt's events as they are decoded, and when the attempt
//! fails (an error status, a refused or broken connection, a stream that goes silent, ends
//! before it is complete, holds a corrupt frame or an `error` event) asks the [`RetryPolicy`]:
//! a [`ClientEvent::Retry`] (with `discard_partial` set when the failed attempt had yielded
//! events), a wait, a new connection; or the error as the stream's last item. It ends after
//! `message_stop`. A loopback base URL that refuses the connection is
//! [`ApiError::NothingListening`], which the policy retries only briefly.
//!
//! What differs between the wires is the dialect's: the HTTP request, the decoder that turns
//! the body into our [`StreamEvent`]s, the mapping of error bodies, and how errors and log
//! lines name this endpoint.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::error::{ApiError, parse_retry_after};
use crate::events::StreamEvent;
use crate::model_client::{ClientEvent, EventStream};
use crate::retry::RetryPolicy;

/// What the state machine reads from a client's configuration.
pub(crate) struct Settings<'a> {
    /// The endpoint's base URL (named when nothing listens there).
    pub(crate) base_url: &'a str,
    /// Until response headers arrive (and, for a body read whole, until it has).
    pub(crate) request_timeout: Duration,
    /// Longest silence tolerated between stream chunks.
    pub(crate) stream_idle_timeout: Duration,
    /// When and how failed attempts are retried.
    pub(crate) retry: RetryPolicy,
}

/// How errors and log lines name a wire's endpoint and steps.
pub(crate) struct Names {
    /// The other end, in a connection error's timeout ("the Anthropic API").
    pub(crate) peer: &'static str,
    /// What waiting for response headers is called in a timeout.
    pub(crate) headers: &'static str,
    /// What waiting for stream data is called in a timeout.
    pub(crate) stream_data: &'static str,
    /// The log line of a failed attempt.
    pub(crate) attempt_failed: &'static str,
    /// The log line of an error status.
    pub(crate) error_response: &'static str,
    /// The headers that may carry the server's request id, first match wins.
    pub(crate) request_id_headers: [&'static str; 2],
}

/// Turns one response body into stream events.
pub(crate) trait BodyDecoder: Send + 'static {
    /// Decode `chunk`, appending events to `out`. On a decode error the events decoded before
    /// it are still in `out`.
    fn decode(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ApiError>;

    /// The body ended: append the events that complete the reply, if it is complete (an
    /// incomplete one appends none, and the attempt fails as an incomplete stream).
    fn end(&mut self, out: &mut Vec<StreamEvent>);
}

/// What one wire (Anthropic's Messages API, OpenAI-compatible chat completions) does its own way.
pub(crate) trait Dialect: Send + Sync + 'static {
    /// What one call's requests and decoder need besides the body.
    type Call: Send + Sync + 'static;
    /// The body decoder of one attempt.
    type Decoder: BodyDecoder;

    /// How errors and log lines name this wire.
    const NAMES: Names;

    /// The configuration the state machine reads.
    fn settings(&self) -> Settings<'_>;

    /// The HTTP request carrying `body` for `call`, headers and all.
    fn request(
        &self,
        http: &reqwest::Client,
        call: &Self::Call,
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, ApiError>;

    /// A decoder for one attempt of `call`.
    fn decoder(&self, call: &Self::Call) -> Self::Decoder;

    /// The error for a non-success response.
    fn error_response(&self, status: u16, body: &[u8], hints: StatusHints) -> ApiError;

    /// `error` as this wire words it (its advice names its own variables).
    fn worded(&self, error: ApiError) -> ApiError {
        error
    }
}

/// What an error response's headers said besides the status.
pub(crate) struct StatusHints {
    /// The server's request id.
    pub(crate) request_id: Option<String>,
    /// `retry-after-ms` / `retry-after`.
    pub(crate) retry_after: Option<Duration>,
    /// `x-should-retry`.
    pub(crate) should_retry: Option<bool>,
}

/// One HTTP client of a dialect: the connection pool, and whether its base URL is this machine.
#[derive(Debug)]
pub(crate) struct Sender<D> {
    http: reqwest::Client,
    /// The base URL is a loopback address: a refused connection means nothing runs there.
    local: bool,
    /// The wire and its configuration.
    pub(crate) dialect: D,
}

impl<D: Dialect> Sender<D> {
    /// A sender for `dialect`, connecting within `connect_timeout` as `user_agent`.
    pub(crate) fn new(
        dialect: D,
        connect_timeout: Duration,
        user_agent: &str,
    ) -> Result<Self, ApiError> {
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .user_agent(user_agent)
            .build()
            .map_err(|e| ApiError::Config {
                message: format!("could not start the HTTP client: {e}"),
            })?;
        let local = is_loopback(dialect.settings().base_url);
        Ok(Self {
            http,
            local,
            dialect,
        })
    }

    /// The connection pool (the chat wire's tokenizer calls share it).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Send `body` for `call` once; a non-success status becomes the typed error. The
    /// response and the server's request id.
    pub(crate) async fn post(
        &self,
        call: &D::Call,
        body: Bytes,
    ) -> Result<(reqwest::Response, Option<String>), ApiError> {
        let names = &D::NAMES;
        let settings = self.dialect.settings();
        let request = self.dialect.request(&self.http, call, body)?;
        let timeout = settings.request_timeout;
        let response = tokio::time::timeout(timeout, request.send())
            .await
            .map_err(|_| ApiError::Timeout {
                what: names.headers.to_owned(),
                after: timeout,
            })?
            .map_err(|e| {
                self.dialect
                    .worded(if self.local && e.is_connect() && is_refused(&e) {
                        ApiError::NothingListening {
                            url: settings.base_url.to_owned(),
                        }
                    } else {
                        map_transport(&e, timeout, names.peer)
                    })
            })?;
        let headers = response.headers();
        let [first, second] = names.request_id_headers;
        let request_id = header_str(headers, first)
            .or_else(|| header_str(headers, second))
            .map(str::to_owned);
        let status = response.status();
        if status.is_success() {
            return Ok((response, request_id));
        }
        let hints = StatusHints {
            request_id,
            retry_after: parse_retry_after(
                header_str(headers, "retry-after-ms"),
                header_str(headers, "retry-after"),
            ),
            should_retry: match header_str(headers, "x-should-retry") {
                Some("true") => Some(true),
                Some("false") => Some(false),
                _ => None,
            },
        };
        // The error body is small; if it cannot be read, the status alone still types the error.
        let body = tokio::time::timeout(timeout, response.bytes())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let error = self.dialect.error_response(status.as_u16(), &body, hints);
        tracing::debug!(status = status.as_u16(), request_id = ?error.request_id(), "{}", names.error_response);
        Err(error)
    }
}

/// `call`'s stream of events over `sender`, `body` sent as it is on every attempt.
pub(crate) fn event_stream<D: Dialect>(
    sender: Arc<Sender<D>>,
    call: D::Call,
    body: Bytes,
) -> EventStream {
    let state = StreamState {
        sender,
        call,
        body,
        attempt: 0,
        phase: Phase::Connect,
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    }))
}

/// One attempt's response being read.
struct Attempt<Decoder> {
    chunks: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: Decoder,
    pending: VecDeque<StreamEvent>,
    scratch: Vec<StreamEvent>,
    /// A decode error found after some good events: yielded once those are out.
    deferred: Option<ApiError>,
    /// The body ended (complete or not): nothing more to read.
    ended: bool,
    /// Whether this attempt already yielded events (a retry must then discard them).
    yielded: bool,
    request_id: Option<String>,
}

enum Phase<Decoder> {
    Connect,
    Wait(Duration),
    Streaming(Box<Attempt<Decoder>>),
    Done,
}

struct StreamState<D: Dialect> {
    sender: Arc<Sender<D>>,
    call: D::Call,
    /// Serialized once: every attempt sends identical bytes.
    body: Bytes,
    attempt: u32,
    phase: Phase<D::Decoder>,
}

impl<D: Dialect> StreamState<D> {
    async fn next(&mut self) -> Option<Result<ClientEvent, ApiError>> {
        let sender = Arc::clone(&self.sender);
        let dialect = &sender.dialect;
        loop {
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Done => return None,
                Phase::Wait(delay) => {
                    tokio::time::sleep(delay).await;
                    self.phase = Phase::Connect;
                }
                Phase::Connect => {
                    self.attempt += 1;
                    match sender.post(&self.call, self.body.clone()).await {
                        Ok((response, request_id)) => {
                            self.phase = Phase::Streaming(Box::new(Attempt {
                                chunks: response.bytes_stream().boxed(),
                                decoder: dialect.decoder(&self.call),
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
                                let error = dialect.worded(ApiError::from_stream_error(
                                    &error,
                                    attempt.request_id.clone(),
                                ));
                                return Some(self.fail(error, attempt.yielded));
                            }
                            StreamEvent::MessageStop => {
                                // Phase stays Done: anything after message_stop is ignored.
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
                        // A corrupt frame leaves the reply incomplete, like a dropped stream.
                        let error = dialect.worded(ApiError::CorruptStream {
                            message: error.to_string(),
                            request_id: attempt.request_id.clone(),
                        });
                        return Some(self.fail(error, attempt.yielded));
                    }
                    if attempt.ended {
                        let error = dialect.worded(ApiError::IncompleteStream {
                            request_id: attempt.request_id.clone(),
                        });
                        return Some(self.fail(error, attempt.yielded));
                    }
                    let idle = dialect.settings().stream_idle_timeout;
                    let chunk = tokio::time::timeout(idle, attempt.chunks.next()).await;
                    let Attempt {
                        decoder,
                        scratch,
                        pending,
                        deferred,
                        ended,
                        yielded,
                        ..
                    } = &mut *attempt;
                    match chunk {
                        Err(_) => {
                            let error = ApiError::Timeout {
                                what: D::NAMES.stream_data.to_owned(),
                                after: idle,
                            };
                            return Some(self.fail(error, *yielded));
                        }
                        Ok(Some(Ok(chunk))) => {
                            if let Err(error) = decoder.decode(&chunk, scratch) {
                                *deferred = Some(error);
                            }
                        }
                        Ok(Some(Err(error))) => {
                            let error = dialect.worded(map_transport(&error, idle, D::NAMES.peer));
                            return Some(self.fail(error, *yielded));
                        }
                        Ok(None) => {
                            // Complete: the end events are queued, and message_stop ends us.
                            // Not complete: `ended` makes the next round fail the attempt.
                            decoder.end(scratch);
                            *ended = true;
                        }
                    }
                    pending.extend(scratch.drain(..));
                    self.phase = Phase::Streaming(attempt);
                }
            }
        }
    }

    /// Attempt `self.attempt` failed with `error`: a retry notice (and a wait) or the end.
    fn fail(&mut self, error: ApiError, yielded: bool) -> Result<ClientEvent, ApiError> {
        let retry = self.sender.dialect.settings().retry;
        match retry.notice(&error, self.attempt, yielded) {
            Some(notice) => {
                tracing::warn!(%notice, "{}", D::NAMES.attempt_failed);
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

/// A header value, `sensitive` ones never shown by `Debug`; the error names the header.
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

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
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
fn is_refused(error: &reqwest::Error) -> bool {
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

/// A transport error as [`ApiError::Timeout`] (waiting for `peer`) or [`ApiError::Connection`].
pub(crate) fn map_transport(error: &reqwest::Error, after: Duration, peer: &str) -> ApiError {
    if error.is_timeout() {
        ApiError::Timeout {
            what: peer.to_owned(),
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

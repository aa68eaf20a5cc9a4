//! `HttpClient`: the real [`ModelClient`] for Anthropic's Messages API, over reqwest.
//!
//! The `Messages` dialect of the send/retry state machine (`send`): the request with
//! its `anthropic-version`, credential and beta headers (a `[1m]` model is sent without its
//! suffix, with the 1M beta), SSE events as they come, a `[1m]` model's name given its suffix
//! back, error bodies as [`ApiError::from_response`] types them. `count_tokens` posts once per
//! attempt under the same retry policy.

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;

use crate::config::{ANTHROPIC_VERSION, ClientConfig};
use crate::error::ApiError;
use crate::events::StreamEvent;
use crate::model_client::{EventStream, ModelClient};
use crate::request::MessagesRequest;
use crate::send::{
    BodyDecoder, Dialect, Names, Sender, Settings, StatusHints, event_stream, header_value,
    map_transport,
};
use crate::sse::EventDecoder;

/// The Messages API over HTTP. Cheap to clone (shares one connection pool).
#[derive(Clone, Debug)]
pub struct HttpClient {
    inner: Arc<Sender<Messages>>,
}

/// Anthropic's wire: the configuration and the headers every request carries.
#[derive(Debug)]
struct Messages {
    config: ClientConfig,
    headers: HeaderMap,
}

/// One call to the Messages API.
struct MessagesCall {
    /// `/v1/messages` or `/v1/messages/count_tokens`.
    path: &'static str,
    /// The reply streams (`accept: text/event-stream`).
    sse: bool,
    /// The model was `…[1m]`: the 1M beta header goes with every attempt, and the reply's
    /// model gets its suffix back (the rest of tine knows the model by that name).
    one_million: bool,
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
        let (connect_timeout, user_agent) = (config.connect_timeout, config.user_agent.clone());
        let sender = Sender::new(Messages { config, headers }, connect_timeout, &user_agent)?;
        Ok(Self {
            inner: Arc::new(sender),
        })
    }

    /// [`ClientConfig::from_env`] then [`HttpClient::new`].
    pub fn from_env() -> Result<Self, ApiError> {
        Self::new(ClientConfig::from_env()?)
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.dialect.config
    }
}

impl Dialect for Messages {
    type Call = MessagesCall;
    type Decoder = MessagesDecoder;

    const NAMES: Names = Names {
        peer: "the Anthropic API",
        headers: "response headers",
        stream_data: "stream data",
        attempt_failed: "Messages API attempt failed",
        error_response: "API error response",
        request_id_headers: ["request-id", "x-request-id"],
    };

    fn settings(&self) -> Settings<'_> {
        Settings {
            base_url: &self.config.base_url,
            request_timeout: self.config.request_timeout,
            stream_idle_timeout: self.config.stream_idle_timeout,
            retry: self.config.retry,
        }
    }

    fn request(
        &self,
        http: &reqwest::Client,
        call: &MessagesCall,
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, ApiError> {
        let mut headers = self.headers.clone();
        if call.one_million {
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
        let mut request = http
            .post(self.config.url(call.path))
            .headers(headers)
            .body(body);
        if call.sse {
            request = request.header(reqwest::header::ACCEPT, "text/event-stream");
        }
        Ok(request)
    }

    fn decoder(&self, call: &MessagesCall) -> MessagesDecoder {
        MessagesDecoder {
            sse: EventDecoder::new(),
            one_million: call.one_million,
        }
    }

    fn error_response(&self, status: u16, body: &[u8], hints: StatusHints) -> ApiError {
        ApiError::from_response(
            status,
            body,
            hints.request_id,
            hints.retry_after,
            hints.should_retry,
        )
    }
}

/// The SSE events of a Messages response, a `[1m]` model's name given its suffix back.
struct MessagesDecoder {
    sse: EventDecoder,
    one_million: bool,
}

impl BodyDecoder for MessagesDecoder {
    fn decode(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ApiError> {
        let from = out.len();
        let result = self.sse.feed(chunk, out);
        if self.one_million {
            for event in &mut out[from..] {
                if let StreamEvent::MessageStart { message } = event
                    && !crate::usage::split_one_million(&message.model).1
                {
                    message.model.push_str("[1m]");
                }
            }
        }
        result
    }

    /// A frame the body left unfinished is dropped: the reply lacks `message_stop` either way.
    fn end(&mut self, _out: &mut Vec<StreamEvent>) {
        self.sse.finish();
    }
}

impl Sender<Messages> {
    async fn count_tokens_once(&self, call: &MessagesCall, body: Bytes) -> Result<u64, ApiError> {
        #[derive(Deserialize)]
        struct CountTokensResponse {
            input_tokens: u64,
        }
        let (response, _) = self.post(call, body).await?;
        let timeout = self.dialect.config.request_timeout;
        let bytes = tokio::time::timeout(timeout, response.bytes())
            .await
            .map_err(|_| ApiError::Timeout {
                what: "the count_tokens response".to_owned(),
                after: timeout,
            })?
            .map_err(|e| map_transport(&e, timeout, Messages::NAMES.peer))?;
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
        let call = MessagesCall {
            path: "/v1/messages",
            sse: true,
            one_million,
        };
        let body = Bytes::from(request.streaming().to_json_bytes());
        event_stream(Arc::clone(&self.inner), call, body)
    }

    fn context_window(&self, model: &str) -> u64 {
        self.config()
            .context_window
            .unwrap_or_else(|| crate::usage::context_window(model))
    }

    fn count_tokens(&self, request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>> {
        let inner = Arc::clone(&self.inner);
        let (request, one_million) = wire_model(request);
        let call = MessagesCall {
            path: "/v1/messages/count_tokens",
            sse: false,
            one_million,
        };
        let body = Bytes::from(request.count_tokens_body());
        Box::pin(async move {
            let policy = inner.dialect.config.retry;
            let mut attempt = 1;
            loop {
                match inner.count_tokens_once(&call, body.clone()).await {
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
/// 1M beta header, see [`Messages::request`]); whether it had one.
fn wire_model(mut request: MessagesRequest) -> (MessagesRequest, bool) {
    let (id, one_million) = crate::usage::split_one_million(&request.model);
    if one_million {
        request.model = id.to_owned();
    }
    (request, one_million)
}

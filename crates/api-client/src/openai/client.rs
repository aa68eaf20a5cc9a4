//! `OpenAiClient`: a [`ModelClient`] for OpenAI-compatible chat completions (OpenAI, Ollama,
//! vLLM, llama.cpp's server, LM Studio, hosted endpoints).
//!
//! The `Chat` dialect of the send/retry state machine the Anthropic client runs too (the
//! crate's `send`): the request mapped and serialized once, those bytes on every attempt; the
//! chunks decoded into the Anthropic event sequence (see [`super::stream`]); the same
//! [`crate::ClientEvent::Retry`] and `discard_partial` contract. Errors are wrapped in
//! [`ApiError::OpenAi`] so their advice names this provider's variables.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::error::ApiError;
use crate::events::{ContentDelta, StreamEvent};
use crate::model_client::{ClientEvent, EventStream, ModelClient};
use crate::openai::config::OpenAiConfig;
use crate::openai::error::from_response;
use crate::openai::request::chat_request_bytes;
use crate::openai::stream::ChunkDecoder;
use crate::openai::tokenize::{ServerTokenizer, request_text};
use crate::request::MessagesRequest;
use crate::send::{
    BodyDecoder, Dialect, Names, Sender, Settings, StatusHints, event_stream, header_value,
};
use crate::usage::estimate_tokens;

/// OpenAI-compatible chat completions over HTTP. Cheap to clone (one connection pool).
#[derive(Clone, Debug)]
pub struct OpenAiClient {
    inner: Arc<Sender<Chat>>,
}

/// The chat-completions wire: the configuration, the headers every request carries, the URL,
/// and the server's tokenizer for a stream without usage.
#[derive(Debug)]
struct Chat {
    config: OpenAiConfig,
    headers: HeaderMap,
    url: String,
    tokenizer: Arc<ServerTokenizer>,
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
        let url = config.chat_completions_url();
        let (connect_timeout, user_agent) = (config.connect_timeout, config.user_agent.clone());
        let tokenizer = Arc::new(ServerTokenizer::new(&config.base_url, headers.clone()));
        let chat = Chat {
            config,
            headers,
            url,
            tokenizer,
        };
        Ok(Self {
            inner: Arc::new(Sender::new(chat, connect_timeout, &user_agent)?),
        })
    }

    /// [`OpenAiConfig::from_env`] then [`OpenAiClient::new`].
    pub fn from_env() -> Result<Self, ApiError> {
        Self::new(OpenAiConfig::from_env()?)
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &OpenAiConfig {
        &self.inner.dialect.config
    }

    /// The bytes [`ModelClient::stream`] posts for `request`.
    pub fn request_bytes(&self, request: &MessagesRequest) -> Vec<u8> {
        chat_request_bytes(request, self.config().max_tokens_field)
    }
}

/// What waiting for a transport step is called in a timeout message.
const ENDPOINT: &str = "the OpenAI-compatible endpoint";

/// One call: the request's model, which `message_start` names when a chunk does not, and its
/// estimated prompt tokens, the usage of a stream that carries none.
#[derive(Debug)]
struct ChatCall {
    model: String,
    prompt_estimate: u64,
}

impl Dialect for Chat {
    type Call = ChatCall;
    type Decoder = ChunkDecoder;

    const NAMES: Names = Names {
        peer: ENDPOINT,
        headers: "response headers from the OpenAI-compatible endpoint",
        stream_data: "stream data from the OpenAI-compatible endpoint",
        attempt_failed: "chat completions attempt failed",
        error_response: "chat completions error response",
        request_id_headers: ["x-request-id", "request-id"],
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
        _call: &ChatCall,
        body: Bytes,
    ) -> Result<reqwest::RequestBuilder, ApiError> {
        Ok(http
            .post(&self.url)
            .headers(self.headers.clone())
            .body(body))
    }

    fn decoder(&self, call: &ChatCall) -> ChunkDecoder {
        ChunkDecoder::new(call.model.clone(), call.prompt_estimate)
    }

    fn error_response(&self, status: u16, body: &[u8], hints: StatusHints) -> ApiError {
        from_response(
            status,
            body,
            hints.request_id,
            hints.retry_after,
            hints.should_retry,
        )
    }

    fn worded(&self, error: ApiError) -> ApiError {
        match error {
            ApiError::OpenAi(_) => error,
            other => ApiError::OpenAi(Box::new(other)),
        }
    }
}

impl BodyDecoder for ChunkDecoder {
    fn decode(&mut self, chunk: &[u8], out: &mut Vec<StreamEvent>) -> Result<(), ApiError> {
        self.feed(chunk, out)
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        self.finish(out);
    }
}

/// What a stream without usage is counted with.
struct UsageCount {
    http: reqwest::Client,
    tokenizer: Arc<ServerTokenizer>,
    model: String,
    body: Bytes,
}

/// `events`, with an estimated usage (the stream had none) counted again by the server's
/// tokenizer when it has one: the request's text and the reply's, seen as it streams.
fn counted_usage(events: EventStream, count: UsageCount) -> EventStream {
    let state = (events, String::new(), Arc::new(count));
    Box::pin(futures::stream::unfold(
        state,
        |(mut events, mut reply, count)| async move {
            let mut item = events.next().await?;
            match &mut item {
                Ok(ClientEvent::Retry(_)) => reply.clear(),
                Ok(ClientEvent::Stream(event)) => match event {
                    StreamEvent::ContentBlockDelta { delta, .. } => match delta {
                        ContentDelta::TextDelta { text } => reply.push_str(text),
                        ContentDelta::ThinkingDelta { thinking } => reply.push_str(thinking),
                        ContentDelta::InputJsonDelta { partial_json } => {
                            reply.push_str(partial_json)
                        }
                        ContentDelta::SignatureDelta { .. } => {}
                    },
                    StreamEvent::ContentBlockStart {
                        content_block: crate::ContentBlock::ToolUse(call),
                        ..
                    } => reply.push_str(&call.name),
                    StreamEvent::MessageDelta { usage, .. } if usage.estimated == Some(true) => {
                        let prompt = request_text(&count.body);
                        let (input, output) = futures::join!(
                            count.tokenizer.count(&count.http, &count.model, &prompt),
                            count.tokenizer.count(&count.http, &count.model, &reply)
                        );
                        if let (Some(input), Some(output)) = (input, output) {
                            usage.input_tokens = Some(input);
                            usage.cache_read_input_tokens = Some(0);
                            usage.output_tokens = Some(output.max(1));
                        }
                    }
                    _ => {}
                },
                Err(_) => {}
            }
            Some((item, (events, reply, count)))
        },
    ))
}

impl ModelClient for OpenAiClient {
    fn stream(&self, request: MessagesRequest) -> EventStream {
        let body = Bytes::from(self.request_bytes(&request));
        // Compaction's estimate (4 bytes of JSON a token) of what the server will count.
        let call = ChatCall {
            model: request.model.clone(),
            prompt_estimate: estimate_tokens(body.len()),
        };
        let events = event_stream(Arc::clone(&self.inner), call, body.clone());
        counted_usage(
            events,
            UsageCount {
                http: self.inner.http().clone(),
                tokenizer: Arc::clone(&self.inner.dialect.tokenizer),
                model: request.model,
                body,
            },
        )
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
        self.config()
            .context_window
            .unwrap_or_else(|| crate::usage::context_window(model))
    }

    /// The chat-completions URL's path (`/v1/chat/completions`, or under the base URL's).
    fn endpoint(&self) -> String {
        let url = &self.inner.dialect.url;
        let after_scheme = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
        after_scheme
            .find('/')
            .map_or_else(|| url.clone(), |at| after_scheme[at..].to_owned())
    }

    fn is_local(&self) -> bool {
        is_local_url(&self.inner.dialect.url)
    }
}

/// Whether `url`'s host is this machine or a private network: `localhost`, a `.local` name,
/// a loopback, private or link-local address.
fn is_local_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback() || ip.is_unspecified() || (ip.segments()[0] & 0xfe00) == 0xfc00
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod local_tests {
    use super::is_local_url;

    #[test]
    fn local_servers_are_told_from_hosted_ones() {
        for url in [
            "http://localhost:8080/v1/chat/completions",
            "http://127.0.0.1:11434/v1/chat/completions",
            "http://[::1]:8000/v1/chat/completions",
            "http://192.168.1.20/v1/chat/completions",
            "http://10.0.0.5:8080/v1/chat/completions",
            "http://gpu-box.local:8080/v1/chat/completions",
        ] {
            assert!(is_local_url(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1/chat/completions",
            "https://openrouter.ai/api/v1/chat/completions",
            "https://8.8.8.8/v1/chat/completions",
        ] {
            assert!(!is_local_url(url), "{url}");
        }
    }
}

//! The `ModelClient` trait: send a request, get a stream of events. Implemented by
//! [`crate::HttpClient`] (Anthropic's Messages API), [`crate::OpenAiClient`] (OpenAI-compatible
//! chat completions, mapped to the same events) and by [`crate::ScriptedClient`], so every upper
//! crate can be tested without HTTP and works unchanged on either wire.

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

use crate::accumulate::MessageAccumulator;
use crate::error::ApiError;
use crate::events::StreamEvent;
use crate::request::MessagesRequest;
use crate::response::ResponseMessage;
use crate::retry::RetryNotice;

/// What a [`ModelClient`] stream yields.
#[derive(Debug, Clone)]
pub enum ClientEvent {
    /// A server event of the current attempt.
    Stream(StreamEvent),
    /// The current attempt failed and another follows. When `discard_partial` is set, drop
    /// everything built from this attempt's events (see [`RetryNotice`]'s contract).
    Retry(RetryNotice),
}

/// The stream a [`ModelClient`] returns. It ends after `message_stop` (or after an `Err`, which
/// is always the last item).
pub type EventStream = BoxStream<'static, Result<ClientEvent, ApiError>>;

/// A Messages API endpoint. Object-safe: hold it as `Arc<dyn ModelClient>`.
pub trait ModelClient: Send + Sync {
    /// Send `request` with streaming on; retries happen inside and show up as
    /// [`ClientEvent::Retry`].
    fn stream(&self, request: MessagesRequest) -> EventStream;

    /// `POST /v1/messages/count_tokens`: the prompt's size in tokens.
    fn count_tokens(&self, request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>>;

    /// The context window of `model` on this endpoint, in tokens: the price table's figure
    /// unless the client was configured with one (`TINE_CONTEXT_WINDOW`, for a local model).
    fn context_window(&self, model: &str) -> u64 {
        crate::usage::context_window(model)
    }

    /// The path a request is posted to, as `--verbose` names it (`/v1/messages`;
    /// `/v1/chat/completions` on the OpenAI-compatible wire).
    fn endpoint(&self) -> String {
        "/v1/messages".to_owned()
    }

    /// Whether the endpoint is a model served on this machine or the local network (an
    /// OpenAI-compatible server on a loopback or private address): it may need minutes for
    /// what a hosted model does in seconds.
    fn is_local(&self) -> bool {
        false
    }
}

impl<T: ModelClient + ?Sized> ModelClient for std::sync::Arc<T> {
    fn stream(&self, request: MessagesRequest) -> EventStream {
        (**self).stream(request)
    }

    fn count_tokens(&self, request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>> {
        (**self).count_tokens(request)
    }

    fn context_window(&self, model: &str) -> u64 {
        (**self).context_window(model)
    }

    fn endpoint(&self) -> String {
        (**self).endpoint()
    }

    fn is_local(&self) -> bool {
        (**self).is_local()
    }
}

/// The final message of an event stream, with the retries that happened on the way. Honours
/// the `discard_partial` contract, so the message never holds content of a failed attempt.
pub async fn collect_message(
    mut stream: EventStream,
) -> Result<(ResponseMessage, Vec<RetryNotice>), ApiError> {
    let mut accumulator = MessageAccumulator::new();
    let mut retries = Vec::new();
    while let Some(item) = stream.next().await {
        match item? {
            ClientEvent::Stream(event) => accumulator.push(&event)?,
            ClientEvent::Retry(notice) => {
                // Every attempt starts again from message_start, so reset even when nothing
                // was yielded (discard_partial false): it costs nothing and cannot double up.
                accumulator.reset();
                retries.push(notice);
            }
        }
    }
    Ok((accumulator.finish()?, retries))
}

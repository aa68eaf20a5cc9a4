//! One reply as it streams: text, thinking and tool-call starts forwarded as events, retries
//! told to the host (and what streamed before them dropped), the complete message at the end.

use futures::StreamExt;
use tine_api_client::{
    ApiError, ClientEvent, ContentBlock, ContentDelta, MessageAccumulator, MessagesRequest,
    ResponseMessage, StreamEvent,
};
use tokio_util::sync::CancellationToken;

use crate::events::{Emitter, QueryEvent};
use crate::params::QueryParams;

/// How streaming one reply ended.
pub(crate) enum Streamed {
    /// The complete reply.
    Done(ResponseMessage),
    /// The request failed (after the client's retries) or the stream broke.
    Failed(ApiError),
    /// The loop was cancelled while the reply streamed.
    Aborted,
}

/// Streams one reply, forwarding deltas, and returns the complete message.
pub(crate) async fn stream_reply(
    params: &QueryParams,
    request: MessagesRequest,
    emit: &Emitter,
    cancel: &CancellationToken,
) -> Streamed {
    let mut events = params.client.stream(request);
    let mut accumulator = MessageAccumulator::new();
    loop {
        let item = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Streamed::Aborted,
            item = events.next() => item,
        };
        match item {
            None => break,
            Some(Err(error)) => return Streamed::Failed(error),
            Some(Ok(ClientEvent::Retry(notice))) => {
                accumulator.reset();
                emit.send(QueryEvent::Retry(notice)).await;
            }
            Some(Ok(ClientEvent::Stream(event))) => {
                match &event {
                    StreamEvent::ContentBlockStart { content_block, .. } => {
                        if let ContentBlock::ToolUse(t) = content_block {
                            emit.send(QueryEvent::ToolUseStart {
                                id: t.id.clone(),
                                name: t.name.clone(),
                            })
                            .await;
                        }
                    }
                    StreamEvent::ContentBlockDelta { delta, .. } => match delta {
                        ContentDelta::TextDelta { text } => {
                            emit.send(QueryEvent::TextDelta { text: text.clone() })
                                .await;
                        }
                        ContentDelta::ThinkingDelta { thinking } => {
                            emit.send(QueryEvent::ThinkingDelta {
                                text: thinking.clone(),
                            })
                            .await;
                        }
                        ContentDelta::InputJsonDelta { .. }
                        | ContentDelta::SignatureDelta { .. } => {}
                    },
                    // The accumulator assembles these; nothing to tell the host early.
                    StreamEvent::MessageStart { .. }
                    | StreamEvent::ContentBlockStop { .. }
                    | StreamEvent::MessageDelta { .. }
                    | StreamEvent::MessageStop
                    | StreamEvent::Ping
                    | StreamEvent::Error { .. } => {}
                }
                if let Err(error) = accumulator.push(&event) {
                    return Streamed::Failed(error);
                }
            }
        }
    }
    match accumulator.finish() {
        Ok(message) => Streamed::Done(message),
        Err(error) => Streamed::Failed(error),
    }
}

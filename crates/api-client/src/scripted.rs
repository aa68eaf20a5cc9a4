//! `ScriptedClient`: a [`ModelClient`] that replays canned replies and records every request,
//! so upper crates test their loops without HTTP. Also [`message_events`], which turns a
//! [`ResponseMessage`] into the event sequence the API would stream for it.
//!
//! ```
//! # use tine_api_client::*;
//! # futures::executor::block_on(async {
//! let client = ScriptedClient::new();
//! client.push_message(ScriptedClient::text_reply("hi there"));
//! let request = MessagesRequest::new("claude-sonnet-4-5", 1024, vec![Message::user("hello")]);
//! let (reply, retries) = collect_message(client.stream(request)).await.unwrap();
//! assert_eq!(reply.text(), "hi there");
//! assert!(retries.is_empty());
//! assert_eq!(client.requests().len(), 1);
//! # });
//! ```

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::content::{
    ContentBlock, RedactedThinkingBlock, Role, TextBlock, ThinkingBlock, ToolUseBlock,
};
use crate::error::ApiError;
use crate::events::{ContentDelta, MessageDeltaBody, StreamEvent};
use crate::model_client::{ClientEvent, EventStream, ModelClient};
use crate::request::MessagesRequest;
use crate::response::{ResponseMessage, StopReason};
use crate::usage::{Usage, UsageDelta};

/// One scripted reply: the items its stream yields, in order.
pub type Script = Vec<Result<ClientEvent, ApiError>>;

#[derive(Debug, Default)]
struct State {
    scripts: VecDeque<Script>,
    token_counts: VecDeque<Result<u64, ApiError>>,
    requests: Vec<MessagesRequest>,
    count_requests: Vec<MessagesRequest>,
}

/// Replays scripts in order, one per `stream` call; records requests. Clones share state.
#[derive(Debug, Clone, Default)]
pub struct ScriptedClient {
    state: Arc<Mutex<State>>,
}

impl ScriptedClient {
    /// A client with nothing scripted yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking test thread poisons the lock; the data is still usable for the others.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queue a raw script (events, retries, errors).
    pub fn push_script(&self, script: Script) -> &Self {
        self.lock().scripts.push_back(script);
        self
    }

    /// Queue a reply streamed as the API would stream `message`.
    pub fn push_message(&self, message: ResponseMessage) -> &Self {
        self.push_script(
            message_events(&message)
                .into_iter()
                .map(|e| Ok(ClientEvent::Stream(e)))
                .collect(),
        )
    }

    /// Queue a stream of these events.
    pub fn push_events(&self, events: Vec<StreamEvent>) -> &Self {
        self.push_script(
            events
                .into_iter()
                .map(|e| Ok(ClientEvent::Stream(e)))
                .collect(),
        )
    }

    /// Queue a call that fails at once with `error`.
    pub fn push_error(&self, error: ApiError) -> &Self {
        self.push_script(vec![Err(error)])
    }

    /// Queue the answer of the next `count_tokens` call (without one, it estimates 4 bytes per
    /// token of the request body).
    pub fn push_token_count(&self, count: Result<u64, ApiError>) -> &Self {
        self.lock().token_counts.push_back(count);
        self
    }

    /// Requests received by `stream`, in order.
    pub fn requests(&self) -> Vec<MessagesRequest> {
        self.lock().requests.clone()
    }

    /// Requests received by `count_tokens`, in order.
    pub fn count_token_requests(&self) -> Vec<MessagesRequest> {
        self.lock().count_requests.clone()
    }

    /// Scripts not yet consumed.
    pub fn remaining(&self) -> usize {
        self.lock().scripts.len()
    }

    /// A reply with one text block, `end_turn`.
    pub fn text_reply(text: &str) -> ResponseMessage {
        reply(vec![ContentBlock::text(text)], StopReason::EndTurn)
    }

    /// A reply calling one tool, `tool_use`.
    pub fn tool_use_reply(id: &str, name: &str, input: Value) -> ResponseMessage {
        reply(
            vec![ContentBlock::tool_use(id, name, input)],
            StopReason::ToolUse,
        )
    }
}

/// A message with `content` and `stop_reason`, a fixed id and model, and small usage.
pub fn reply(content: Vec<ContentBlock>, stop_reason: StopReason) -> ResponseMessage {
    ResponseMessage {
        id: "msg_scripted".to_owned(),
        model: "claude-sonnet-4-5".to_owned(),
        role: Role::Assistant,
        content,
        stop_reason: Some(stop_reason),
        stop_sequence: None,
        usage: Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        },
    }
}

impl ModelClient for ScriptedClient {
    fn stream(&self, request: MessagesRequest) -> EventStream {
        let mut state = self.lock();
        let call = state.requests.len() + 1;
        state.requests.push(request);
        let script = state.scripts.pop_front().unwrap_or_else(|| {
            vec![Err(ApiError::Config {
                message: format!("ScriptedClient has no scripted reply left for request #{call}"),
            })]
        });
        Box::pin(futures::stream::iter(script))
    }

    fn count_tokens(&self, request: MessagesRequest) -> BoxFuture<'static, Result<u64, ApiError>> {
        let mut state = self.lock();
        let answer = state
            .token_counts
            .pop_front()
            .unwrap_or_else(|| Ok(request.count_tokens_body().len().div_ceil(4) as u64));
        state.count_requests.push(request);
        Box::pin(std::future::ready(answer))
    }
}

/// The events the API streams for `message`: `message_start` (empty content, input usage),
/// each block as start / deltas / stop (text in chunks of up to 16 characters, tool input as
/// JSON in chunks of up to 16 bytes split on character boundaries, thinking then its signature),
/// `message_delta` (stop reason, output usage) and `message_stop`.
pub fn message_events(message: &ResponseMessage) -> Vec<StreamEvent> {
    let mut events = Vec::new();
    let mut start = message.clone();
    start.content = Vec::new();
    start.stop_reason = None;
    start.stop_sequence = None;
    start.usage.output_tokens = start.usage.output_tokens.min(1);
    events.push(StreamEvent::MessageStart { message: start });
    for (index, block) in message.content.iter().enumerate() {
        let (start_block, deltas) = block_events(block);
        events.push(StreamEvent::ContentBlockStart {
            index,
            content_block: start_block,
        });
        events.extend(
            deltas
                .into_iter()
                .map(|delta| StreamEvent::ContentBlockDelta { index, delta }),
        );
        events.push(StreamEvent::ContentBlockStop { index });
    }
    events.push(StreamEvent::MessageDelta {
        delta: MessageDeltaBody {
            stop_reason: message.stop_reason.clone(),
            stop_sequence: message.stop_sequence.clone(),
        },
        usage: UsageDelta {
            output_tokens: Some(message.usage.output_tokens),
            ..UsageDelta::default()
        },
    });
    events.push(StreamEvent::MessageStop);
    events
}

fn chunks(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if current.len() + c.len_utf8() > max && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn block_events(block: &ContentBlock) -> (ContentBlock, Vec<ContentDelta>) {
    match block {
        ContentBlock::Text(b) => (
            ContentBlock::Text(TextBlock {
                text: String::new(),
                ..b.clone()
            }),
            chunks(&b.text, 16)
                .into_iter()
                .map(|text| ContentDelta::TextDelta { text })
                .collect(),
        ),
        ContentBlock::ToolUse(b) => (
            ContentBlock::ToolUse(ToolUseBlock {
                input: Value::Object(serde_json::Map::new()),
                ..b.clone()
            }),
            chunks(&b.input.to_string(), 16)
                .into_iter()
                .map(|partial_json| ContentDelta::InputJsonDelta { partial_json })
                .collect(),
        ),
        ContentBlock::Thinking(b) => {
            let mut deltas: Vec<ContentDelta> = chunks(&b.thinking, 16)
                .into_iter()
                .map(|thinking| ContentDelta::ThinkingDelta { thinking })
                .collect();
            deltas.push(ContentDelta::SignatureDelta {
                signature: b.signature.clone(),
            });
            (ContentBlock::Thinking(ThinkingBlock::default()), deltas)
        }
        ContentBlock::RedactedThinking(b) => (
            ContentBlock::RedactedThinking(RedactedThinkingBlock {
                data: b.data.clone(),
            }),
            Vec::new(),
        ),
        ContentBlock::Image(_)
        | ContentBlock::Document(_)
        | ContentBlock::ToolResult(_)
        | ContentBlock::ToolReference(_)
        | ContentBlock::Unknown(_) => (block.clone(), Vec::new()),
    }
}

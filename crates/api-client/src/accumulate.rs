//! `MessageAccumulator`: fold a response's [`StreamEvent`]s into the final [`ResponseMessage`].
//!
//! Text and thinking deltas are appended as they come. A tool call's input arrives as partial
//! JSON strings; they are concatenated and parsed once, at `content_block_stop` (invalid JSON
//! there is [`ApiError::InvalidToolInput`]). Blocks of unknown types are kept verbatim; an
//! `input_json_delta` on one (server tools) sets its `input` the same way.

use serde_json::Value;

use crate::content::{ContentBlock, ToolUseBlock};
use crate::error::ApiError;
use crate::events::{ContentDelta, StreamEvent};
use crate::response::ResponseMessage;

#[derive(Debug)]
enum BlockState {
    /// A block still receiving deltas; `partial_json` collects input of tool-like blocks.
    Open {
        block: ContentBlock,
        partial_json: String,
    },
    Closed(ContentBlock),
}

/// Folds stream events into a message. Feed it every [`StreamEvent`] of one attempt, in order;
/// call [`MessageAccumulator::reset`] when a retry discards the attempt.
#[derive(Debug, Default)]
pub struct MessageAccumulator {
    message: Option<ResponseMessage>,
    blocks: Vec<Option<BlockState>>,
    stopped: bool,
}

fn protocol(message: String) -> ApiError {
    ApiError::Protocol { message }
}

impl MessageAccumulator {
    /// An accumulator that has seen no event.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forget everything (a retry discarded the attempt).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Whether `message_stop` was seen.
    pub fn is_complete(&self) -> bool {
        self.stopped
    }

    /// The message as known so far (content holds only the closed blocks, in index order).
    pub fn snapshot(&self) -> Option<ResponseMessage> {
        let mut message = self.message.clone()?;
        message.content = self
            .blocks
            .iter()
            .filter_map(|b| match b {
                Some(BlockState::Closed(block)) => Some(block.clone()),
                Some(BlockState::Open { .. }) | None => None,
            })
            .collect();
        Some(message)
    }

    /// Apply one event.
    pub fn push(&mut self, event: &StreamEvent) -> Result<(), ApiError> {
        match event {
            StreamEvent::MessageStart { message } => {
                // A second message_start without reset means a new attempt: start over.
                self.reset();
                let mut message = message.clone();
                let initial = std::mem::take(&mut message.content);
                self.message = Some(message);
                self.blocks = initial
                    .into_iter()
                    .map(|b| Some(BlockState::Closed(b)))
                    .collect();
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => {
                self.require_started("content_block_start")?;
                let index = *index;
                if self.blocks.len() <= index {
                    self.blocks.resize_with(index + 1, || None);
                }
                if self.blocks[index].is_some() {
                    return Err(protocol(format!("content block {index} started twice")));
                }
                self.blocks[index] = Some(BlockState::Open {
                    block: content_block.clone(),
                    partial_json: String::new(),
                });
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                let Some(Some(BlockState::Open {
                    block,
                    partial_json,
                })) = self.blocks.get_mut(*index)
                else {
                    return Err(protocol(format!(
                        "delta for content block {index}, which is not open"
                    )));
                };
                apply_delta(*index, block, partial_json, delta)?;
            }
            StreamEvent::ContentBlockStop { index } => {
                let index = *index;
                let Some(slot) = self.blocks.get_mut(index) else {
                    return Err(protocol(format!(
                        "stop for content block {index}, which never started"
                    )));
                };
                match slot.take() {
                    Some(BlockState::Open {
                        block,
                        partial_json,
                    }) => {
                        *slot = Some(BlockState::Closed(close_block(index, block, partial_json)?));
                    }
                    Some(closed @ BlockState::Closed(_)) => {
                        *slot = Some(closed);
                        return Err(protocol(format!("content block {index} stopped twice")));
                    }
                    None => {
                        return Err(protocol(format!(
                            "stop for content block {index}, which never started"
                        )));
                    }
                }
            }
            StreamEvent::MessageDelta { delta, usage } => {
                let message = self.require_started("message_delta")?;
                if delta.stop_reason.is_some() {
                    message.stop_reason = delta.stop_reason.clone();
                }
                if delta.stop_sequence.is_some() {
                    message.stop_sequence = delta.stop_sequence.clone();
                }
                message.usage.apply_delta(usage);
            }
            StreamEvent::MessageStop => {
                self.require_started("message_stop")?;
                self.stopped = true;
            }
            StreamEvent::Ping => {}
            StreamEvent::Error { error } => {
                return Err(ApiError::from_stream_error(error, None));
            }
        }
        Ok(())
    }

    fn require_started(&mut self, what: &str) -> Result<&mut ResponseMessage, ApiError> {
        self.message
            .as_mut()
            .ok_or_else(|| protocol(format!("{what} before message_start")))
    }

    /// The final message. Blocks still open (a stream cut after its last delta) are closed as
    /// if `content_block_stop` had come; missing indexes are skipped.
    pub fn finish(self) -> Result<ResponseMessage, ApiError> {
        let Some(mut message) = self.message else {
            return Err(protocol("the stream had no message_start".to_owned()));
        };
        let mut content = Vec::with_capacity(self.blocks.len());
        for (index, state) in self.blocks.into_iter().enumerate() {
            match state {
                Some(BlockState::Closed(block)) => content.push(block),
                Some(BlockState::Open {
                    block,
                    partial_json,
                }) => content.push(close_block(index, block, partial_json)?),
                None => {}
            }
        }
        message.content = content;
        Ok(message)
    }
}

fn apply_delta(
    index: usize,
    block: &mut ContentBlock,
    partial_json: &mut String,
    delta: &ContentDelta,
) -> Result<(), ApiError> {
    match (block, delta) {
        (ContentBlock::Text(b), ContentDelta::TextDelta { text }) => b.text.push_str(text),
        (ContentBlock::Thinking(b), ContentDelta::ThinkingDelta { thinking }) => {
            b.thinking.push_str(thinking)
        }
        (ContentBlock::Thinking(b), ContentDelta::SignatureDelta { signature }) => {
            b.signature.push_str(signature)
        }
        (
            ContentBlock::ToolUse(_) | ContentBlock::Unknown(_),
            ContentDelta::InputJsonDelta { partial_json: part },
        ) => {
            partial_json.push_str(part);
        }
        (block, delta) => {
            return Err(protocol(format!(
                "content block {index} got a {} delta it cannot take ({})",
                delta_name(delta),
                block_name(block)
            )));
        }
    }
    Ok(())
}

fn delta_name(delta: &ContentDelta) -> &'static str {
    match delta {
        ContentDelta::TextDelta { .. } => "text_delta",
        ContentDelta::InputJsonDelta { .. } => "input_json_delta",
        ContentDelta::ThinkingDelta { .. } => "thinking_delta",
        ContentDelta::SignatureDelta { .. } => "signature_delta",
    }
}

fn block_name(block: &ContentBlock) -> &'static str {
    match block {
        ContentBlock::Text(_) => "text",
        ContentBlock::Image(_) => "image",
        ContentBlock::Document(_) => "document",
        ContentBlock::ToolUse(_) => "tool_use",
        ContentBlock::ToolResult(_) => "tool_result",
        ContentBlock::Thinking(_) => "thinking",
        ContentBlock::RedactedThinking(_) => "redacted_thinking",
        ContentBlock::ToolReference(_) => "tool_reference",
        ContentBlock::Unknown(_) => "unknown block type",
    }
}

/// Parse the collected input JSON once; an empty collection keeps the start's `input` (`{}`).
fn close_block(
    index: usize,
    block: ContentBlock,
    partial_json: String,
) -> Result<ContentBlock, ApiError> {
    if partial_json.is_empty() {
        return Ok(block);
    }
    let name = match &block {
        ContentBlock::ToolUse(b) => b.name.clone(),
        other => other_name(other),
    };
    let input: Value =
        serde_json::from_str(&partial_json).map_err(|e| ApiError::InvalidToolInput {
            index,
            name,
            message: e.to_string(),
            partial_json: partial_json.clone(),
        })?;
    Ok(match block {
        ContentBlock::ToolUse(b) => ContentBlock::ToolUse(ToolUseBlock { input, ..b }),
        ContentBlock::Unknown(mut value) => {
            if let Some(object) = value.as_object_mut() {
                object.insert("input".to_owned(), input);
            }
            ContentBlock::Unknown(value)
        }
        other => other,
    })
}

fn other_name(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Unknown(v) => v
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)")
            .to_owned(),
        other => block_name(other).to_owned(),
    }
}

#[cfg(test)]
#[path = "accumulate_tests.rs"]
mod tests;

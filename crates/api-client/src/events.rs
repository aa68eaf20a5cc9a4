//! Typed streaming events of `POST /v1/messages` with `stream: true`.
//!
//! Order on the wire: `message_start`, then per block `content_block_start` → deltas →
//! `content_block_stop`, then `message_delta` (stop reason, cumulative usage) and `message_stop`.
//! `ping` may come anywhere; `error` can arrive after HTTP 200. Event and delta types this crate
//! does not know are dropped by [`decode_event`] (the API may add new ones at any time).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::content::ContentBlock;
use crate::error::{ApiError, ErrorBody};
use crate::response::{ResponseMessage, StopReason};
use crate::usage::UsageDelta;

/// A delta to the content block at `index`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentDelta {
    /// More text.
    TextDelta {
        /// The text added.
        text: String,
    },
    /// More of a tool call's input JSON.
    InputJsonDelta {
        /// The JSON added (not valid JSON on its own).
        partial_json: String,
    },
    /// More thinking.
    ThinkingDelta {
        /// The thinking added.
        thinking: String,
    },
    /// The thinking block's signature.
    SignatureDelta {
        /// The signature.
        signature: String,
    },
}

/// `message_delta`'s `delta`: the stop reason once known.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MessageDeltaBody {
    /// Why the model stopped.
    pub stop_reason: Option<StopReason>,
    /// The stop sequence that matched, if one did.
    pub stop_sequence: Option<String>,
}

/// One server-sent event of a streamed response.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// The message envelope (id, model, input usage) with empty content.
    MessageStart {
        /// The envelope.
        message: ResponseMessage,
    },
    /// A content block begins.
    ContentBlockStart {
        /// The block's index in the message.
        index: usize,
        /// The block, empty or with its first content.
        content_block: ContentBlock,
    },
    /// More of a content block.
    ContentBlockDelta {
        /// The block's index in the message.
        index: usize,
        /// What it adds.
        delta: ContentDelta,
    },
    /// A content block is complete.
    ContentBlockStop {
        /// The block's index in the message.
        index: usize,
    },
    /// Stop reason and cumulative usage (fields present replace earlier values).
    MessageDelta {
        /// The stop reason and sequence.
        delta: MessageDeltaBody,
        /// The usage so far.
        usage: UsageDelta,
    },
    /// The message is complete.
    MessageStop,
    /// A keep-alive.
    Ping,
    /// An error after HTTP 200; the HTTP client turns it into [`ApiError::StreamError`].
    Error {
        /// The error.
        error: ErrorBody,
    },
}

impl StreamEvent {
    /// The SSE `event:` name of this event.
    pub fn name(&self) -> &'static str {
        match self {
            Self::MessageStart { .. } => "message_start",
            Self::ContentBlockStart { .. } => "content_block_start",
            Self::ContentBlockDelta { .. } => "content_block_delta",
            Self::ContentBlockStop { .. } => "content_block_stop",
            Self::MessageDelta { .. } => "message_delta",
            Self::MessageStop => "message_stop",
            Self::Ping => "ping",
            Self::Error { .. } => "error",
        }
    }

    /// This event framed as SSE (`event: …\ndata: …\n\n`), as the API sends it. Used by fakes,
    /// tests and benchmarks.
    pub fn to_sse(&self) -> String {
        let data = serde_json::to_string(self).unwrap_or_default();
        format!("event: {}\ndata: {}\n\n", self.name(), data)
    }
}

/// Flat mirror of every event shape: one pass of derived deserialization with no buffering
/// (internally tagged enums buffer the whole object first), then a match on `type`. Unknown
/// fields are skipped by serde.
#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    index: Option<usize>,
    #[serde(borrow)]
    delta: Option<RawDelta<'a>>,
    // Boxed: the derived visitor moves this struct around, and inline these fields (rare in
    // the stream) would make every small delta event copy a few hundred bytes.
    content_block: Option<Box<ContentBlock>>,
    message: Option<Box<ResponseMessage>>,
    usage: Option<Box<UsageDelta>>,
    error: Option<Box<ErrorBody>>,
}

#[derive(Deserialize)]
struct RawDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    /// The payload of whichever delta this is: the four known delta types each carry exactly
    /// one of these fields, so one slot keeps the struct (moved per event) small.
    #[serde(alias = "partial_json", alias = "thinking", alias = "signature")]
    text: Option<String>,
    stop_reason: Option<StopReason>,
    stop_sequence: Option<String>,
}

fn missing(event: &str, field: &str) -> ApiError {
    ApiError::Decode {
        what: format!("`{event}` event"),
        message: format!("missing field `{field}`"),
    }
}

/// Decode one event's `data` JSON. `Ok(None)` for event or delta types this crate does not
/// know (they are to be ignored); `Err` for malformed JSON or a known event missing a field.
pub(crate) fn decode_event(data: &str) -> Result<Option<StreamEvent>, ApiError> {
    let raw: RawEvent = serde_json::from_str(data).map_err(|e| ApiError::Decode {
        what: "stream event".to_owned(),
        message: format!("{e}; data: {}", data.chars().take(200).collect::<String>()),
    })?;
    let kind = raw.kind.clone();
    let name: &str = &kind;
    let index = || raw.index.ok_or_else(|| missing(name, "index"));
    let event = match name {
        "message_start" => StreamEvent::MessageStart {
            message: *raw.message.ok_or_else(|| missing(name, "message"))?,
        },
        "content_block_start" => StreamEvent::ContentBlockStart {
            index: index()?,
            content_block: *raw
                .content_block
                .ok_or_else(|| missing(name, "content_block"))?,
        },
        "content_block_delta" => {
            let index = index()?;
            let delta = raw.delta.ok_or_else(|| missing(name, "delta"))?;
            let delta = match delta.kind.as_deref() {
                Some("text_delta") => ContentDelta::TextDelta {
                    text: delta.text.ok_or_else(|| missing("text_delta", "text"))?,
                },
                Some("input_json_delta") => ContentDelta::InputJsonDelta {
                    partial_json: delta
                        .text
                        .ok_or_else(|| missing("input_json_delta", "partial_json"))?,
                },
                Some("thinking_delta") => ContentDelta::ThinkingDelta {
                    thinking: delta
                        .text
                        .ok_or_else(|| missing("thinking_delta", "thinking"))?,
                },
                Some("signature_delta") => ContentDelta::SignatureDelta {
                    signature: delta
                        .text
                        .ok_or_else(|| missing("signature_delta", "signature"))?,
                },
                other => {
                    tracing::debug!(delta_type = ?other, "ignoring unknown content delta type");
                    return Ok(None);
                }
            };
            StreamEvent::ContentBlockDelta { index, delta }
        }
        "content_block_stop" => StreamEvent::ContentBlockStop { index: index()? },
        "message_delta" => {
            let delta = raw
                .delta
                .map_or_else(MessageDeltaBody::default, |d| MessageDeltaBody {
                    stop_reason: d.stop_reason,
                    stop_sequence: d.stop_sequence,
                });
            StreamEvent::MessageDelta {
                delta,
                usage: raw.usage.map(|u| *u).unwrap_or_default(),
            }
        }
        "message_stop" => StreamEvent::MessageStop,
        "ping" => StreamEvent::Ping,
        "error" => StreamEvent::Error {
            error: *raw.error.ok_or_else(|| missing(name, "error"))?,
        },
        other => {
            tracing::debug!(event_type = other, "ignoring unknown stream event type");
            return Ok(None);
        }
    };
    Ok(Some(event))
}

impl<'de> Deserialize<'de> for StreamEvent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        let text = value.to_string();
        match decode_event(&text) {
            Ok(Some(event)) => Ok(event),
            Ok(None) => Err(serde::de::Error::custom(
                "unknown stream event or delta type",
            )),
            Err(e) => Err(serde::de::Error::custom(e)),
        }
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;

//! The model's reply: the message `message_start` announces and the accumulator completes, and
//! why the model stopped.

use serde::{Deserialize, Serialize};

use crate::content::{ContentBlock, Message, MessageContent, Role, ToolUseBlock};
use crate::usage::Usage;

/// Why the model stopped. Unknown reasons are kept as [`StopReason::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// The model finished.
    EndTurn,
    /// The reply hit `max_tokens`.
    MaxTokens,
    /// A stop sequence matched.
    StopSequence,
    /// The model called tools.
    ToolUse,
    /// A long turn paused; send the reply back to continue it.
    PauseTurn,
    /// The model declined.
    Refusal,
    /// The context window is full.
    ModelContextWindowExceeded,
    /// A reason this client does not know.
    Other(String),
}

impl StopReason {
    /// The reason as the API writes it (`end_turn`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::ToolUse => "tool_use",
            Self::PauseTurn => "pause_turn",
            Self::Refusal => "refusal",
            Self::ModelContextWindowExceeded => "model_context_window_exceeded",
            Self::Other(s) => s,
        }
    }

    /// The reason written `s`.
    pub fn parse(s: &str) -> Self {
        match s {
            "end_turn" => Self::EndTurn,
            "max_tokens" => Self::MaxTokens,
            "stop_sequence" => Self::StopSequence,
            "tool_use" => Self::ToolUse,
            "pause_turn" => Self::PauseTurn,
            "refusal" => Self::Refusal,
            "model_context_window_exceeded" => Self::ModelContextWindowExceeded,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Self::parse(&s))
    }
}

/// The model's reply: what `message_start` announces and the accumulator completes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseMessage {
    /// The message's id (`msg_…`).
    pub id: String,
    /// The model that answered.
    pub model: String,
    /// Always the assistant.
    #[serde(default = "assistant_role")]
    pub role: Role,
    /// The reply's content blocks.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Why the model stopped.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// The stop sequence that matched, if one did.
    #[serde(default)]
    pub stop_sequence: Option<String>,
    /// Token counts.
    #[serde(default)]
    pub usage: Usage,
}

fn assistant_role() -> Role {
    Role::Assistant
}

impl ResponseMessage {
    /// The reply as a message to append to the conversation (content blocks unchanged, so
    /// thinking signatures are echoed back exactly).
    pub fn to_message(&self) -> Message {
        Message {
            role: self.role,
            content: MessageContent::Blocks(self.content.clone()),
        }
    }

    /// The concatenated text of the text blocks.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text(t) = block {
                out.push_str(&t.text);
            }
        }
        out
    }

    /// The tool calls in the reply, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUseBlock> {
        self.content.iter().filter_map(|b| match b {
            ContentBlock::ToolUse(t) => Some(t),
            _ => None,
        })
    }
}

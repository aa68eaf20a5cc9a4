//! The body of `POST /v1/messages` (and of `count_tokens`), serialized to stable bytes.
//!
//! Field order is the order on the wire (serde serializes in declaration order), so
//! [`MessagesRequest::to_json_bytes`] gives the same bytes for the same request in every
//! process: a fork's prompt-cache hit depends on it. `None` fields are skipped.

use serde::{Deserialize, Serialize};

use crate::content::{Message, TextBlock};
use crate::tool_array::ToolArray;

/// The system prompt: a string or text blocks (blocks can carry cache breakpoints). Blocks go
/// on the wire as `{"type":"text","text":…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SystemPrompt {
    /// A plain string.
    Text(String),
    /// Text blocks (which can carry cache breakpoints).
    Blocks(#[serde(with = "system_blocks")] Vec<TextBlock>),
}

impl SystemPrompt {
    /// No text at all, or only whitespace: the API refuses such a text block, so a request
    /// leaves the system prompt out instead (`--system-prompt ""`).
    pub fn is_blank(&self) -> bool {
        match self {
            Self::Text(text) => text.trim().is_empty(),
            Self::Blocks(blocks) => blocks.iter().all(|b| b.text.trim().is_empty()),
        }
    }
}

/// `Vec<TextBlock>` with each block tagged `"type": "text"` (a bare `TextBlock` has no tag:
/// inside [`ContentBlock`] the enum adds it).
mod system_blocks {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::TextBlock;

    #[derive(Serialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum TaggedRef<'a> {
        Text(&'a TextBlock),
    }

    #[derive(Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged {
        Text(TextBlock),
    }

    pub(super) fn serialize<S: Serializer>(
        blocks: &[TextBlock],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(blocks.iter().map(TaggedRef::Text))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<TextBlock>, D::Error> {
        let tagged = Vec::<Tagged>::deserialize(deserializer)?;
        Ok(tagged
            .into_iter()
            .map(|t| match t {
                Tagged::Text(b) => b,
            })
            .collect())
    }
}

/// How the model must choose tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides (the default).
    Auto {
        /// At most one tool call per reply, when true.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model must call some tool.
    Any {
        /// At most one tool call per reply, when true.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model must call this tool.
    Tool {
        /// The tool.
        name: String,
        /// At most one tool call per reply, when true.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disable_parallel_tool_use: Option<bool>,
    },
    /// The model may not call tools.
    None,
}

/// Extended thinking: `{type: enabled, budget_tokens}` (budget ≥ 1024 and < `max_tokens`),
/// `{type: disabled}` or `{type: adaptive}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingConfig {
    /// Thinking on, with a token budget.
    Enabled {
        /// Tokens the model may think for (at least 1024, less than `max_tokens`).
        budget_tokens: u32,
    },
    /// Thinking off.
    Disabled,
    /// The model decides how much to think.
    Adaptive,
}

/// How much effort the model puts into a reply (`output_config.effort`, Claude Code's
/// `--effort`): fewer tokens and quicker answers at `low`, the most thorough at `max`. Models
/// that do not take it answer with the API's own error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// The fewest tokens.
    Low,
    /// Between.
    Medium,
    /// The API's default.
    High,
    /// Deeper than high (only some models; others treat it as high).
    Xhigh,
    /// The most.
    Max,
}

impl Effort {
    /// The name on the wire and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }
}

impl std::str::FromStr for Effort {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim() {
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            "xhigh" => Ok(Self::Xhigh),
            "max" => Ok(Self::Max),
            other => Err(format!(
                "unknown effort `{other}`: use low, medium, high, xhigh or max"
            )),
        }
    }
}

/// Output options of a request (`output_config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct OutputConfig {
    /// How much effort the reply gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
}

/// Request metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Metadata {
    /// An opaque id of the end user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// The body of `POST /v1/messages`.
///
/// Serialize it with [`MessagesRequest::to_json_bytes`]: those are exactly the bytes the HTTP
/// client sends (the streaming client sets `stream: true` first; see [`MessagesRequest::streaming`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    /// The model asked.
    pub model: String,
    /// The reply's output limit.
    pub max_tokens: u32,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<SystemPrompt>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// Serialized once (by the tool pool); sent as those bytes.
    #[serde(default, skip_serializing_if = "ToolArray::is_empty")]
    pub tools: ToolArray,
    /// How the model may use tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Extended thinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingConfig>,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Sequences that stop the reply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Top-k sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Output options (`--effort`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_config: Option<OutputConfig>,
    /// Whether the reply streams (set by the client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
}

impl MessagesRequest {
    /// A request with only the required fields set.
    pub fn new(model: impl Into<String>, max_tokens: u32, messages: Vec<Message>) -> Self {
        Self {
            model: model.into(),
            max_tokens,
            system: None,
            messages,
            tools: ToolArray::default(),
            tool_choice: None,
            thinking: None,
            metadata: None,
            stop_sequences: Vec::new(),
            temperature: None,
            top_p: None,
            top_k: None,
            output_config: None,
            stream: None,
        }
    }

    /// The exact bytes sent as the HTTP body. Deterministic: the same logical request gives the
    /// same bytes every time and in every process (struct fields serialize in declaration order;
    /// JSON objects inside `Value`s keep serde_json's map order, which is deterministic too).
    pub fn to_json_bytes(&self) -> Vec<u8> {
        // Serializing these types into a Vec cannot fail: no maps with non-string keys, no
        // custom Serialize impls that error. Fall back to an empty body rather than panic.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// This request with `stream: true`, as the streaming client sends it.
    pub fn streaming(mut self) -> Self {
        self.stream = Some(true);
        self
    }

    /// The body of `POST /v1/messages/count_tokens`: the same request without `max_tokens`,
    /// `stream` and sampling parameters, which that endpoint does not take.
    pub fn count_tokens_body(&self) -> Vec<u8> {
        let body = CountTokensBody {
            model: &self.model,
            system: self.system.as_ref(),
            messages: &self.messages,
            tools: &self.tools,
            tool_choice: self.tool_choice.as_ref(),
            thinking: self.thinking.as_ref(),
        };
        serde_json::to_vec(&body).unwrap_or_default()
    }
}

#[derive(Serialize)]
struct CountTokensBody<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a SystemPrompt>,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "ToolArray::is_empty")]
    tools: &'a ToolArray,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'a ToolChoice>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<&'a ThinkingConfig>,
}

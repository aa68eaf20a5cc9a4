//! Messages and their content blocks, the wire types both directions of `POST /v1/messages`
//! share.
//!
//! Field order in every struct is the order on the wire: serde serializes in declaration order,
//! and byte-stable requests rely on that (a fork's prompt-cache hit depends on it). `None`
//! fields are skipped. Unknown fields from the server are ignored; unknown content-block types
//! are kept verbatim in [`ContentBlock::Unknown`] so they can be echoed back unchanged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cache_control::CacheControl;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person (and tool results).
    User,
    /// The model.
    Assistant,
}

/// `{"type":"text","text":...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// Citations the server attached (echoed back as received).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Value>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl TextBlock {
    /// A text block without a breakpoint.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            citations: None,
            cache_control: None,
        }
    }

    /// With a cache breakpoint.
    pub fn with_cache_control(mut self, cache_control: CacheControl) -> Self {
        self.cache_control = Some(cache_control);
        self
    }
}

/// Where an image's bytes come from. Unknown source kinds are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// The image's bytes, base64-encoded.
    Base64 {
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        media_type: String,
        /// The base64 data.
        data: String,
    },
    /// An image the API fetches.
    Url {
        /// Its URL.
        url: String,
    },
    /// An uploaded file.
    File {
        /// The file's id.
        file_id: String,
    },
    /// A source this client does not know, kept as sent.
    #[serde(untagged)]
    Other(Value),
}

/// `{"type":"image","source":...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageBlock {
    /// Where the image comes from.
    pub source: ImageSource,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// Where a document's content comes from (PDF as base64, plain text, URL, content blocks, a
/// file). Unknown source kinds are kept verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DocumentSource {
    /// The document's bytes, base64-encoded (PDF).
    Base64 {
        /// `application/pdf`.
        media_type: String,
        /// The base64 data.
        data: String,
    },
    /// Plain text.
    Text {
        /// `text/plain`.
        media_type: String,
        /// The text.
        data: String,
    },
    /// A document the API fetches.
    Url {
        /// Its URL.
        url: String,
    },
    /// Content blocks.
    Content {
        /// The blocks, as sent.
        content: Value,
    },
    /// An uploaded file.
    File {
        /// The file's id.
        file_id: String,
    },
    /// A source this client does not know, kept as sent.
    #[serde(untagged)]
    Other(Value),
}

/// `{"type":"document","source":...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentBlock {
    /// Where the document comes from.
    pub source: DocumentSource,
    /// A title for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Context about the document for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The citations setting, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Value>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// `{"type":"tool_use","id":...,"name":...,"input":{...}}`: the model calls a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    /// The call's id (`toolu_…`), echoed by its result.
    pub id: String,
    /// The tool called.
    pub name: String,
    /// The call's input.
    pub input: Value,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// A tool result's content: a plain string or content blocks (text, image, document).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// Text.
    Text(String),
    /// Content blocks (text, images).
    Blocks(Vec<ContentBlock>),
}

/// `{"type":"tool_result","tool_use_id":...,"content":...,"is_error":...}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// The id of the call it answers.
    pub tool_use_id: String,
    /// What the tool returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<ToolResultContent>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// A cache breakpoint after this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// `{"type":"tool_reference","tool_name":...}`: inside a `tool_result`'s content, it loads a
/// deferred tool (one sent with `defer_loading: true`): the API expands the tool's definition
/// where the reference stands, outside the cached prefix of tools and system (the Messages API's
/// tool search). A result holding references holds nothing else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolReferenceBlock {
    /// The deferred tool loaded.
    pub tool_name: String,
}

/// `{"type":"thinking","thinking":...,"signature":...}`. Must be sent back unchanged (signature
/// included) when continuing a tool-use turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ThinkingBlock {
    /// The model's reasoning.
    pub thinking: String,
    /// The signature the API checks when the block is sent back.
    #[serde(default)]
    pub signature: String,
}

/// `{"type":"redacted_thinking","data":...}`: encrypted thinking, echoed back verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RedactedThinkingBlock {
    /// The encrypted reasoning, sent back as is.
    pub data: String,
}

/// One content block of a message, in either direction.
///
/// Block types this crate does not know (server tools, future additions) deserialize into
/// [`ContentBlock::Unknown`] holding the JSON object as received, and serialize back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text(TextBlock),
    /// An image.
    Image(ImageBlock),
    /// A document (PDF, text).
    Document(DocumentBlock),
    /// A tool call.
    ToolUse(ToolUseBlock),
    /// A tool call's result.
    ToolResult(ToolResultBlock),
    /// Extended thinking.
    Thinking(ThinkingBlock),
    /// Redacted extended thinking.
    RedactedThinking(RedactedThinkingBlock),
    /// A deferred tool loaded by a tool result (ToolSearch's).
    ToolReference(ToolReferenceBlock),
    /// A block type this client does not know, kept as received.
    #[serde(untagged)]
    Unknown(Value),
}

impl ContentBlock {
    /// A plain text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextBlock::new(text))
    }

    /// A tool call block.
    pub fn tool_use(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self::ToolUse(ToolUseBlock {
            id: id.into(),
            name: name.into(),
            input,
            cache_control: None,
        })
    }

    /// A tool result with string content.
    pub fn tool_result(
        tool_use_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Self::ToolResult(ToolResultBlock {
            tool_use_id: tool_use_id.into(),
            content: Some(ToolResultContent::Text(content.into())),
            is_error: is_error.then_some(true),
            cache_control: None,
        })
    }

    /// A reference to the deferred tool `name` (for a tool result's content).
    pub fn tool_reference(name: impl Into<String>) -> Self {
        Self::ToolReference(ToolReferenceBlock {
            tool_name: name.into(),
        })
    }

    /// The block's `cache_control`, for block types that can carry one.
    pub fn cache_control(&self) -> Option<&CacheControl> {
        match self {
            Self::Text(b) => b.cache_control.as_ref(),
            Self::Image(b) => b.cache_control.as_ref(),
            Self::Document(b) => b.cache_control.as_ref(),
            Self::ToolUse(b) => b.cache_control.as_ref(),
            Self::ToolResult(b) => b.cache_control.as_ref(),
            Self::Thinking(_)
            | Self::RedactedThinking(_)
            | Self::ToolReference(_)
            | Self::Unknown(_) => None,
        }
    }

    /// Set (or clear) the block's `cache_control`. Returns false for block types that cannot carry
    /// one (thinking blocks); an unknown block gets the field set on its JSON object.
    pub fn set_cache_control(&mut self, cache_control: Option<CacheControl>) -> bool {
        match self {
            Self::Text(b) => b.cache_control = cache_control,
            Self::Image(b) => b.cache_control = cache_control,
            Self::Document(b) => b.cache_control = cache_control,
            Self::ToolUse(b) => b.cache_control = cache_control,
            Self::ToolResult(b) => b.cache_control = cache_control,
            // A reference lives inside a tool result, whose own marker is the one used.
            Self::Thinking(_) | Self::RedactedThinking(_) | Self::ToolReference(_) => {
                return false;
            }
            Self::Unknown(value) => {
                let Some(object) = value.as_object_mut() else {
                    return false;
                };
                match cache_control.and_then(|c| serde_json::to_value(c).ok()) {
                    Some(v) => {
                        object.insert("cache_control".to_owned(), v);
                    }
                    None => {
                        object.shift_remove("cache_control");
                    }
                }
            }
        }
        true
    }
}

/// A message's content: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// A plain string.
    Text(String),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}

impl From<String> for MessageContent {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for MessageContent {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<Vec<ContentBlock>> for MessageContent {
    fn from(blocks: Vec<ContentBlock>) -> Self {
        Self::Blocks(blocks)
    }
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: MessageContent,
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<MessageContent>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<MessageContent>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

//! Wire types of `POST /v1/messages` (request side and the content blocks both directions share).
//!
//! Field order in every struct is the order on the wire: serde serializes in declaration order,
//! and [`MessagesRequest::to_json_bytes`] relies on that for byte-stable requests (a fork's
//! prompt-cache hit depends on it). `None` fields are skipped. Unknown fields from the server are
//! ignored; unknown content-block types are kept verbatim in [`ContentBlock::Unknown`] so they
//! can be echoed back unchanged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool_array::ToolArray;
use crate::usage::Usage;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person (and tool results).
    User,
    /// The model.
    Assistant,
}

/// How long a prompt-cache entry lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CacheTtl {
    /// Five minutes (the default).
    #[serde(rename = "5m")]
    FiveMinutes,
    /// One hour.
    #[serde(rename = "1h")]
    OneHour,
}

/// The kind of a cache breakpoint; the API knows only `ephemeral`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CacheControlType {
    /// The only kind the API has.
    #[default]
    Ephemeral,
}

/// `cache_control: {type: "ephemeral", ttl?: "5m" | "1h"}`: marks a prompt-cache breakpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct CacheControl {
    /// The kind of breakpoint (`ephemeral`).
    #[serde(rename = "type")]
    pub kind: CacheControlType,
    /// How long the entry lives; `None`: five minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<CacheTtl>,
}

impl CacheControl {
    /// A breakpoint with the default (5 minute) lifetime; `ttl` is omitted on the wire.
    pub fn ephemeral() -> Self {
        Self {
            kind: CacheControlType::Ephemeral,
            ttl: None,
        }
    }

    /// A breakpoint with an explicit lifetime.
    pub fn with_ttl(ttl: CacheTtl) -> Self {
        Self {
            kind: CacheControlType::Ephemeral,
            ttl: Some(ttl),
        }
    }
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

    /// The block's `cache_control`, for block types that can carry one.
    pub fn cache_control(&self) -> Option<&CacheControl> {
        match self {
            Self::Text(b) => b.cache_control.as_ref(),
            Self::Image(b) => b.cache_control.as_ref(),
            Self::Document(b) => b.cache_control.as_ref(),
            Self::ToolUse(b) => b.cache_control.as_ref(),
            Self::ToolResult(b) => b.cache_control.as_ref(),
            Self::Thinking(_) | Self::RedactedThinking(_) | Self::Unknown(_) => None,
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
            Self::Thinking(_) | Self::RedactedThinking(_) => return false,
            Self::Unknown(value) => {
                let Some(object) = value.as_object_mut() else {
                    return false;
                };
                match cache_control.and_then(|c| serde_json::to_value(c).ok()) {
                    Some(v) => {
                        object.insert("cache_control".to_owned(), v);
                    }
                    None => {
                        object.remove("cache_control");
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

    pub fn serialize<S: Serializer>(
        blocks: &[TextBlock],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(blocks.iter().map(TaggedRef::Text))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
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

/// A client tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: Value,
    /// A cache breakpoint after this definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
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

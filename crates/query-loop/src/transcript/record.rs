//! One line of a transcript: a JSON object with an envelope (`uuid`, `parentUuid`, `sessionId`,
//! `timestamp`, `cwd`, `type`, ...) and either a conversation `message` or a `data` payload.
//!
//! Conversation records carry the whole envelope, as Claude Code writes it. Annotations are
//! written after every request, so their envelope is cut to what a reader uses: `type`,
//! `parentUuid` (the message they follow) and `timestamp`. Nothing refers to an annotation's
//! own uuid, the session id is the file's name, and the working directory is on every
//! conversation record. Records that have them (older files) read the same.
//!
//! Readers must keep working when upper layers add record kinds (`transition`, `summary`,
//! `cache_hashes`, ...): an unknown `type` parses as [`RecordType::Other`] and unknown fields
//! are ignored.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use tine_api_client::Message;

use tine_config::SessionId;

/// What a record is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RecordType {
    /// A user turn (prompt or tool results); carries `message`.
    User,
    /// A model response; carries `message`.
    Assistant,
    /// A conversation event that is not an API message (compact boundary, notice); in the chain.
    System,
    /// Any other kind (`transition`, `summary`, `cache_hashes`, ...): annotations outside the
    /// conversation chain whose `parentUuid` names the message they follow.
    Other(String),
}

impl RecordType {
    /// The type as written (`user`, `assistant`, `system`, ...).
    pub fn as_str(&self) -> &str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::System => "system",
            Self::Other(other) => other,
        }
    }

    /// Whether records of this type form the conversation chain (linked by `parentUuid`).
    pub fn is_conversation(&self) -> bool {
        match self {
            Self::User | Self::Assistant | Self::System => true,
            Self::Other(_) => false,
        }
    }

    fn from_tag(tag: &str) -> Self {
        match tag {
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "system" => Self::System,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for RecordType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RecordType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let tag = String::deserialize(d)?;
        Ok(Self::from_tag(&tag))
    }
}

/// One transcript line as read back. Field order here is the key order on disk (the writer's
/// borrowed twin, `RecordRef`, must keep the same order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptRecord {
    /// The record's type.
    #[serde(rename = "type")]
    pub kind: RecordType,
    /// Empty on annotations written since they stopped carrying one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uuid: String,
    /// The previous conversation record (`null` for the first).
    pub parent_uuid: Option<String>,
    /// On conversation records (annotations leave it out: it is the file's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// On conversation records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// True in a sub-agent's transcript.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_sidechain: bool,
    /// In a sub-agent's transcript: its agent id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Present on `user` and `assistant` records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// Payload of `system` and other record kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

/// The writer's view of a record: borrows the message and payload instead of cloning them, and
/// serializes to exactly the bytes a [`TranscriptRecord`] with the same values would.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecordRef<'a> {
    #[serde(rename = "type")]
    pub kind: &'a RecordType,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub uuid: &'a str,
    pub parent_uuid: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a SessionId>,
    pub timestamp: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_sidechain: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a Message>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<&'a serde_json::Value>,
}

impl<'a> From<&'a TranscriptRecord> for RecordRef<'a> {
    fn from(r: &'a TranscriptRecord) -> Self {
        Self {
            kind: &r.kind,
            uuid: &r.uuid,
            parent_uuid: r.parent_uuid.as_deref(),
            session_id: r.session_id.as_ref(),
            timestamp: &r.timestamp,
            cwd: r.cwd.as_deref(),
            is_sidechain: r.is_sidechain,
            agent_id: r.agent_id.as_deref(),
            message: r.message.as_ref(),
            data: r.data.as_ref(),
        }
    }
}

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactTrigger {
    /// The context crossed the auto-compaction threshold before a request.
    Auto,
    /// The user asked (`/compact`).
    Manual,
    /// The API answered "prompt is too long".
    Reactive,
}

impl CompactTrigger {
    /// The trigger as written (`auto`, `manual`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Manual => "manual",
            Self::Reactive => "reactive",
        }
    }
}

impl fmt::Display for CompactTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the model no longer sees verbatim after a compaction: what `/compact log` shows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DroppedContext {
    /// The user's own messages (prompts, not tool results) that were summarized.
    pub user_messages: usize,
    /// The start of each of them, oldest first.
    pub user_prompts: Vec<String>,
    /// Files the Read tool read in the summarized part, oldest first, each once.
    pub files_read: Vec<String>,
    /// Tool calls in the summarized part, by tool name.
    pub tool_calls: std::collections::BTreeMap<String, usize>,
}

/// The payload of the `system` record written where compaction replaced the history (its
/// `subtype` is `compact_boundary`). Resume starts at the last one; the records before it stay
/// in the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactBoundary {
    /// Automatic, reactive or manual.
    pub trigger: CompactTrigger,
    /// The context size before (estimated from the last usage) and after (estimated).
    pub tokens_before: u64,
    /// The context size after (estimated).
    pub tokens_after: u64,
    /// Messages the summary replaced.
    pub messages_summarized: usize,
    /// The oldest API rounds left out of the summary because even the summary request was too
    /// long (0 normally).
    #[serde(default)]
    pub rounds_dropped: usize,
    /// What the summarized part held (files read, tools used, prompts).
    #[serde(default)]
    pub dropped: DroppedContext,
    /// What the user asked the summary to keep (`/compact FOCUS`) and what PreCompact hooks
    /// added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// Files re-attached after the summary.
    #[serde(default)]
    pub files_reattached: Vec<String>,
    /// The summary request's prompt and how much of it was read from the cache.
    #[serde(default)]
    pub summary_prompt_tokens: u64,
    /// Of `summary_prompt_tokens`, those read from the cache.
    #[serde(default)]
    pub summary_cache_read_tokens: u64,
}

impl CompactBoundary {
    /// The record's `data`: the boundary with its `subtype`.
    pub fn to_data(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let serde_json::Value::Object(map) = &mut value {
            map.insert(
                "subtype".to_owned(),
                serde_json::Value::String(super::COMPACT_BOUNDARY.to_owned()),
            );
        }
        value
    }

    /// The boundary a record holds, if it is one (records of older versions carry only a
    /// message count: their fields default).
    pub fn from_record(record: &TranscriptRecord) -> Option<Self> {
        if !super::is_compact_boundary(record) {
            return None;
        }
        let data = record.data.as_ref()?;
        if let Ok(boundary) = serde_json::from_value::<Self>(data.clone()) {
            return Some(boundary);
        }
        let messages = data
            .get("messages")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        Some(Self {
            trigger: CompactTrigger::Auto,
            tokens_before: 0,
            tokens_after: 0,
            messages_summarized: usize::try_from(messages).unwrap_or(usize::MAX),
            rounds_dropped: 0,
            dropped: DroppedContext::default(),
            focus: None,
            files_reattached: Vec::new(),
            summary_prompt_tokens: 0,
            summary_cache_read_tokens: 0,
        })
    }
}

//! Extraction's cursor: where the last successful run stopped, so the next one looks only at
//! what is new (seed 003 §十, `lastMemoryMessageUuid`).
//!
//! It is a message count plus the hash of the message at it: if that message is gone or
//! changed (compaction rewrote the history), every message counts as new, never none.
//!
//! It is kept in the session's transcript as a `memory_cursor` annotation, written when a run
//! completes, and read back on resume ([`crate::ExtractionJob::restore`]): a `tine -c` session
//! then extracts only what came after the run before it, instead of the whole history again.
//! The resumed history is the transcript's messages, the same bytes the run hashed.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tine_api_client::Message;

/// The transcript annotation kind of a cursor.
pub(crate) const MEMORY_CURSOR_KIND: &str = "memory_cursor";

/// Where the last successful run stopped: `count` messages, the last of which hashed to `hash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub count: usize,
    pub hash: [u8; 32],
}

/// The annotation's payload: `{"count": 12, "hash": "<64 hex>"}`.
#[derive(Serialize, Deserialize)]
struct CursorRecord {
    count: usize,
    hash: String,
}

impl Cursor {
    /// The cursor after `messages` (none for an empty history).
    pub(crate) fn after(messages: &[Message]) -> Option<Self> {
        messages.last().map(|last| Self {
            count: messages.len(),
            hash: message_hash(last),
        })
    }

    /// Where the messages after the cursor start in `messages` (0 when it no longer fits).
    pub(crate) fn start_in(cursor: Option<&Self>, messages: &[Message]) -> usize {
        let Some(cursor) = cursor else {
            return 0;
        };
        match cursor.count.checked_sub(1).and_then(|i| messages.get(i)) {
            Some(message) if message_hash(message) == cursor.hash => cursor.count,
            _ => 0,
        }
    }

    pub(crate) fn to_annotation(&self) -> Value {
        serde_json::to_value(CursorRecord {
            count: self.count,
            hash: hex(&self.hash),
        })
        .unwrap_or(Value::Null)
    }

    /// The cursor in an annotation's payload; `None` when it is not one (then it is ignored).
    pub(crate) fn from_annotation(data: &Value) -> Option<Self> {
        let record = CursorRecord::deserialize(data).ok()?;
        let hash = unhex(&record.hash)?;
        (record.count > 0).then_some(Self {
            count: record.count,
            hash,
        })
    }
}

/// The stable hash of one message (its JSON, keys sorted: the same whatever order a tool
/// input's keys were read in).
pub(crate) fn message_hash(message: &Message) -> [u8; 32] {
    let mut value = serde_json::to_value(message).unwrap_or_default();
    value.sort_all_objects();
    let bytes = serde_json::to_vec(&value).unwrap_or_default();
    Sha256::digest(&bytes).into()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tine_api_client::ContentBlock;

    #[test]
    fn a_cursor_round_trips_through_its_annotation() {
        let messages = vec![
            Message::user(vec![ContentBlock::text("we use PostgreSQL 16")]),
            Message::assistant(vec![ContentBlock::text("noted")]),
        ];
        let cursor = Cursor::after(&messages).unwrap();
        let data = cursor.to_annotation();
        assert_eq!(data["count"], 2);
        assert_eq!(Cursor::from_annotation(&data), Some(cursor.clone()));
        assert_eq!(Cursor::start_in(Some(&cursor), &messages), 2);
        for bad in [
            json!({"count": 2}),
            json!({"count": 2, "hash": "zz"}),
            json!({"count": 0, "hash": hex(&[0; 32])}),
            json!("cursor"),
        ] {
            assert_eq!(Cursor::from_annotation(&bad), None, "{bad}");
        }
    }
}

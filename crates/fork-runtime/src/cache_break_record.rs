//! The `cache_hashes` transcript annotation, written after every main-thread request: what the
//! detector of a later process needs to compare its first request, in constant size per request.
//!
//! Each record holds the part hashes (model, system, thinking), the tool hashes only when the
//! tool array changed since the record before, and the per-message running hashes only from
//! the first message that changed (`from`): in a growing conversation, the two or three new
//! messages. The full fingerprint is rebuilt by replaying the records in file order
//! ([`replay`]). Records written before this format (a whole [`CacheHashes`] with every
//! message's hash, the transcript growing with the square of its length) are still read: each
//! is a full fingerprint.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tine_api_client::Usage;

use super::{CacheHashes, RequestFingerprint, ToolHash};

/// The format tag of a delta record.
const DELTA_FORMAT: u32 = 2;

/// One request's annotation, relative to the one written before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HashesRecord {
    /// [`DELTA_FORMAT`].
    pub v: u32,
    pub model: String,
    pub system: String,
    /// The tool hashes, present only when they differ from the previous record's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolHash>>,
    pub thinking: String,
    /// How many leading messages are the previous record's (their running hashes are equal).
    pub from: usize,
    /// The running hashes of the messages from `from` on.
    pub messages: Vec<String>,
    pub prompt_bytes: u64,
    pub usage: Usage,
}

impl HashesRecord {
    /// The record of `current`, against `previous`, the fingerprint of the last record written
    /// (`None`: this record stands alone).
    pub fn new(current: &CacheHashes, previous: Option<&RequestFingerprint>) -> Self {
        let print = &current.fingerprint;
        let (tools, from) = match previous {
            None => (Some(print.tools.clone()), 0),
            Some(before) => {
                let tools = (before.tools != print.tools).then(|| print.tools.clone());
                let from = print
                    .messages
                    .iter()
                    .zip(&before.messages)
                    .take_while(|(a, b)| a == b)
                    .count();
                (tools, from)
            }
        };
        Self {
            v: DELTA_FORMAT,
            model: print.model.clone(),
            system: print.system.clone(),
            tools,
            thinking: print.thinking.clone(),
            from,
            messages: print.messages[from..].to_vec(),
            prompt_bytes: print.prompt_bytes,
            usage: current.usage,
        }
    }

    /// The full fingerprint, given the one rebuilt from the records before; `None` when they
    /// do not hold what this record builds on (a record lost or unreadable).
    fn rebuild(self, before: Option<&CacheHashes>) -> Option<CacheHashes> {
        let tools = match self.tools {
            Some(tools) => tools,
            None => before?.fingerprint.tools.clone(),
        };
        let mut messages = match before {
            Some(before) if before.fingerprint.messages.len() >= self.from => {
                before.fingerprint.messages[..self.from].to_vec()
            }
            _ if self.from == 0 => Vec::new(),
            _ => return None,
        };
        messages.extend(self.messages);
        Some(CacheHashes {
            fingerprint: RequestFingerprint {
                model: self.model,
                system: self.system,
                tools,
                thinking: self.thinking,
                messages,
                prompt_bytes: self.prompt_bytes,
            },
            usage: self.usage,
        })
    }
}

/// The fingerprint after the record `data`, given the one before it. An unreadable record, or
/// one whose base is unknown, gives `None`: nothing to compare against until a record that
/// stands alone.
pub(crate) fn replay(before: Option<&CacheHashes>, data: &Value) -> Option<CacheHashes> {
    if data.get("fingerprint").is_some() {
        // The old format: every record is a whole fingerprint.
        return match serde_json::from_value::<CacheHashes>(data.clone()) {
            Ok(hashes) => Some(hashes),
            Err(error) => {
                tracing::debug!(%error, "skipping an unreadable cache_hashes record");
                None
            }
        };
    }
    match HashesRecord::deserialize(data) {
        Ok(record) if record.v == DELTA_FORMAT => {
            let rebuilt = record.rebuild(before);
            if rebuilt.is_none() {
                tracing::debug!("a cache_hashes record builds on one that is missing");
            }
            rebuilt
        }
        Ok(record) => {
            tracing::debug!(format = record.v, "unknown cache_hashes format");
            None
        }
        Err(error) => {
            tracing::debug!(%error, "skipping an unreadable cache_hashes record");
            None
        }
    }
}

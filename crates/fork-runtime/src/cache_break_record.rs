//! The `cache_hashes` transcript annotation, written after every main-thread request: what the
//! detector of a later process needs to compare its first request, in constant size per request.
//!
//! Each record holds what changed since the record before it: the part hashes (model, system,
//! thinking) and the tool hashes only when they changed, and the per-message running hashes
//! only from the first message that changed (`from`): in a growing conversation, the two or
//! three new messages. Of the usage it keeps the two figures the detector compares (`read`,
//! `written`: cache tokens read and written). The full fingerprint is rebuilt by replaying
//! the records in file order ([`replay`]).
//!
//! Older formats are still read: `v: 2` records (every part hash and the whole usage each
//! time), and before them a whole [`CacheHashes`] with every message's hash (the transcript
//! growing with the square of its length), each a full fingerprint.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tine_api_client::Usage;

use super::{CacheHashes, RequestFingerprint, ToolHash};

/// The format written now.
const FORMAT: u32 = 3;
/// The first delta format: parts and usage in full on every record.
const FORMAT_V2: u32 = 2;

/// One request's annotation, relative to the one written before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct HashesRecord {
    /// [`FORMAT`] (or [`FORMAT_V2`] in older transcripts).
    pub v: u32,
    /// The parts, each present only when it differs from the previous record's (always in v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolHash>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// How many leading messages are the previous record's (their running hashes are equal).
    pub from: usize,
    /// The running hashes of the messages from `from` on.
    pub messages: Vec<String>,
    pub prompt_bytes: u64,
    /// Cache tokens the request read (v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<u64>,
    /// Cache tokens the request wrote (v3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<u64>,
    /// The whole usage (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// `current` where it differs from `previous`, else `None` (and everything without a previous).
fn changed<T: PartialEq + Clone>(current: &T, previous: Option<&T>) -> Option<T> {
    (previous != Some(current)).then(|| current.clone())
}

impl HashesRecord {
    /// The record of `current`, against `previous`, the fingerprint of the last record written
    /// (`None`: this record stands alone).
    pub(super) fn new(current: &CacheHashes, previous: Option<&RequestFingerprint>) -> Self {
        let print = &current.fingerprint;
        let from = previous.map_or(0, |before| {
            print
                .messages
                .iter()
                .zip(&before.messages)
                .take_while(|(a, b)| a == b)
                .count()
        });
        Self {
            v: FORMAT,
            model: changed(&print.model, previous.map(|p| &p.model)),
            system: changed(&print.system, previous.map(|p| &p.system)),
            tools: changed(&print.tools, previous.map(|p| &p.tools)),
            thinking: changed(&print.thinking, previous.map(|p| &p.thinking)),
            from,
            messages: print.messages[from..].to_vec(),
            prompt_bytes: print.prompt_bytes,
            read: Some(current.usage.cache_read_input_tokens),
            written: Some(current.usage.cache_creation_input_tokens),
            usage: None,
        }
    }

    /// The full fingerprint, given the one rebuilt from the records before (taken and changed
    /// in place: replaying a transcript costs what its records hold, not the square of its
    /// length); `None` when they do not hold what this record builds on (a record lost or
    /// unreadable).
    fn rebuild(self, before: Option<CacheHashes>) -> Option<CacheHashes> {
        let usage = match (self.usage, self.read, self.written) {
            (Some(usage), ..) => usage,
            (None, Some(read), Some(written)) => Usage {
                cache_read_input_tokens: read,
                cache_creation_input_tokens: written,
                ..Usage::default()
            },
            _ => return None,
        };
        let based = before.is_some();
        let mut print = match before {
            Some(before) => before.fingerprint,
            None => RequestFingerprint {
                model: String::new(),
                system: String::new(),
                tools: Vec::new(),
                thinking: String::new(),
                messages: Vec::new(),
                prompt_bytes: 0,
            },
        };
        // A part this record leaves out is the one before it: without a base, unknown.
        let parts = [
            (self.model, &mut print.model),
            (self.system, &mut print.system),
            (self.thinking, &mut print.thinking),
        ];
        for (own, part) in parts {
            match own {
                Some(own) => *part = own,
                None if based => {}
                None => return None,
            }
        }
        match self.tools {
            Some(tools) => print.tools = tools,
            None if based => {}
            None => return None,
        }
        if print.messages.len() < self.from {
            return None;
        }
        print.messages.truncate(self.from);
        print.messages.extend(self.messages);
        print.prompt_bytes = self.prompt_bytes;
        Some(CacheHashes {
            fingerprint: print,
            usage,
        })
    }
}

/// The fingerprint after the record `data`, given the one before it (changed in place). An
/// unreadable record, or one whose base is unknown, gives `None`: nothing to compare against
/// until a record that stands alone.
pub(crate) fn replay(before: Option<CacheHashes>, data: &Value) -> Option<CacheHashes> {
    if data.get("fingerprint").is_some() {
        // The first format: every record is a whole fingerprint.
        return match serde_json::from_value::<CacheHashes>(data.clone()) {
            Ok(hashes) => Some(hashes),
            Err(error) => {
                tracing::debug!(%error, "skipping an unreadable cache_hashes record");
                None
            }
        };
    }
    match HashesRecord::deserialize(data) {
        Ok(record) if record.v == FORMAT || record.v == FORMAT_V2 => {
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

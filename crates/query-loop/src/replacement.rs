//! Content replacement: a tool result too large to keep resending is replaced by a preview,
//! and the decision for each `tool_use_id` is made once and then frozen. A result that went out
//! whole stays whole forever (changing it would break the cache prefix); only results the
//! state has never seen may be replaced. A fork gets a clone of the parent's state (seed 000
//! §四), so it makes the same decisions for the same ids and its prefix serializes the same.
//!
//! A decision an upper layer makes later (micro-compaction clearing old results once the cache
//! is cold) cannot be made again from the result alone, so the engine writes it to the
//! transcript ([`REPLACEMENTS_KIND`]) and a resumed session takes it back: its first request
//! then repeats the live one's prefix byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use tine_api_client::{ContentBlock, Message, MessageContent, ToolResultContent};

use crate::transcript::TranscriptRecord;

/// A tool result longer than this (in characters) is replaced when first sent.
pub const MAX_TOOL_RESULT_CHARS: usize = 100_000;
/// How much of a replaced result the model still sees.
pub const PREVIEW_CHARS: usize = 2_000;

/// The frozen decision for each tool result seen so far: `None` kept whole, `Some(text)`
/// replaced by `text`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContentReplacementState {
    /// By `tool_use_id`: `None` kept whole, `Some(text)` replaced by `text`.
    pub decisions: BTreeMap<String, Option<String>>,
}

/// The transcript annotation that records replaced results: `{"replaced": {id: text}}`.
pub(crate) const REPLACEMENTS_KIND: &str = "content_replacement";

/// The state as sessions and forks hold it.
pub type SharedReplacements = Arc<Mutex<ContentReplacementState>>;

impl ContentReplacementState {
    /// How many results were replaced.
    pub fn replaced(&self) -> usize {
        self.decisions.values().filter(|d| d.is_some()).count()
    }

    /// Decides what each tool result of `messages` looks like on the wire, recording a decision
    /// for every id not seen before, and rewrites the replaced ones in place.
    pub fn apply(&mut self, messages: &mut [Message]) {
        for message in messages {
            let MessageContent::Blocks(blocks) = &mut message.content else {
                continue;
            };
            for block in blocks {
                let ContentBlock::ToolResult(result) = block else {
                    continue;
                };
                let decision = self
                    .decisions
                    .entry(result.tool_use_id.clone())
                    .or_insert_with(|| decide(result.content.as_ref()));
                if let Some(text) = decision {
                    result.content = Some(ToolResultContent::Text(text.clone()));
                }
            }
        }
    }
}

impl ContentReplacementState {
    /// The replaced results not in `recorded`, as a [`REPLACEMENTS_KIND`] annotation's data
    /// (`None` when there are none); they join `recorded`.
    pub(crate) fn unrecorded(&self, recorded: &mut BTreeSet<String>) -> Option<serde_json::Value> {
        let fresh: serde_json::Map<String, serde_json::Value> = self
            .decisions
            .iter()
            .filter_map(|(id, d)| Some((id, d.as_ref()?)))
            .filter(|(id, _)| recorded.insert((*id).clone()))
            .map(|(id, text)| (id.clone(), serde_json::Value::String(text.clone())))
            .collect();
        (!fresh.is_empty()).then(|| serde_json::json!({ "replaced": fresh }))
    }

    /// Takes back the decisions a [`REPLACEMENTS_KIND`] annotation recorded (other records
    /// are left alone); returns the ids restored.
    pub(crate) fn restore(&mut self, record: &TranscriptRecord) -> Vec<String> {
        if record.kind.as_str() != REPLACEMENTS_KIND {
            return Vec::new();
        }
        let Some(replaced) = record
            .data
            .as_ref()
            .and_then(|d| d.get("replaced"))
            .and_then(serde_json::Value::as_object)
        else {
            return Vec::new();
        };
        let mut restored = Vec::new();
        for (id, text) in replaced {
            if let Some(text) = text.as_str() {
                self.decisions.insert(id.clone(), Some(text.to_owned()));
                restored.push(id.clone());
            }
        }
        restored
    }
}

/// Locks a shared state (a poisoned lock still holds usable decisions).
pub fn lock(state: &SharedReplacements) -> std::sync::MutexGuard<'_, ContentReplacementState> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

fn decide(content: Option<&ToolResultContent>) -> Option<String> {
    let Some(ToolResultContent::Text(text)) = content else {
        return None;
    };
    let chars = text.chars().count();
    if chars <= MAX_TOOL_RESULT_CHARS {
        return None;
    }
    let preview: String = text.chars().take(PREVIEW_CHARS).collect();
    Some(format!(
        "{preview}\n\n[Output too large to keep in the conversation: {chars} characters, only the first \
         {PREVIEW_CHARS} are shown. Re-run with a narrower query (a line range, a pattern, head/tail) \
         to see the rest.]"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::RecordType;

    fn result_msg(id: &str, text: &str) -> Message {
        Message::user(vec![ContentBlock::tool_result(id, text, false)])
    }

    fn text_of(m: &Message) -> String {
        match &m.content {
            MessageContent::Blocks(b) => match &b[0] {
                ContentBlock::ToolResult(r) => match &r.content {
                    Some(ToolResultContent::Text(t)) => t.clone(),
                    _ => String::new(),
                },
                _ => String::new(),
            },
            MessageContent::Text(t) => t.clone(),
        }
    }

    #[test]
    fn a_huge_result_is_replaced_and_a_small_one_kept() {
        let big = "x".repeat(MAX_TOOL_RESULT_CHARS + 1);
        let mut msgs = vec![result_msg("a", &big), result_msg("b", "small")];
        let mut state = ContentReplacementState::default();
        state.apply(&mut msgs);
        assert!(text_of(&msgs[0]).contains("Output too large"));
        assert!(text_of(&msgs[0]).len() < 3_000);
        assert_eq!(text_of(&msgs[1]), "small");
        assert_eq!(state.replaced(), 1);
    }

    #[test]
    fn decisions_are_frozen_per_id() {
        let mut state = ContentReplacementState::default();
        state.apply(&mut [result_msg("a", "short")]);
        // the same id later carrying a huge text (it cannot, but a rule change could) stays whole
        let big = "y".repeat(MAX_TOOL_RESULT_CHARS * 2);
        let mut again = vec![result_msg("a", &big)];
        state.apply(&mut again);
        assert_eq!(text_of(&again[0]).len(), big.len());
    }

    #[test]
    fn a_clone_makes_the_same_decisions_as_its_parent() {
        let big = "z".repeat(MAX_TOOL_RESULT_CHARS + 10);
        let mut parent = ContentReplacementState::default();
        let mut parent_msgs = vec![result_msg("a", &big)];
        parent.apply(&mut parent_msgs);
        let mut fork = parent.clone();
        let mut fork_msgs = vec![result_msg("a", &big), result_msg("c", "new")];
        fork.apply(&mut fork_msgs);
        assert_eq!(parent_msgs[0], fork_msgs[0]);
    }

    #[test]
    fn replaced_results_are_recorded_once_and_restored() {
        let mut state = ContentReplacementState::default();
        state.decisions.insert("kept".into(), None);
        state.decisions.insert("a".into(), Some("cleared".into()));
        let mut recorded = BTreeSet::new();
        let data = state.unrecorded(&mut recorded).unwrap();
        assert_eq!(data, serde_json::json!({"replaced": {"a": "cleared"}}));
        assert_eq!(state.unrecorded(&mut recorded), None);
        let record = TranscriptRecord {
            kind: RecordType::Other(REPLACEMENTS_KIND.to_owned()),
            uuid: String::new(),
            parent_uuid: None,
            session_id: None,
            timestamp: String::new(),
            cwd: None,
            is_sidechain: false,
            agent_id: None,
            message: None,
            data: Some(data),
        };
        let mut resumed = ContentReplacementState::default();
        assert_eq!(resumed.restore(&record), ["a"]);
        assert_eq!(
            resumed.decisions.get("a"),
            Some(&Some("cleared".to_owned()))
        );
        let other = TranscriptRecord {
            kind: RecordType::Other("transition".to_owned()),
            ..record
        };
        assert!(
            ContentReplacementState::default()
                .restore(&other)
                .is_empty()
        );
    }
}

//! [`DreamRun`], what one dream did: the task's last state, the sessions reviewed, the files
//! changed and removed, the index tidied, and what it cost. It is the dream job's typed
//! outcome; its JSON ([`DreamRun::to_json`]) is the `stream-json` `dream` line's data.

use serde::{Serialize, Serializer};
use serde_json::{Value, json};
use tine_api_client::Usage;

use crate::dream_task::{DreamStatus, DreamTaskState};
use crate::fork_changes::usage_figures;

/// What one dream did.
#[derive(Debug, Clone)]
pub struct DreamRun {
    /// The task's last state (status, phase, files touched, turns).
    pub task: DreamTaskState,
    /// The sessions it was given to review, newest first.
    pub sessions: Vec<String>,
    /// Topic files changed (relative to the memory directory), removed ones included.
    pub files: Vec<String>,
    /// Topic files the dream emptied, which were then removed.
    pub removed: Vec<String>,
    /// Whether `MEMORY.md` changed.
    pub index_updated: bool,
    /// Exact duplicate or dead index lines tine removed after the fork.
    pub index_lines_dropped: usize,
    /// Usage summed over the fork's requests.
    pub usage: Usage,
    /// The first request's usage (its cache read shows the parent's prefix was reused).
    pub first_request_usage: Option<Usage>,
    /// What the fork cost, in US dollars.
    pub cost_usd: f64,
    /// Requests the fork made.
    pub requests: u32,
    /// How the fork ended.
    pub terminal: String,
}

impl DreamRun {
    /// "improved 2 memories: a.md, b.md", or what happened instead.
    pub fn summary(&self) -> String {
        match &self.task.status {
            DreamStatus::Completed { summary } => summary.clone(),
            DreamStatus::Killed => "dream killed; its lock was rolled back".to_owned(),
            DreamStatus::Failed { error } => format!("dream failed: {error}"),
            DreamStatus::Running => "dream running".to_owned(),
        }
    }

    /// Share of the first request's prompt read from the cache.
    pub fn first_request_cache_share(&self) -> Option<f64> {
        self.first_request_usage.map(|u| {
            let total = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
            if total == 0 {
                0.0
            } else {
                u.cache_read_input_tokens as f64 / total as f64
            }
        })
    }

    /// The run as JSON (stream-json's `dream` line).
    pub fn to_json(&self) -> Value {
        let mut task = self.task.to_json();
        if let Value::Object(map) = &mut task {
            map.insert("sessions_reviewed".into(), json!(self.sessions.len()));
            map.insert("sessions".into(), json!(self.sessions));
            map.insert("improved".into(), json!(self.files.len()));
            map.insert("files".into(), json!(self.files));
            map.insert("removed".into(), json!(self.removed));
            map.insert("index_updated".into(), json!(self.index_updated));
            map.insert(
                "index_lines_dropped".into(),
                json!(self.index_lines_dropped),
            );
            map.insert("requests".into(), json!(self.requests));
            map.insert("cost_usd".into(), json!(self.cost_usd));
            map.insert("usage".into(), figures(&self.usage));
            map.insert(
                "first_request_usage".into(),
                self.first_request_usage
                    .as_ref()
                    .map_or(Value::Null, figures),
            );
            map.insert(
                "first_request_cache_share".into(),
                json!(self.first_request_cache_share()),
            );
            map.insert("terminal".into(), json!(self.terminal));
        }
        task
    }
}

impl Serialize for DreamRun {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// A usage as the dream's outcome prints it.
fn figures(usage: &Usage) -> Value {
    usage_figures(usage, serde_json::value::Serializer).unwrap_or(Value::Null)
}

/// "improved 2 memories: a.md, b.md".
pub(crate) fn improved(files: &[String], index_updated: bool) -> String {
    let index = if index_updated { " and the index" } else { "" };
    match files.len() {
        0 if index_updated => "tidied the memory index".to_owned(),
        0 => "nothing to improve".to_owned(),
        1 => format!("improved 1 memory{index}: {}", files[0]),
        n => format!("improved {n} memories{index}: {}", files.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fork_changes::billed_equivalent_input;

    #[test]
    fn the_usage_prints_the_bytes_stream_json_has_always_shown() {
        let usage = Usage {
            input_tokens: 3,
            cache_read_input_tokens: 5000,
            cache_creation_input_tokens: 700,
            output_tokens: 250,
            ..Usage::default()
        };
        let old = json!({
            "input_tokens": usage.input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "output_tokens": usage.output_tokens,
            "billed_equivalent_input": billed_equivalent_input(&usage),
        });
        assert_eq!(
            serde_json::to_string(&figures(&usage)).unwrap(),
            serde_json::to_string(&old).unwrap()
        );
    }
}

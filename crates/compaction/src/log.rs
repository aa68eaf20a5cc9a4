//! `/compact log` and `tine compact log`: what each compaction of a session dropped, read back
//! from the transcript's boundary records, so a person can see what the model no longer knows.

use std::fmt::Write as _;
use std::path::Path;

use tine_config::{SessionId, transcript_path};
use tine_query_loop::{
    CompactBoundary, TranscriptError, TranscriptRecord, latest_session, read_transcript,
};

/// One compaction as the transcript recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    /// When the boundary was written (RFC 3339).
    pub timestamp: String,
    /// The boundary: trigger, tokens before and after, what was dropped.
    pub boundary: CompactBoundary,
}

/// The boundaries among `records`, in order.
pub(crate) fn log_entries(records: &[TranscriptRecord]) -> Vec<LogEntry> {
    records
        .iter()
        .filter_map(|r| {
            CompactBoundary::from_record(r).map(|boundary| LogEntry {
                timestamp: r.timestamp.clone(),
                boundary,
            })
        })
        .collect()
}

/// Why the log could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The directory has no session transcript.
    #[error("no session in {}: nothing has been compacted here yet", .0.display())]
    NoSession(std::path::PathBuf),
    /// The transcript could not be read.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
}

/// The log of `session` (the latest of `cwd` when `None`), for people.
pub async fn compact_log(
    home: &Path,
    cwd: &Path,
    session: Option<SessionId>,
) -> Result<String, LogError> {
    let id = match session {
        Some(id) => id,
        None => latest_session(home, cwd)
            .await?
            .ok_or_else(|| LogError::NoSession(cwd.to_path_buf()))?,
    };
    let path = transcript_path(home, cwd, &id);
    let read = match read_transcript(&path).await {
        Err(TranscriptError::Read { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Err(TranscriptError::SessionNotFound {
                session_id: id.to_string(),
                dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            }
            .into());
        }
        other => other?,
    };
    Ok(format_log(&id, &log_entries(&read.records)))
}

/// The entries as text.
pub(crate) fn format_log(session: &SessionId, entries: &[LogEntry]) -> String {
    let mut out = String::new();
    if entries.is_empty() {
        let _ = writeln!(out, "Session {session} has not been compacted.");
        return out;
    }
    let _ = writeln!(
        out,
        "Session {session}: {} compaction{}",
        entries.len(),
        if entries.len() == 1 { "" } else { "s" }
    );
    for (i, entry) in entries.iter().enumerate() {
        let b = &entry.boundary;
        let _ = writeln!(
            out,
            "\n#{} {} ({}): {} messages, about {} tokens -> {} tokens",
            i + 1,
            entry.timestamp,
            b.trigger,
            b.messages_summarized,
            b.tokens_before,
            b.tokens_after
        );
        let d = &b.dropped;
        let calls: usize = d.tool_calls.values().sum();
        let by_name: Vec<String> = d
            .tool_calls
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        let _ = writeln!(
            out,
            "  dropped: {} user message{}, {} file{} read, {} tool call{}{}",
            d.user_messages,
            plural(d.user_messages),
            d.files_read.len(),
            plural(d.files_read.len()),
            calls,
            plural(calls),
            if by_name.is_empty() {
                String::new()
            } else {
                format!(" ({})", by_name.join(", "))
            }
        );
        if b.rounds_dropped > 0 {
            let _ = writeln!(
                out,
                "  not even summarized: the {} oldest rounds (the summary request was too long)",
                b.rounds_dropped
            );
        }
        for prompt in &d.user_prompts {
            let _ = writeln!(out, "  - user: {prompt}");
        }
        if !d.files_read.is_empty() {
            let _ = writeln!(out, "  files read: {}", d.files_read.join(", "));
        }
        if !b.files_reattached.is_empty() {
            let _ = writeln!(out, "  re-attached: {}", b.files_reattached.join(", "));
        }
        if let Some(focus) = &b.focus {
            let _ = writeln!(out, "  kept on request: {focus}");
        }
        if b.summary_prompt_tokens > 0 {
            let _ = writeln!(
                out,
                "  summary request: {} prompt tokens, {}% read from the cache",
                b.summary_prompt_tokens,
                b.summary_cache_read_tokens * 100 / b.summary_prompt_tokens
            );
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use tine_query_loop::{CompactTrigger, DroppedContext, RecordType};

    use super::*;

    fn record(data: serde_json::Value) -> TranscriptRecord {
        TranscriptRecord {
            kind: RecordType::System,
            uuid: "u".into(),
            parent_uuid: None,
            session_id: Some(SessionId::new_random()),
            timestamp: "2025-01-01T00:00:00.000Z".into(),
            cwd: Some("/w".into()),
            is_sidechain: false,
            agent_id: None,
            message: None,
            data: Some(data),
        }
    }

    #[test]
    fn boundaries_old_and_new_are_listed() {
        let boundary = CompactBoundary {
            trigger: CompactTrigger::Manual,
            tokens_before: 150_000,
            tokens_after: 9_000,
            messages_summarized: 80,
            rounds_dropped: 0,
            dropped: DroppedContext {
                user_messages: 2,
                user_prompts: vec!["fix the bug".into(), "now the tests".into()],
                files_read: vec!["/p/a.rs".into()],
                tool_calls: [("Read".to_owned(), 3), ("Bash".to_owned(), 1)]
                    .into_iter()
                    .collect(),
            },
            focus: Some("the API".into()),
            files_reattached: vec!["/p/a.rs".into()],
            summary_prompt_tokens: 150_000,
            summary_cache_read_tokens: 150_000,
        };
        let records = vec![
            record(serde_json::json!({"subtype": "compact_boundary", "messages": 4})),
            record(serde_json::json!({"subtype": "notice"})),
            record(boundary.to_data()),
        ];
        let entries = log_entries(&records);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].boundary.messages_summarized, 4);
        assert_eq!(entries[1].boundary, boundary);
        let text = format_log(&SessionId::new_random(), &entries);
        assert!(text.contains("2 compactions"), "{text}");
        assert!(
            text.contains("dropped: 2 user messages, 1 file read, 4 tool calls (Bash 1, Read 3)"),
            "{text}"
        );
        assert!(text.contains("- user: fix the bug"));
        assert!(text.contains("100% read from the cache"));
    }
}

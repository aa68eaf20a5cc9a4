//! Resuming from an earlier point and into another session: `--resume-session-at UUID` (the
//! conversation only up to and including that message) and `--fork-session` (the conversation
//! copied into a new session's transcript, the old one left as it was).
//!
//! A fork copies the old transcript's lines as they are (annotations too: memory's cursor,
//! content-replacement decisions, the cache-break detector's hashes), each with the new
//! session id, up to the `at` message when there is one. Lines are in the order they were
//! written, so the copy is the session as it stood then; the fork then resumes like any
//! session, and its first request repeats the old session's prefix byte for byte.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tine_config::{SessionId, private_fs, project_dir, transcript_path};

use super::TranscriptError;

/// Copies session `from`'s transcript into a new one for `to` (which must not exist yet), up
/// to and including the record whose uuid is `at` when given. A line that is not JSON is left
/// out (the reader would skip it too).
pub async fn fork_transcript(
    home: &Path,
    cwd: &Path,
    from: &SessionId,
    to: &SessionId,
    at: Option<&str>,
) -> Result<PathBuf, TranscriptError> {
    let source = transcript_path(home, cwd, from);
    let target = transcript_path(home, cwd, to);
    let (dir, from, to, at) = (
        project_dir(home, cwd),
        from.clone(),
        to.clone(),
        at.map(str::to_owned),
    );
    let written = target.clone();
    tokio::task::spawn_blocking(move || {
        let result = copy_lines(&source, &target, &to, at.as_deref());
        match result {
            Ok(true) => Ok(()),
            Ok(false) => {
                let _ = std::fs::remove_file(&target);
                Err(TranscriptError::MessageNotFound {
                    session_id: from.to_string(),
                    uuid: at.unwrap_or_default(),
                })
            }
            Err(error) => {
                let _ = std::fs::remove_file(&target);
                Err(match error {
                    CopyError::Source(error) if error.kind() == std::io::ErrorKind::NotFound => {
                        TranscriptError::SessionNotFound {
                            session_id: from.to_string(),
                            dir,
                        }
                    }
                    CopyError::Source(error) => TranscriptError::Read {
                        path: source,
                        source: error,
                    },
                    CopyError::Target(source) => TranscriptError::Write {
                        path: target.clone(),
                        source,
                    },
                })
            }
        }
    })
    .await??;
    Ok(written)
}

enum CopyError {
    Source(std::io::Error),
    Target(std::io::Error),
}

/// The copy; `Ok(false)` when `at` was given and no record has it.
fn copy_lines(
    source: &Path,
    target: &Path,
    to: &SessionId,
    at: Option<&str>,
) -> Result<bool, CopyError> {
    let input = std::fs::File::open(source).map_err(CopyError::Source)?;
    if let Some(parent) = target.parent() {
        private_fs::create_dir_all(parent).map_err(CopyError::Target)?;
    }
    if target.exists() {
        return Err(CopyError::Target(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "a transcript with the new session's id already exists",
        )));
    }
    let mut output =
        std::io::BufWriter::new(private_fs::open_append(target).map_err(CopyError::Target)?);
    let new_id = Value::String(to.to_string());
    for line in std::io::BufReader::new(input).lines() {
        let line = line.map_err(CopyError::Source)?;
        let Ok(Value::Object(mut record)) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if record.contains_key("sessionId") {
            record.insert("sessionId".to_owned(), new_id.clone());
        }
        let reached = at.is_some() && record.get("uuid").and_then(Value::as_str) == at;
        let mut bytes =
            serde_json::to_vec(&record).map_err(|e| CopyError::Target(std::io::Error::other(e)))?;
        bytes.push(b'\n');
        output.write_all(&bytes).map_err(CopyError::Target)?;
        if reached {
            output.flush().map_err(CopyError::Target)?;
            return Ok(true);
        }
    }
    output.flush().map_err(CopyError::Target)?;
    Ok(at.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::load_session_at;

    fn line(kind: &str, uuid: &str, parent: Option<&str>, session: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(
            r#"{{"type":"{kind}","uuid":"{uuid}","parentUuid":{parent},"sessionId":"{session}","timestamp":"t","cwd":"/w","message":{{"role":"{kind}","content":"{uuid}"}}}}"#
        )
    }

    /// A session of four messages, an annotation among them, and a torn last line.
    fn session(home: &Path, cwd: &Path, id: &SessionId) -> String {
        let text = [
            line("user", "a", None, id.as_str()),
            line("assistant", "b", Some("a"), id.as_str()),
            r#"{"type":"memory_cursor","uuid":"","parentUuid":"b","timestamp":"t","data":{}}"#
                .to_owned(),
            line("user", "c", Some("b"), id.as_str()),
            line("assistant", "d", Some("c"), id.as_str()),
            "{\"type\":\"user\",\"uu".to_owned(),
        ]
        .join("\n");
        let path = transcript_path(home, cwd, id);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        text
    }

    #[tokio::test]
    async fn a_fork_is_the_old_transcript_under_the_new_id_cut_at_the_message() {
        let home = tempfile::tempdir().unwrap();
        let cwd = Path::new("/w");
        let (from, to) = (SessionId::new_random(), SessionId::new_random());
        let text = session(home.path(), cwd, &from);
        fork_transcript(home.path(), cwd, &from, &to, Some("b"))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(transcript_path(home.path(), cwd, &from)).unwrap(),
            text,
            "the old transcript was changed"
        );
        let resumed = load_session_at(home.path(), cwd, &to, None, |_| {})
            .await
            .unwrap();
        let uuids: Vec<&str> = resumed.chain.iter().map(|r| r.uuid.as_str()).collect();
        assert_eq!(uuids, ["a", "b"]);
        assert!(
            resumed
                .chain
                .iter()
                .all(|r| r.session_id.as_ref() == Some(&to))
        );
        // Uncut, every line but the torn one; a uuid it lacks leaves no file behind.
        let whole = SessionId::new_random();
        fork_transcript(home.path(), cwd, &from, &whole, None)
            .await
            .unwrap();
        let copied = std::fs::read_to_string(transcript_path(home.path(), cwd, &whole)).unwrap();
        assert_eq!(copied.lines().count(), 5);
        let missing = SessionId::new_random();
        let error = fork_transcript(home.path(), cwd, &from, &missing, Some("zz"))
            .await
            .unwrap_err();
        assert!(matches!(error, TranscriptError::MessageNotFound { .. }));
        assert!(!transcript_path(home.path(), cwd, &missing).exists());
    }

    #[tokio::test]
    async fn resuming_at_a_message_ends_the_chain_there() {
        let home = tempfile::tempdir().unwrap();
        let cwd = Path::new("/w");
        let id = SessionId::new_random();
        session(home.path(), cwd, &id);
        let counted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let sink = std::sync::Arc::clone(&counted);
        let resumed = load_session_at(home.path(), cwd, &id, Some("c"), move |_| {
            sink.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .await
        .unwrap();
        let uuids: Vec<&str> = resumed.chain.iter().map(|r| r.uuid.as_str()).collect();
        assert_eq!(uuids, ["a", "b", "c"]);
        // The annotation before `c` was handed over; nothing after it was read.
        assert_eq!(counted.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert!(matches!(
            load_session_at(home.path(), cwd, &id, Some("zz"), |_| {}).await,
            Err(TranscriptError::MessageNotFound { .. })
        ));
    }
}

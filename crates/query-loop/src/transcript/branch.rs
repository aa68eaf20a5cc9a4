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
        let mut bytes = serde_json::to_vec(&record)
            .map_err(|e| CopyError::Target(std::io::Error::other(e)))?;
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

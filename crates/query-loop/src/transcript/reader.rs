//! Reading transcripts back: tolerant line parsing, the conversation chain, and finding the
//! latest session of a directory for `--continue`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use tine_api_client::Message;

use super::{RecordType, TranscriptError, TranscriptRecord, TranscriptWarning};
use crate::paths::legacy::recorded_in;
use crate::paths::{SessionId, project_dir, transcript_path};

/// Every record that parsed, in file order, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct TranscriptRead {
    pub records: Vec<TranscriptRecord>,
    pub warnings: Vec<TranscriptWarning>,
}

/// Reads a whole transcript, off the async runtime. Bad lines are skipped and reported; only
/// I/O failures are errors.
pub async fn read_transcript(path: &Path) -> Result<TranscriptRead, TranscriptError> {
    let owned = path.to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || std::fs::read(&owned))
        .await?
        .map_err(|source| TranscriptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(parse_transcript(&bytes))
}

/// Parses transcript bytes; never fails, never panics.
pub(crate) fn parse_transcript(bytes: &[u8]) -> TranscriptRead {
    let mut read = TranscriptRead::default();
    let ends_with_newline = bytes.last().is_none_or(|b| *b == b'\n');
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    // `split` yields a final empty piece after a trailing newline; it is not a line.
    let count = if ends_with_newline {
        lines.len().saturating_sub(1)
    } else {
        lines.len()
    };
    for (index, line) in lines.iter().take(count).enumerate() {
        let number = index + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<TranscriptRecord>(line) {
            Ok(record) => read.records.push(record),
            Err(_) if number == count && !ends_with_newline => {
                read.warnings.push(TranscriptWarning::TornLastLine {
                    line: number,
                    bytes: line.len(),
                });
            }
            Err(error) => read.warnings.push(TranscriptWarning::CorruptLine {
                line: number,
                error: error.to_string(),
            }),
        }
    }
    read
}

/// A session restored from its transcript: the conversation chain ending at the last message.
#[derive(Debug, Clone)]
pub struct ResumedSession {
    pub session_id: SessionId,
    pub path: PathBuf,
    /// Conversation records (`user`, `assistant`, `system`) from the first to the leaf.
    pub chain: Vec<TranscriptRecord>,
    /// What was skipped while reading, for the user to see.
    pub warnings: Vec<TranscriptWarning>,
}

impl ResumedSession {
    /// The leaf's uuid: pass it as [`super::WriterOptions::parent_uuid`] to keep appending.
    pub fn last_uuid(&self) -> Option<&str> {
        self.chain.last().map(|r| r.uuid.as_str())
    }

    /// The API messages of the chain (`user` and `assistant` records), in order.
    pub fn messages(&self) -> Vec<Message> {
        self.chain
            .iter()
            .filter(|r| matches!(r.kind, RecordType::User | RecordType::Assistant))
            .filter_map(|r| r.message.clone())
            .collect()
    }
}

/// Loads session `session_id` of `cwd` for `--resume`.
pub async fn load_session(
    home: &Path,
    cwd: &Path,
    session_id: &SessionId,
) -> Result<ResumedSession, TranscriptError> {
    let path = transcript_path(home, cwd, session_id);
    let read = match read_transcript(&path).await {
        Ok(read) => read,
        Err(TranscriptError::Read { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Err(TranscriptError::SessionNotFound {
                session_id: session_id.to_string(),
                dir: project_dir(home, cwd),
            });
        }
        Err(other) => return Err(other),
    };
    let TranscriptRead {
        records,
        mut warnings,
    } = read;
    let (chain, broken) = conversation_chain(records);
    warnings.extend(broken);
    Ok(ResumedSession {
        session_id: session_id.clone(),
        path,
        chain,
        warnings,
    })
}

/// The chain ending at the last conversation record, walked back by `parentUuid`. A missing
/// parent ends the walk (reported); a cycle cannot loop. (Sub-agents write their own files, so
/// one file holds one thread: main or sidechain.)
pub(crate) fn conversation_chain(
    records: Vec<TranscriptRecord>,
) -> (Vec<TranscriptRecord>, Option<TranscriptWarning>) {
    let mut conversation: Vec<TranscriptRecord> = records
        .into_iter()
        .filter(|r| r.kind.is_conversation())
        .collect();
    let Some(leaf) = conversation.len().checked_sub(1) else {
        return (Vec::new(), None);
    };
    let by_uuid: HashMap<&str, usize> = conversation
        .iter()
        .enumerate()
        .map(|(i, r)| (r.uuid.as_str(), i))
        .collect();
    let mut order = vec![leaf];
    let mut seen = HashSet::from([leaf]);
    let mut warning = None;
    let mut current = leaf;
    while let Some(parent) = conversation[current].parent_uuid.as_deref() {
        match by_uuid.get(parent) {
            Some(&index) if seen.insert(index) => {
                order.push(index);
                current = index;
            }
            Some(_) => break,
            None => {
                warning = Some(TranscriptWarning::BrokenChain {
                    missing_uuid: parent.to_owned(),
                });
                break;
            }
        }
    }
    order.reverse();
    let mut slots: Vec<Option<TranscriptRecord>> = conversation.drain(..).map(Some).collect();
    let chain = order.into_iter().filter_map(|i| slots[i].take()).collect();
    (chain, warning)
}

/// The most recently modified session of `cwd` (for `--continue`), looking only in that
/// project's directory and only at sessions whose transcript recorded `cwd` as their working
/// directory: a session of another directory is never continued, even if its file sits in this
/// folder. Ties on mtime go to the greater id, so the answer is deterministic.
pub async fn latest_session(home: &Path, cwd: &Path) -> Result<Option<SessionId>, TranscriptError> {
    let dir = project_dir(home, cwd);
    let cwd = cwd.to_path_buf();
    tokio::task::spawn_blocking(move || latest_in_dir(&dir, &cwd)).await?
}

fn latest_in_dir(dir: &Path, cwd: &Path) -> Result<Option<SessionId>, TranscriptError> {
    let read_err = |source| TranscriptError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_err(e)),
    };
    let mut candidates: Vec<(SystemTime, SessionId, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(read_err)?;
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let Some(id) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| SessionId::parse(s).ok())
        else {
            continue;
        };
        // A file that vanished or cannot be stat'ed is not a candidate.
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        candidates.push((mtime, id, path));
    }
    // Newest first; only the first lines of each are read, and usually only the newest.
    candidates.sort_by(|a, b| (b.0, &b.1).cmp(&(a.0, &a.1)));
    Ok(candidates
        .into_iter()
        .find(|(_, _, path)| recorded_in(path, cwd))
        .map(|(_, id, _)| id))
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;

//! Reading transcripts back: tolerant line parsing, the conversation chain, and finding the
//! latest session of a directory for `--continue`.
//!
//! Reading streams: one line at a time through a reused buffer, never the whole file in memory.
//! Resuming keeps only the conversation records from the last compaction boundary on, and hands
//! every annotation to the caller as it is read instead of keeping it, so resuming a long
//! session costs about what living it did.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use tine_api_client::Message;

use super::{RecordType, TranscriptError, TranscriptRecord, TranscriptWarning};
use tine_config::recorded_in;
use tine_config::{SessionId, project_dir, transcript_path};

/// The `subtype` of the `system` record written where compaction replaced the history.
pub const COMPACT_BOUNDARY: &str = "compact_boundary";

/// A reused line buffer grown past this by one huge line is dropped rather than kept.
const KEPT_LINE_BUFFER: usize = 1 << 20;

/// Every record that parsed, in file order, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct TranscriptRead {
    /// The records that parsed, in file order.
    pub records: Vec<TranscriptRecord>,
    /// What the reader stepped over.
    pub warnings: Vec<TranscriptWarning>,
}

/// Reads a whole transcript, off the async runtime. Bad lines are skipped and reported; only
/// I/O failures are errors.
pub async fn read_transcript(path: &Path) -> Result<TranscriptRead, TranscriptError> {
    let owned = path.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut records = Vec::new();
        let warnings = scan_file(&owned, |record| records.push(record))?;
        Ok(TranscriptRead { records, warnings })
    })
    .await?
}

/// Parses transcript bytes; never fails, never panics.
#[cfg(test)]
pub(crate) fn parse_transcript(bytes: &[u8]) -> TranscriptRead {
    let mut records = Vec::new();
    // Reading from a slice cannot fail.
    let warnings = scan(bytes, |record| records.push(record)).unwrap_or_default();
    TranscriptRead { records, warnings }
}

fn scan_file(
    path: &Path,
    on_record: impl FnMut(TranscriptRecord),
) -> Result<Vec<TranscriptWarning>, TranscriptError> {
    let read_err = |source| TranscriptError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    scan(std::io::BufReader::new(file), on_record).map_err(read_err)
}

/// Calls `on_record` with each record that parses, in file order; returns what was skipped.
/// Only the last line may lack its newline: if it does not parse, it is a torn write.
fn scan(
    mut reader: impl BufRead,
    mut on_record: impl FnMut(TranscriptRecord),
) -> std::io::Result<Vec<TranscriptWarning>> {
    let mut warnings = Vec::new();
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        buffer.clear();
        if buffer.capacity() > KEPT_LINE_BUFFER {
            buffer = Vec::new();
        }
        if reader.read_until(b'\n', &mut buffer)? == 0 {
            break;
        }
        number += 1;
        let complete = buffer.last() == Some(&b'\n');
        let line = if complete {
            &buffer[..buffer.len() - 1]
        } else {
            &buffer[..]
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<TranscriptRecord>(line) {
            Ok(record) => on_record(record),
            Err(_) if !complete => warnings.push(TranscriptWarning::TornLastLine {
                line: number,
                bytes: line.len(),
            }),
            Err(error) => warnings.push(TranscriptWarning::CorruptLine {
                line: number,
                error: error.to_string(),
            }),
        }
    }
    Ok(warnings)
}

/// A session restored from its transcript: the conversation chain ending at the last message.
#[derive(Debug, Clone)]
pub struct ResumedSession {
    /// The session's id.
    pub session_id: SessionId,
    /// Its transcript.
    pub path: PathBuf,
    /// Conversation records (`user`, `assistant`, `system`) from the last compaction boundary
    /// (or the first record) to the leaf.
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

    /// [`Self::messages`] without copying them.
    pub fn into_messages(self) -> Vec<Message> {
        self.chain
            .into_iter()
            .filter(|r| matches!(r.kind, RecordType::User | RecordType::Assistant))
            .filter_map(|r| r.message)
            .collect()
    }
}

/// Loads session `session_id` of `cwd` for `--resume`.
pub async fn load_session(
    home: &Path,
    cwd: &Path,
    session_id: &SessionId,
) -> Result<ResumedSession, TranscriptError> {
    load_session_with(home, cwd, session_id, |_| {}).await
}

/// [`load_session`], handing each annotation (a record outside the conversation: transitions,
/// cache hashes, ...) to `on_annotation` in file order as it is read; none is kept.
pub async fn load_session_with(
    home: &Path,
    cwd: &Path,
    session_id: &SessionId,
    on_annotation: impl FnMut(TranscriptRecord) + Send + 'static,
) -> Result<ResumedSession, TranscriptError> {
    load_session_at(home, cwd, session_id, None, on_annotation).await
}

/// [`load_session_with`] up to and including the record whose uuid is `at`
/// (`--resume-session-at`): what was written after it is not read, so the chain ends there
/// (new messages then branch from it). [`TranscriptError::MessageNotFound`] when no record
/// has it.
pub async fn load_session_at(
    home: &Path,
    cwd: &Path,
    session_id: &SessionId,
    at: Option<&str>,
    mut on_annotation: impl FnMut(TranscriptRecord) + Send + 'static,
) -> Result<ResumedSession, TranscriptError> {
    let path = transcript_path(home, cwd, session_id);
    let scan_path = path.clone();
    let target = at.map(str::to_owned);
    let scanned = tokio::task::spawn_blocking(move || {
        let mut conversation = Vec::new();
        let mut reached = false;
        let warnings = scan_file(&scan_path, |record| {
            if reached {
                return;
            }
            reached = target.as_deref().is_some_and(|at| record.uuid == at);
            if !record.kind.is_conversation() {
                on_annotation(record);
                return;
            }
            if is_compact_boundary(&record) {
                // What came before was replaced by what follows: the session never needs it.
                conversation.clear();
            }
            conversation.push(record);
        })?;
        Ok::<_, TranscriptError>((conversation, warnings, reached))
    })
    .await?;
    let (conversation, mut warnings) = match scanned {
        Ok((_, _, false)) if at.is_some() => {
            return Err(TranscriptError::MessageNotFound {
                session_id: session_id.to_string(),
                uuid: at.unwrap_or_default().to_owned(),
            });
        }
        Ok((conversation, warnings, _)) => (conversation, warnings),
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
    let (chain, broken) = conversation_chain(conversation);
    warnings.extend(broken);
    Ok(ResumedSession {
        session_id: session_id.clone(),
        path,
        chain,
        warnings,
    })
}

/// Whether `record` is the `system` record compaction writes before the replacement history.
pub(crate) fn is_compact_boundary(record: &TranscriptRecord) -> bool {
    record.kind == RecordType::System
        && record
            .data
            .as_ref()
            .and_then(|d| d.get("subtype"))
            .and_then(serde_json::Value::as_str)
            == Some(COMPACT_BOUNDARY)
}

/// The chain ending at the last conversation record, walked back by `parentUuid` to the first
/// record or a compaction boundary. A missing parent ends the walk (reported); a cycle cannot
/// loop. (Sub-agents write their own files, so one file holds one thread: main or sidechain.)
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
    while !is_compact_boundary(&conversation[current])
        && let Some(parent) = conversation[current].parent_uuid.as_deref()
    {
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

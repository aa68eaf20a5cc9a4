//! Session transcripts: one JSONL file per session at [`tine_config::transcript_path`], one
//! [`TranscriptRecord`] per line, appended as each message completes.
//!
//! Crash safety comes from the shape of the writes, not from locking: the file is opened in
//! append mode and never truncated, and each record is one `write_all` of one full line, so a
//! crash leaves at most a torn *last* line. The reader skips that line and reports it; a bad line
//! elsewhere is skipped and reported with its line number. Resume follows `parentUuid` links back
//! from the last conversation record to the last compaction boundary, reading the file as a
//! stream and keeping only that chain (annotations go to the caller as they are read).

mod branch;
mod reader;
mod record;
mod writer;

use std::path::PathBuf;

pub use branch::fork_transcript;
pub(crate) use reader::is_compact_boundary;
pub use reader::{
    COMPACT_BOUNDARY, ResumedSession, TranscriptRead, latest_session, load_session,
    load_session_at, load_session_with, read_transcript,
};
pub use record::{CompactBoundary, CompactTrigger, DroppedContext, RecordType, TranscriptRecord};
pub use writer::{TranscriptAnnotator, TranscriptWriter, WriterOptions};

/// Errors reading or writing a transcript. Malformed lines are not errors: they are reported as
/// [`TranscriptWarning`]s beside the records that did parse.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    /// The transcript's directory could not be created.
    #[error("cannot create the transcript directory {}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The transcript could not be opened.
    #[error("cannot open the transcript {}: {source}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The transcript could not be written.
    #[error("cannot write to the transcript {}: {source} (the session continues unrecorded only if the caller chooses to)", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The transcript could not be read.
    #[error("cannot read the transcript {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// No transcript has this session id.
    #[error("no session {session_id} in {}: check the id, or run `tine --continue` for the latest session of this directory", dir.display())]
    SessionNotFound {
        /// The id asked for.
        session_id: String,
        /// Where transcripts were looked for.
        dir: PathBuf,
    },
    /// `--resume-session-at`: the session has no message with this uuid.
    #[error(
        "session {session_id} has no message with uuid {uuid}: pass the uuid of one of its messages to --resume-session-at"
    )]
    MessageNotFound {
        /// The session.
        session_id: String,
        /// The uuid asked for.
        uuid: String,
    },
    /// A record could not be encoded.
    #[error("cannot encode a transcript record: {0}")]
    Encode(#[from] serde_json::Error),
    /// The writer's task failed.
    #[error("transcript I/O task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Something wrong in a transcript that the reader stepped over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptWarning {
    /// The last line has no newline and does not parse: a write cut short by a crash.
    TornLastLine {
        /// The line's number (1-based).
        line: usize,
        /// Its length in bytes.
        bytes: usize,
    },
    /// A complete line that is not a valid record; skipped.
    CorruptLine {
        /// The line's number (1-based).
        line: usize,
        /// The parser's message.
        error: String,
    },
    /// A `parentUuid` names no record in the file; the resumed chain starts after the gap.
    BrokenChain {
        /// The uuid no record has.
        missing_uuid: String,
    },
}

impl std::fmt::Display for TranscriptWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TornLastLine { line, bytes } => write!(
                f,
                "line {line}: incomplete last record ({bytes} bytes, likely an interrupted write) skipped"
            ),
            Self::CorruptLine { line, error } => {
                write!(f, "line {line}: invalid record skipped: {error}")
            }
            Self::BrokenChain { missing_uuid } => write!(
                f,
                "message {missing_uuid} is missing; history before it was not restored"
            ),
        }
    }
}

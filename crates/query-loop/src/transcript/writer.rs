//! Appending records to a transcript file.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use tine_api_client::{Message, Role};

use super::record::RecordRef;
use super::{RecordType, TranscriptError, TranscriptRecord};
use crate::timestamp::rfc3339_utc;
use tine_config::SessionId;

/// Who writes a transcript: the envelope fields every record repeats.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    pub session_id: SessionId,
    /// The session's working directory, recorded on every line.
    pub cwd: PathBuf,
    /// `Some(agent id)` for a sub-agent's sidechain transcript (`isSidechain: true`).
    pub agent_id: Option<String>,
    /// The conversation record the next message follows: `None` for a new session, the
    /// [`super::ResumedSession::last_uuid`] when resuming.
    pub parent_uuid: Option<String>,
}

/// Appends records to one transcript file. Each append is one `write_all` of a full line on a
/// file opened in append mode, done off the async runtime.
#[derive(Debug)]
pub struct TranscriptWriter {
    file: Arc<File>,
    path: PathBuf,
    options: WriterOptions,
    cwd: String,
}

impl TranscriptWriter {
    /// Opens (creating with mode 0600, parents 0700) the transcript at `path` for appending.
    /// An existing file is never truncated; if it ends in a torn line, a newline is written first
    /// so the next record starts on a line of its own.
    pub async fn open(path: PathBuf, options: WriterOptions) -> Result<Self, TranscriptError> {
        let open_path = path.clone();
        let file = tokio::task::spawn_blocking(move || open_for_append(&open_path)).await??;
        let cwd = options.cwd.to_string_lossy().into_owned();
        Ok(Self {
            file: Arc::new(file),
            path,
            options,
            cwd,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn session_id(&self) -> &SessionId {
        &self.options.session_id
    }

    /// The uuid of the last conversation record written (or resumed from).
    pub fn last_uuid(&self) -> Option<&str> {
        self.options.parent_uuid.as_deref()
    }

    /// Appends a conversation message (`user` or `assistant` by its role) as it completes;
    /// returns the record's uuid.
    pub async fn append_message(&mut self, message: &Message) -> Result<String, TranscriptError> {
        let kind = match message.role {
            Role::User => RecordType::User,
            Role::Assistant => RecordType::Assistant,
        };
        self.append(kind, Some(message), None).await
    }

    /// Appends any record. Conversation kinds (`user`, `assistant`, `system`) extend the chain;
    /// other kinds annotate it: their `parentUuid` is the last message and the chain is unchanged.
    pub async fn append(
        &mut self,
        kind: RecordType,
        message: Option<&Message>,
        data: Option<&serde_json::Value>,
    ) -> Result<String, TranscriptError> {
        let uuid = uuid::Uuid::new_v4().to_string();
        let timestamp = rfc3339_utc(SystemTime::now());
        let record = RecordRef {
            kind: &kind,
            uuid: &uuid,
            parent_uuid: self.options.parent_uuid.as_deref(),
            session_id: &self.options.session_id,
            timestamp: &timestamp,
            cwd: &self.cwd,
            is_sidechain: self.options.agent_id.is_some(),
            agent_id: self.options.agent_id.as_deref(),
            message,
            data,
        };
        let line = encode_line(&record)?;
        self.write_line(line).await?;
        if kind.is_conversation() {
            self.options.parent_uuid = Some(uuid.clone());
        }
        Ok(uuid)
    }

    /// Appends a record built by the caller, unchanged (its uuid and parent are the caller's).
    pub async fn write_record(&self, record: &TranscriptRecord) -> Result<(), TranscriptError> {
        let line = encode_line(&RecordRef::from(record))?;
        self.write_line(line).await
    }

    async fn write_line(&self, line: Vec<u8>) -> Result<(), TranscriptError> {
        let file = Arc::clone(&self.file);
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            // One write_all of the whole line: a crash can tear only this, the last, line.
            let mut handle: &File = &file;
            handle
                .write_all(&line)
                .and_then(|()| handle.flush())
                .map_err(|source| TranscriptError::Write { path, source })
        })
        .await?
    }
}

fn encode_line(record: &RecordRef<'_>) -> Result<Vec<u8>, TranscriptError> {
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    Ok(line)
}

fn open_for_append(path: &Path) -> Result<File, TranscriptError> {
    if let Some(dir) = path.parent() {
        tine_config::private_fs::create_dir_all(dir).map_err(|source| {
            TranscriptError::CreateDir {
                path: dir.to_path_buf(),
                source,
            }
        })?;
    }
    let open_err = |source| TranscriptError::Open {
        path: path.to_path_buf(),
        source,
    };
    let mut file = tine_config::private_fs::open_append(path).map_err(open_err)?;
    if !ends_with_newline(&mut file).map_err(open_err)? {
        file.write_all(b"\n")
            .map_err(|source| TranscriptError::Write {
                path: path.to_path_buf(),
                source,
            })?;
    }
    Ok(file)
}

/// True for an empty file or one whose last byte is `\n`.
fn ends_with_newline(file: &mut File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

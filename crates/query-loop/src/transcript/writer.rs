//! Appending records to a transcript file: the session's [`TranscriptWriter`], and
//! [`TranscriptAnnotator`]s, handles on the same file for background work that records where
//! it got to (memory extraction's cursor) while the session goes on.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use tine_api_client::{Message, Role};

use super::record::RecordRef;
use super::{RecordType, TranscriptError, TranscriptRecord};
use crate::timestamp::rfc3339_utc;
use tine_config::SessionId;

/// Who writes a transcript: the envelope fields every record repeats.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// The session's id.
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
    /// The last conversation record's uuid, shared with the annotators (their records'
    /// `parentUuid`).
    last: LastUuid,
}

type LastUuid = Arc<Mutex<Option<String>>>;

fn read_last(last: &LastUuid) -> Option<String> {
    last.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

impl TranscriptWriter {
    /// Opens (creating with mode 0600, parents 0700) the transcript at `path` for appending.
    /// An existing file is never truncated; if it ends in a torn line, a newline is written first
    /// so the next record starts on a line of its own.
    pub async fn open(path: PathBuf, options: WriterOptions) -> Result<Self, TranscriptError> {
        let open_path = path.clone();
        let file = tokio::task::spawn_blocking(move || open_for_append(&open_path)).await??;
        let cwd = options.cwd.to_string_lossy().into_owned();
        let last = Arc::new(Mutex::new(options.parent_uuid.clone()));
        Ok(Self {
            file: Arc::new(file),
            path,
            options,
            cwd,
            last,
        })
    }

    /// A handle that appends annotations to this transcript from elsewhere (a background task).
    pub fn annotator(&self) -> TranscriptAnnotator {
        TranscriptAnnotator {
            file: Arc::clone(&self.file),
            path: self.path.clone(),
            last: Arc::clone(&self.last),
            agent_id: self.options.agent_id.clone(),
        }
    }

    /// The transcript's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The session's id.
    pub fn session_id(&self) -> &SessionId {
        &self.options.session_id
    }

    /// The uuid of the last conversation record written (or resumed from).
    pub fn last_uuid(&self) -> Option<String> {
        read_last(&self.last)
    }

    /// Appends a conversation message (`user` or `assistant` by its role) as it completes;
    /// returns the record's uuid.
    pub async fn append_message(&mut self, message: &Message) -> Result<String, TranscriptError> {
        self.append_message_as(message, None).await
    }

    /// [`TranscriptWriter::append_message`] under `uuid` when given (the uuid a front end
    /// was shown with the message), else a new one.
    pub async fn append_message_as(
        &mut self,
        message: &Message,
        uuid: Option<&str>,
    ) -> Result<String, TranscriptError> {
        let kind = match message.role {
            Role::User => RecordType::User,
            Role::Assistant => RecordType::Assistant,
        };
        self.append_conversation(&kind, Some(message), None, uuid)
            .await
    }

    /// Appends any record. Conversation kinds (`user`, `assistant`, `system`) extend the chain
    /// and return their uuid; other kinds annotate it: their `parentUuid` is the last message,
    /// the chain is unchanged, and they get no uuid of their own (`None`: nothing refers to
    /// one, and an annotation follows every request).
    pub async fn append(
        &mut self,
        kind: RecordType,
        message: Option<&Message>,
        data: Option<&serde_json::Value>,
    ) -> Result<Option<String>, TranscriptError> {
        if !kind.is_conversation() {
            let parent = read_last(&self.last);
            let line = annotation_line(
                &kind,
                parent.as_deref(),
                self.options.agent_id.as_deref(),
                data,
            )?;
            write_line(&self.file, &self.path, line).await?;
            return Ok(None);
        }
        self.append_conversation(&kind, message, data, None)
            .await
            .map(Some)
    }

    async fn append_conversation(
        &mut self,
        kind: &RecordType,
        message: Option<&Message>,
        data: Option<&serde_json::Value>,
        uuid: Option<&str>,
    ) -> Result<String, TranscriptError> {
        let uuid = uuid.map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
        let timestamp = rfc3339_utc(SystemTime::now());
        let parent = read_last(&self.last);
        let record = RecordRef {
            kind,
            uuid: &uuid,
            parent_uuid: parent.as_deref(),
            session_id: Some(&self.options.session_id),
            timestamp: &timestamp,
            cwd: Some(&self.cwd),
            is_sidechain: self.options.agent_id.is_some(),
            agent_id: self.options.agent_id.as_deref(),
            message,
            data,
        };
        let line = encode_line(&record)?;
        write_line(&self.file, &self.path, line).await?;
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(uuid.clone());
        Ok(uuid)
    }

    /// Appends a record built by the caller, unchanged (its uuid and parent are the caller's).
    pub async fn write_record(&self, record: &TranscriptRecord) -> Result<(), TranscriptError> {
        let line = encode_line(&RecordRef::from(record))?;
        write_line(&self.file, &self.path, line).await
    }
}

/// Appends annotation records to a session's transcript while the session's
/// [`TranscriptWriter`] goes on writing it (get one with [`TranscriptWriter::annotator`]).
/// Each record is one write of a whole line on the same append-mode file, so the two never
/// interleave within a line; its `parentUuid` is the last message written at that moment.
#[derive(Debug, Clone)]
pub struct TranscriptAnnotator {
    file: Arc<File>,
    path: PathBuf,
    last: LastUuid,
    agent_id: Option<String>,
}

impl TranscriptAnnotator {
    /// Appends an annotation of `kind` (not a conversation kind) with payload `data`.
    pub async fn annotate(
        &self,
        kind: &str,
        data: &serde_json::Value,
    ) -> Result<(), TranscriptError> {
        let kind = RecordType::Other(kind.to_owned());
        let parent = read_last(&self.last);
        let line = annotation_line(
            &kind,
            parent.as_deref(),
            self.agent_id.as_deref(),
            Some(data),
        )?;
        write_line(&self.file, &self.path, line).await
    }

    /// The transcript's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// An annotation's line: `type`, `parentUuid`, `timestamp` (and a sidechain's agent), `data`;
/// no uuid, session id or cwd.
fn annotation_line(
    kind: &RecordType,
    parent: Option<&str>,
    agent_id: Option<&str>,
    data: Option<&serde_json::Value>,
) -> Result<Vec<u8>, TranscriptError> {
    let timestamp = rfc3339_utc(SystemTime::now());
    encode_line(&RecordRef {
        kind,
        uuid: "",
        parent_uuid: parent,
        session_id: None,
        timestamp: &timestamp,
        cwd: None,
        is_sidechain: agent_id.is_some(),
        agent_id,
        message: None,
        data,
    })
}

async fn write_line(file: &Arc<File>, path: &Path, line: Vec<u8>) -> Result<(), TranscriptError> {
    let file = Arc::clone(file);
    let path = path.to_path_buf();
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

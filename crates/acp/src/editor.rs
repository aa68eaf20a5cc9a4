//! The editor's files: when the client offers `fs/read_text_file` and `fs/write_text_file`,
//! Read, Write and Edit go through it ([`tine_session::EditorFiles`]), so the model sees unsaved
//! buffers and the editor applies and tracks the edits. The permission engine has decided
//! before a call gets here. Each request is handed to the session's pump (a `Job`), which
//! sends it after the events emitted before it: the editor hears of a call before the call
//! reads or writes.

use std::path::{Path, PathBuf};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, SessionId, WriteTextFileRequest,
};
use tine_session::{EditorFiles, EditorFuture};
use tokio::sync::{mpsc, oneshot};

use crate::jobs::{Job, answer};

/// Sends `fs/read_text_file` now (in order with the updates before it) and answers `reply`
/// when the editor does.
pub(crate) fn send_read(
    connection: &ConnectionTo<Client>,
    session: &SessionId,
    path: PathBuf,
    reply: oneshot::Sender<Result<String, String>>,
) {
    let sent = connection.send_request(ReadTextFileRequest::new(session.clone(), path.clone()));
    tokio::spawn(async move {
        let result = sent
            .block_task()
            .await
            .map(|response| response.content)
            .map_err(|error| format!("the editor could not read {}: {error}", path.display()));
        let _ = reply.send(result);
    });
}

/// Sends `fs/write_text_file` now and answers `reply` when the editor does.
pub(crate) fn send_write(
    connection: &ConnectionTo<Client>,
    session: &SessionId,
    path: PathBuf,
    text: String,
    reply: oneshot::Sender<Result<(), String>>,
) {
    let sent = connection.send_request(WriteTextFileRequest::new(
        session.clone(),
        path.clone(),
        text,
    ));
    tokio::spawn(async move {
        let result = sent
            .block_task()
            .await
            .map(|_| ())
            .map_err(|error| format!("the editor could not write {}: {error}", path.display()));
        let _ = reply.send(result);
    });
}

/// One session's view of the editor's files.
pub(crate) struct EditorFs {
    jobs: mpsc::UnboundedSender<Job>,
}

impl EditorFs {
    /// The editor's files, when the client offers both reading and writing; their requests go
    /// to `jobs` (the session's pump).
    pub(crate) fn offered(
        capabilities: &ClientCapabilities,
        jobs: &mpsc::UnboundedSender<Job>,
    ) -> Option<Self> {
        (capabilities.fs.read_text_file && capabilities.fs.write_text_file)
            .then(|| Self { jobs: jobs.clone() })
    }
}

impl EditorFiles for EditorFs {
    fn read_text<'a>(&'a self, path: &'a Path) -> EditorFuture<'a, String> {
        Box::pin(async move {
            let (reply, answered) = oneshot::channel();
            let job = Job::Read {
                path: path.to_path_buf(),
                reply,
            };
            answer(job, &self.jobs, answered).await
        })
    }

    fn write_text<'a>(&'a self, path: &'a Path, text: &'a str) -> EditorFuture<'a, ()> {
        Box::pin(async move {
            let (reply, answered) = oneshot::channel();
            let job = Job::Write {
                path: path.to_path_buf(),
                text: text.to_owned(),
                reply,
            };
            answer(job, &self.jobs, answered).await
        })
    }
}

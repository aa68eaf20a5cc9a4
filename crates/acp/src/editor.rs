//! The editor's files: when the client offers `fs/read_text_file` and `fs/write_text_file`,
//! Read, Write and Edit go through it ([`tine_session::EditorFiles`]), so the model sees unsaved
//! buffers and the editor applies and tracks the edits. The permission engine has decided
//! before a call gets here. Each request is handed to the session's pump ([`Job`]), which
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

use crate::updates::Translator;

/// A request for the editor (its files, its terminal), waiting for the pump.
pub(crate) enum Job {
    /// `fs/read_text_file`.
    Read {
        path: PathBuf,
        reply: oneshot::Sender<Result<String, String>>,
    },
    /// `fs/write_text_file`.
    Write {
        path: PathBuf,
        text: String,
        reply: oneshot::Sender<Result<(), String>>,
    },
    /// A command in a terminal of the editor's.
    Run(crate::terminal::TerminalJob),
}

impl Job {
    /// Whether the call it belongs to has been announced (a call naming its file, or the
    /// Bash call running its command).
    pub(crate) fn announced(&self, translator: &Translator) -> bool {
        match self {
            Job::Read { path, .. } | Job::Write { path, .. } => translator.names(path),
            Job::Run(run) => translator.running_command(&run.command).is_some(),
        }
    }

    /// Sends the request now (in order with the updates before it) and answers the job when
    /// the editor does.
    pub(crate) fn send(
        self,
        connection: &ConnectionTo<Client>,
        session: &SessionId,
        translator: &Translator,
    ) {
        match self {
            Job::Run(run) => run.start(connection, session, translator),
            Job::Read { path, reply } => {
                let sent = connection
                    .send_request(ReadTextFileRequest::new(session.clone(), path.clone()));
                tokio::spawn(async move {
                    let result = sent
                        .block_task()
                        .await
                        .map(|response| response.content)
                        .map_err(|error| {
                            format!("the editor could not read {}: {error}", path.display())
                        });
                    let _ = reply.send(result);
                });
            }
            Job::Write { path, text, reply } => {
                let sent = connection.send_request(WriteTextFileRequest::new(
                    session.clone(),
                    path.clone(),
                    text,
                ));
                tokio::spawn(async move {
                    let result = sent.block_task().await.map(|_| ()).map_err(|error| {
                        format!("the editor could not write {}: {error}", path.display())
                    });
                    let _ = reply.send(result);
                });
            }
        }
    }
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

/// The answer to a job, or why there is none.
pub(crate) async fn answer<T>(
    job: Job,
    jobs: &mpsc::UnboundedSender<Job>,
    reply: oneshot::Receiver<Result<T, String>>,
) -> Result<T, String> {
    jobs.send(job)
        .map_err(|_| "the editor's connection is closed".to_owned())?;
    reply
        .await
        .map_err(|_| "the editor's connection closed before it answered".to_owned())?
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

//! What the session asks of the editor (its files, its terminal), handed to the session's pump
//! as a [`Job`] so it goes out after the updates emitted before it.

use std::path::PathBuf;
use std::time::Duration;

use tine_session::TerminalRun;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::updates::Translator;

/// A request for the editor, waiting for the pump.
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
    Run(TerminalJob),
}

/// A command to run in the editor's terminal.
pub(crate) struct TerminalJob {
    /// The model's command line (what the call's input says).
    pub(crate) command: String,
    /// The script the terminal's `bash -c` runs.
    pub(crate) script: String,
    pub(crate) cwd: PathBuf,
    pub(crate) timeout: Duration,
    pub(crate) cancel: CancellationToken,
    pub(crate) reply: oneshot::Sender<Result<TerminalRun, String>>,
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
}

/// Hands `job` to the pump and waits for the editor's answer, or says why there is none.
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

//! The editor's terminal: when the client offers `terminal`, the main thread's foreground Bash
//! commands run in a terminal of the editor's ([`tine_session::EditorTerminal`]): created with
//! `terminal/create`, shown in the call's `tool_call_update` as terminal content, waited for
//! (`terminal/wait_for_exit`, killed with `terminal/kill` on timeout or cancel), read
//! (`terminal/output`) and released. The permission engine has decided before.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CreateTerminalRequest, KillTerminalRequest, ReleaseTerminalRequest,
    SessionId, SessionNotification, SessionUpdate, Terminal, TerminalId, TerminalOutputRequest,
    ToolCallContent, ToolCallId, ToolCallUpdate, ToolCallUpdateFields, WaitForTerminalExitRequest,
};
use tine_session::{EditorFuture, EditorTerminal, TerminalEnding, TerminalRun};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::jobs::{Job, TerminalJob, answer};
use crate::updates::Translator;

/// The most output the editor keeps of a command (tine caps it again).
const OUTPUT_BYTE_LIMIT: u64 = 1 << 20;

/// Creates the terminal now (in order with the updates before it), shows it in its call, and
/// answers the job when the command has ended.
pub(crate) fn start(
    job: TerminalJob,
    connection: &ConnectionTo<Client>,
    session: &SessionId,
    translator: &Translator,
) {
    let call = translator.running_command(&job.command);
    let terminals = translator.terminals();
    let create = CreateTerminalRequest::new(session.clone(), "bash")
        .args(vec!["-c".to_owned(), job.script.clone()])
        .cwd(Some(job.cwd.clone()))
        .output_byte_limit(Some(OUTPUT_BYTE_LIMIT));
    let created = connection.send_request(create);
    let connection = connection.clone();
    let session = session.clone();
    tokio::spawn(async move {
        let result = match created.block_task().await {
            Ok(created) => {
                let terminal = created.terminal_id;
                if let Some(call) = call {
                    show(&connection, &session, &call, &terminal);
                    lock(&terminals).insert(call, terminal.0.to_string());
                }
                run(&connection, &session, &terminal, job.timeout, &job.cancel).await
            }
            Err(error) => Err(format!("the editor could not open a terminal: {error}")),
        };
        let _ = job.reply.send(result);
    });
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The call's update showing its terminal.
fn show(connection: &ConnectionTo<Client>, session: &SessionId, call: &str, terminal: &TerminalId) {
    let update = ToolCallUpdate::new(
        ToolCallId::new(call),
        ToolCallUpdateFields::new().content(vec![ToolCallContent::Terminal(Terminal::new(
            terminal.clone(),
        ))]),
    );
    let notification =
        SessionNotification::new(session.clone(), SessionUpdate::ToolCallUpdate(update));
    let _ = connection.send_notification(notification);
}

/// Waits for the command (killing it on timeout or cancel), reads its output, releases the
/// terminal.
async fn run(
    connection: &ConnectionTo<Client>,
    session: &SessionId,
    terminal: &TerminalId,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<TerminalRun, String> {
    let waited = connection
        .send_request(WaitForTerminalExitRequest::new(
            session.clone(),
            terminal.clone(),
        ))
        .block_task();
    let ending = tokio::select! {
        exit = waited => match exit {
            Ok(exit) => Some(TerminalEnding::Exited(
                exit.exit_status.exit_code.and_then(|code| i32::try_from(code).ok()),
            )),
            Err(error) => return Err(format!("the editor's terminal failed: {error}")),
        },
        () = tokio::time::sleep(timeout) => Some(TerminalEnding::TimedOut),
        () = cancel.cancelled() => Some(TerminalEnding::Cancelled),
    };
    if matches!(
        ending,
        Some(TerminalEnding::TimedOut | TerminalEnding::Cancelled)
    ) {
        let kill = KillTerminalRequest::new(session.clone(), terminal.clone());
        if let Err(error) = connection.send_request(kill).block_task().await {
            tracing::warn!(%error, "the editor could not kill the command's terminal");
        }
    }
    let output = connection
        .send_request(TerminalOutputRequest::new(
            session.clone(),
            terminal.clone(),
        ))
        .block_task()
        .await;
    let release = ReleaseTerminalRequest::new(session.clone(), terminal.clone());
    if let Err(error) = connection.send_request(release).block_task().await {
        tracing::debug!(%error, "the editor could not release the terminal");
    }
    let output = output.map_err(|error| format!("the editor's terminal failed: {error}"))?;
    Ok(TerminalRun {
        output: output.output,
        truncated: output.truncated,
        ending: ending.unwrap_or(TerminalEnding::Exited(None)),
    })
}

/// One session's view of the editor's terminals.
pub(crate) struct EditorTerminalOf {
    jobs: mpsc::UnboundedSender<Job>,
}

impl EditorTerminalOf {
    /// The editor's terminal, when the client offers one; its requests go to `jobs` (the
    /// session's pump).
    pub(crate) fn offered(
        capabilities: &ClientCapabilities,
        jobs: &mpsc::UnboundedSender<Job>,
    ) -> Option<Self> {
        capabilities.terminal.then(|| Self { jobs: jobs.clone() })
    }
}

impl EditorTerminal for EditorTerminalOf {
    fn run<'a>(
        &'a self,
        command: &'a str,
        script: &'a str,
        cwd: &'a Path,
        timeout: Duration,
        cancel: &'a CancellationToken,
    ) -> EditorFuture<'a, TerminalRun> {
        Box::pin(async move {
            let (reply, answered) = oneshot::channel();
            let job = Job::Run(TerminalJob {
                command: command.to_owned(),
                script: script.to_owned(),
                cwd: cwd.to_path_buf(),
                timeout,
                cancel: cancel.clone(),
                reply,
            });
            answer(job, &self.jobs, answered).await
        })
    }
}

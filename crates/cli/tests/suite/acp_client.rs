//! The editor for `tine acp`'s binary tests: the `agent-client-protocol` crate's client side,
//! recording every update and request, answering permission asks as a test chooses, serving
//! reads from unsaved buffers, saving writes, and running terminals as child processes.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ContentBlock, CreateTerminalRequest, CreateTerminalResponse,
    FileSystemCapabilities, InitializeRequest, KillTerminalRequest, KillTerminalResponse,
    NewSessionRequest, PromptRequest, ReadTextFileRequest, ReadTextFileResponse,
    ReleaseTerminalRequest, ReleaseTerminalResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome, SessionId,
    SessionNotification, StopReason, TerminalExitStatus, TerminalOutputRequest,
    TerminalOutputResponse, TextContent, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use serde_json::Value;
use tine_e2e::tine_mock_api::MockServer;
use tine_e2e::{Project, request_bodies};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use super::tine;

/// What the editor saw and how it answers.
#[derive(Default)]
pub(super) struct Editor {
    /// Every `session/update`, as JSON (`sessionId` and `update`).
    pub(super) updates: Mutex<Vec<Value>>,
    /// Every `session/request_permission`, as JSON.
    pub(super) asked: Mutex<Vec<Value>>,
    /// The option each next question picks (`allow_once`, `allow_always`, `reject_once`);
    /// none left: reject.
    pub(super) choices: Mutex<VecDeque<&'static str>>,
    /// Unsaved buffers by path: `fs/read_text_file` answers with them, else with the disk.
    pub(super) buffers: Mutex<HashMap<PathBuf, String>>,
    /// Paths read through the editor.
    pub(super) reads: Mutex<Vec<PathBuf>>,
    /// Reads and writes that came before the editor heard of a call naming their file.
    pub(super) unannounced: Mutex<Vec<PathBuf>>,
    /// Whether it offers its terminal.
    pub(super) offers_terminal: std::sync::atomic::AtomicBool,
    /// Its terminals by id, and every `terminal/create` as JSON.
    terminals: Mutex<HashMap<String, Arc<FakeTerminal>>>,
    pub(super) created: Mutex<Vec<Value>>,
    /// Writes through the editor (the editor saves them to disk).
    pub(super) writes: Mutex<Vec<(PathBuf, String)>>,
}

impl Editor {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(super) fn choose(&self, choices: &[&'static str]) {
        self.choices.lock().unwrap().extend(choices);
    }

    fn terminal(&self, id: &str) -> Arc<FakeTerminal> {
        Arc::clone(&self.terminals.lock().unwrap()[id])
    }

    /// Notes `path` when no `tool_call` seen so far names it.
    fn check_announced(&self, path: &Path) {
        let announced = self.updates_of("tool_call").iter().any(|call| {
            call["locations"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|l| l["path"] == path.display().to_string())
        });
        if !announced {
            self.unannounced.lock().unwrap().push(path.to_path_buf());
        }
    }

    /// The updates of one kind (`tool_call`, `plan`, ...).
    pub(super) fn updates_of(&self, kind: &str) -> Vec<Value> {
        self.updates
            .lock()
            .unwrap()
            .iter()
            .filter(|u| u["update"]["sessionUpdate"] == kind)
            .map(|u| u["update"].clone())
            .collect()
    }

    pub(super) fn text_of(&self, kind: &str) -> String {
        self.updates_of(kind)
            .iter()
            .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
            .collect()
    }
}

/// A terminal of the test editor: the command as a child process, its output collected.
pub(super) struct FakeTerminal {
    pid: u32,
    output: Arc<Mutex<Vec<u8>>>,
    exit: tokio::sync::watch::Receiver<Option<Option<u32>>>,
}

impl FakeTerminal {
    fn spawn(request: &CreateTerminalRequest) -> Arc<Self> {
        let mut command = tokio::process::Command::new(&request.command);
        command
            .args(&request.args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &request.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().unwrap();
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut readers = Vec::new();
        for mut pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let sink = Arc::clone(&output);
            readers.push(tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut buffer = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    sink.lock().unwrap().extend_from_slice(&buffer[..n]);
                }
            }));
        }
        let pid = child.id().unwrap();
        let (tx, exit) = tokio::sync::watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.unwrap();
            for reader in readers {
                let _ = reader.await;
            }
            let _ = tx.send(Some(status.code().and_then(|c| u32::try_from(c).ok())));
        });
        Arc::new(Self { pid, output, exit })
    }

    async fn wait(&self) -> Option<u32> {
        let mut exit = self.exit.clone();
        let ended = exit.wait_for(Option::is_some).await.unwrap();
        ended.flatten()
    }

    fn output(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Kills the command and what it started, as an editor's terminal does.
    fn kill(&self) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.pid)])
            .status();
    }
}

/// `tine [extra] acp` in `project`, driven by `main` as `editor` (offering fs when `fs`).
pub(super) async fn with_editor<R>(
    project: &Project,
    server: &MockServer,
    editor: &Arc<Editor>,
    fs: bool,
    main: impl AsyncFnOnce(ConnectionTo<Agent>) -> Result<R, Error>,
) -> (R, std::process::ExitStatus) {
    let editor_terminal = editor
        .offers_terminal
        .load(std::sync::atomic::Ordering::SeqCst);
    let mut child = tine(project, server).args(["acp"]).stdin_open().spawn();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
    let (e1, e2, e3, e4) = (
        Arc::clone(editor),
        Arc::clone(editor),
        Arc::clone(editor),
        Arc::clone(editor),
    );
    let (t1, t2, t3, t4, t5) = (
        Arc::clone(editor),
        Arc::clone(editor),
        Arc::clone(editor),
        Arc::clone(editor),
        Arc::clone(editor),
    );
    let result = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                e1.updates
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&notification).unwrap());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                e2.asked
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&request).unwrap());
                let choice = e2
                    .choices
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or("reject_once");
                responder.respond(RequestPermissionResponse::new(
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(choice)),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| {
                e3.reads.lock().unwrap().push(request.path.clone());
                e3.check_announced(&request.path);
                let buffer = e3.buffers.lock().unwrap().get(&request.path).cloned();
                match buffer.or_else(|| std::fs::read_to_string(&request.path).ok()) {
                    Some(text) => responder.respond(ReadTextFileResponse::new(text)),
                    None => responder.respond_with_error(Error::new(-32002, "no such file")),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                e4.writes
                    .lock()
                    .unwrap()
                    .push((request.path.clone(), request.content.clone()));
                e4.check_announced(&request.path);
                std::fs::write(&request.path, &request.content).unwrap();
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CreateTerminalRequest, responder, _cx| {
                t1.created
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(&request).unwrap());
                let id = format!("term-{}", t1.created.lock().unwrap().len());
                let terminal = FakeTerminal::spawn(&request);
                t1.terminals.lock().unwrap().insert(id.clone(), terminal);
                responder.respond(CreateTerminalResponse::new(id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WaitForTerminalExitRequest, responder, _cx| {
                let terminal = t2.terminal(&request.terminal_id.0);
                tokio::spawn(async move {
                    let code = terminal.wait().await;
                    let status = TerminalExitStatus::new().exit_code(code);
                    let _ = responder.respond(WaitForTerminalExitResponse::new(status));
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: TerminalOutputRequest, responder, _cx| {
                let terminal = t3.terminal(&request.terminal_id.0);
                tokio::spawn(async move {
                    let code = terminal.wait().await;
                    let output = terminal.output();
                    let _ = responder.respond(
                        TerminalOutputResponse::new(output, false)
                            .exit_status(Some(TerminalExitStatus::new().exit_code(code))),
                    );
                });
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: KillTerminalRequest, responder, _cx| {
                t4.terminal(&request.terminal_id.0).kill();
                responder.respond(KillTerminalResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReleaseTerminalRequest, responder, _cx| {
                t5.terminals.lock().unwrap().remove(&*request.terminal_id.0);
                responder.respond(ReleaseTerminalResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            let capabilities = ClientCapabilities::new()
                .fs(FileSystemCapabilities::new()
                    .read_text_file(fs)
                    .write_text_file(fs))
                .terminal(editor_terminal);
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities),
            )
            .block_task()
            .await?;
            main(cx).await
        })
        .await;
    let value = result.expect("the editor's side of the connection");
    // The editor closes the connection: tine ends its sessions and exits.
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("tine acp exits once the editor is gone")
        .unwrap();
    (value, status)
}

pub(super) async fn new_session(cx: &ConnectionTo<Agent>, cwd: &Path) -> Result<SessionId, Error> {
    Ok(cx
        .send_request(NewSessionRequest::new(cwd.to_path_buf()))
        .block_task()
        .await?
        .session_id)
}

pub(super) async fn prompt(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    text: &str,
) -> Result<StopReason, Error> {
    prompt_blocks(
        cx,
        session,
        vec![ContentBlock::Text(TextContent::new(text))],
    )
    .await
}

pub(super) async fn prompt_blocks(
    cx: &ConnectionTo<Agent>,
    session: &SessionId,
    blocks: Vec<ContentBlock>,
) -> Result<StopReason, Error> {
    Ok(cx
        .send_request(PromptRequest::new(session.clone(), blocks))
        .block_task()
        .await?
        .stop_reason)
}

/// The model's `tool_result` texts in the last request it got.
pub(super) fn last_tool_results(server: &MockServer) -> Vec<String> {
    let bodies = request_bodies(server);
    let last = bodies.last().unwrap();
    let mut texts = Vec::new();
    for message in last["messages"].as_array().unwrap() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                texts.push(match &block["content"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                });
            }
        }
    }
    texts
}

/// How many processes run exactly `command` (from /proc).
pub(super) fn running_processes(command: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| {
            let args: Vec<&[u8]> = cmdline
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .collect();
            args.join(&b' ') == command.as_bytes()
        })
        .count()
}

//! The agent side of the connection: `initialize`, `session/new`, `session/load`,
//! `session/prompt`, `session/set_mode`, `session/cancel`, each mapped onto the session
//! protocol, several sessions per connection. JSON-RPC itself (framing, malformed input, unknown
//! methods) is the `agent-client-protocol` crate's. When the editor goes away every session
//! ends as a shutdown does: the running turn stops, the transcripts are flushed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthenticateRequest, AuthenticateResponse, CancelNotification,
    ClientCapabilities, Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest,
    LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse,
    PromptCapabilities, PromptRequest, SessionId, SessionModeState, SessionNotification,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error};
use serde_json::{Map, Value, json};
use tine_session::{
    Approvals, NoticeLevel, Resume, Session, SessionEvent, SessionOptions, StartError,
};

use crate::editor::EditorFs;
use crate::jobs::Job;
use crate::live::{INVALID_PARAMS, Live, failure};
use crate::terminal::EditorTerminalOf;
use crate::updates::Translator;
use crate::{modes, prompt};
use tokio::sync::mpsc;

/// How `tine acp` runs its sessions.
#[derive(Clone)]
pub struct AcpConfig {
    /// What every session starts from (the command line's flags); each `session/new` sets its
    /// directory, and its MCP servers join the project's.
    pub template: SessionOptions,
    /// Whether bypassPermissions may be offered (not as root outside a sandbox).
    pub bypass_allowed: bool,
}

/// Why `tine acp` stopped.
#[derive(Debug, thiserror::Error)]
#[error("the ACP connection failed: {0}")]
pub struct AcpError(String);

/// How long the sessions get to end once the editor is gone.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What the connection knows.
struct Server {
    config: AcpConfig,
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Arc<Live>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Serves ACP on standard input and output until the editor closes it (a line over 32 MiB is
/// skipped unread and answered with an error).
pub async fn serve(config: AcpConfig) -> Result<(), AcpError> {
    let (lines, writer) = crate::stdio::capped();
    let served = serve_on(config, lines).await;
    // Every answer is out before the process ends.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, writer).await;
    served
}

/// Serves ACP on `transport` until the client closes it; then every session ends (its turn
/// interrupted, its transcript flushed).
pub async fn serve_on(
    config: AcpConfig,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), AcpError> {
    let server = Arc::new(Server {
        config,
        client: Mutex::new(ClientCapabilities::default()),
        sessions: Mutex::new(HashMap::new()),
    });
    let s = [(); 6].map(|()| Arc::clone(&server));
    let [s_init, s_new, s_load, s_prompt, s_mode, s_cancel] = s;
    let result = Agent
        .v1()
        .name("tine")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                responder.respond(s_init.initialize(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_: AuthenticateRequest, responder, _cx| {
                responder.respond(AuthenticateResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                let server = Arc::clone(&s_new);
                let open = Open {
                    cwd: request.cwd,
                    mcp_servers: request.mcp_servers,
                    resume: None,
                };
                tokio::spawn(server.open(open, Reply::New(responder), cx));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let server = Arc::clone(&s_load);
                let open = Open {
                    cwd: request.cwd,
                    mcp_servers: request.mcp_servers,
                    resume: Some(request.session_id),
                };
                tokio::spawn(server.open(open, Reply::Load(responder), cx));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, _cx| {
                let live = match s_prompt.live(&request.session_id) {
                    Ok(live) => live,
                    Err(error) => return responder.respond_with_error(error),
                };
                match prompt::to_op(&request.prompt) {
                    Ok(op) => live.prompt(op, responder),
                    Err(error) => {
                        responder.respond_with_error(Error::new(INVALID_PARAMS, error.0))?;
                    }
                }
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                s_mode.set_mode(request, responder)
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _cx| {
                match s_cancel.live(&cancel.session_id) {
                    Ok(live) => live.cancel(),
                    Err(_) => {
                        tracing::debug!(session = %cancel.session_id, "cancel for no session")
                    }
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await;
    server.shutdown().await;
    match result {
        Ok(()) => Ok(()),
        Err(error) if agent_client_protocol::is_incoming_transport_closed(&error) => Ok(()),
        Err(error) if agent_client_protocol::is_connection_terminated(&error) => Ok(()),
        Err(error) => Err(AcpError(error.to_string())),
    }
}

/// A session to open.
struct Open {
    cwd: std::path::PathBuf,
    mcp_servers: Vec<McpServer>,
    /// `session/load`: the session to resume.
    resume: Option<SessionId>,
}

/// Who waits for the session.
enum Reply {
    New(Responder<NewSessionResponse>),
    Load(Responder<agent_client_protocol::v1::schema::LoadSessionResponse>),
}

impl Server {
    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        *lock(&self.client) = request.client_capabilities;
        InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(
                        PromptCapabilities::new().image(true).embedded_context(true),
                    )
                    .mcp_capabilities(McpCapabilities::new().http(true).sse(false)),
            )
            .auth_methods(Vec::new())
            .agent_info(Some(
                Implementation::new("tine", env!("CARGO_PKG_VERSION"))
                    .title(Some("tine".to_owned())),
            ))
    }

    /// The live session `id`, or an error naming it.
    fn live(&self, id: &SessionId) -> Result<Arc<Live>, Error> {
        lock(&self.sessions).get(&*id.0).cloned().ok_or_else(|| {
            Error::new(
                INVALID_PARAMS,
                format!(
                    "unknown session {id}: this agent has no such session open; start one with \
                     session/new or open a saved one with session/load"
                ),
            )
        })
    }

    fn set_mode(
        &self,
        request: SetSessionModeRequest,
        responder: Responder<SetSessionModeResponse>,
    ) -> Result<(), Error> {
        let live = match self.live(&request.session_id) {
            Ok(live) => live,
            Err(error) => return responder.respond_with_error(error),
        };
        let id = &*request.mode_id.0;
        let mode = match modes::parse(id) {
            Some(tine_session::PermissionMode::BypassPermissions)
                if !self.config.bypass_allowed =>
            {
                return responder.respond_with_error(Error::new(
                    INVALID_PARAMS,
                    "bypassPermissions cannot be used with root/sudo privileges for security \
                     reasons; run as an ordinary user, or set IS_SANDBOX=1 in a disposable \
                     sandbox",
                ));
            }
            Some(mode) => mode,
            None => {
                return responder.respond_with_error(Error::new(
                    INVALID_PARAMS,
                    format!(
                        "unknown mode {id}: use default, acceptEdits, plan or bypassPermissions"
                    ),
                ));
            }
        };
        live.set_mode(mode, responder);
        Ok(())
    }

    /// The options of a session the editor opens (its file requests go to `jobs`).
    fn options(
        &self,
        open: &Open,
        jobs: &mpsc::UnboundedSender<Job>,
        id: &SessionId,
    ) -> Result<SessionOptions, Error> {
        if !open.cwd.is_absolute() {
            return Err(Error::new(
                INVALID_PARAMS,
                format!("cwd must be an absolute path, not {}", open.cwd.display()),
            ));
        }
        let mut options = self.config.template.clone();
        options.cwd = open.cwd.clone();
        options.approvals = Approvals::App;
        let session = tine_config::SessionId::parse(&id.0)
            .map_err(|error| Error::new(INVALID_PARAMS, format!("session {id}: {error}")))?;
        if open.resume.is_some() {
            options.resume = Resume::Id(session);
            options.session_id = None;
        } else {
            options.resume = Resume::New;
            options.session_id = Some(session);
        }
        if let Some(servers) = mcp_config(&open.mcp_servers) {
            options.mcp_configs.push(servers);
        }
        let capabilities = lock(&self.client).clone();
        if let Some(files) = EditorFs::offered(&capabilities, jobs) {
            options.editor_files = Some(Arc::new(files));
        }
        if let Some(terminal) = EditorTerminalOf::offered(&capabilities, jobs) {
            options.editor_terminal = Some(Arc::new(terminal));
        }
        Ok(options)
    }

    /// Starts (or resumes) a session and answers the editor: a resumed conversation is
    /// replayed first, the available commands follow the answer.
    async fn open(self: Arc<Self>, open: Open, reply: Reply, connection: ConnectionTo<Client>) {
        let id = open
            .resume
            .clone()
            .unwrap_or_else(|| SessionId::new(tine_config::SessionId::new_random().as_str()));
        let (jobs, files) = mpsc::unbounded_channel();
        let started = match self.options(&open, &jobs, &id) {
            Ok(options) => Session::start(options).await.map_err(start_error),
            Err(error) => Err(error),
        };
        let (handle, mut events) = match started {
            Ok(started) => started,
            Err(error) => {
                let _ = match reply {
                    Reply::New(responder) => responder.respond_with_error(error),
                    Reply::Load(responder) => responder.respond_with_error(error),
                };
                return;
            }
        };
        if open.resume.is_some() && lock(&self.sessions).contains_key(&*id.0) {
            let _ = handle.shutdown().await;
            let message = format!("session {id} is already open in this agent");
            let _ = match reply {
                Reply::New(responder) => responder.respond_with_error(failure(message)),
                Reply::Load(responder) => responder.respond_with_error(failure(message)),
            };
            return;
        }
        // What start-up said (the session, a resumed history, notices) is queued already.
        let mut translator = Translator::default();
        let mut mode = tine_session::PermissionMode::Default;
        let mut commands = None;
        while let Ok(event) = events.try_recv() {
            match &event.msg {
                SessionEvent::Configured(info) => {
                    mode = info.permission_mode;
                    commands = Some(crate::updates::commands(&info.commands));
                }
                SessionEvent::History(items) => {
                    for update in translator.replay(items) {
                        let _ = connection
                            .send_notification(SessionNotification::new(id.clone(), update));
                    }
                }
                SessionEvent::Notice(notice) => match notice.level {
                    NoticeLevel::Warning => tracing::warn!("{}", notice.text),
                    NoticeLevel::Info => tracing::info!("{}", notice.text),
                },
                _ => {}
            }
        }
        let live = Live::new(id.clone(), handle);
        lock(&self.sessions).insert(id.0.to_string(), Arc::clone(&live));
        let modes: SessionModeState = modes::state(mode, self.config.bypass_allowed);
        let answered = match reply {
            Reply::New(responder) => {
                responder.respond(NewSessionResponse::new(id.clone()).modes(Some(modes)))
            }
            Reply::Load(responder) => {
                responder.respond(LoadSessionResponse::new().modes(Some(modes)))
            }
        };
        if answered.is_err() {
            tracing::debug!("the editor went away before the session was answered");
        }
        if let Some(commands) = commands {
            let _ = connection.send_notification(SessionNotification::new(id.clone(), commands));
        }
        let sessions = Arc::clone(&self);
        tokio::spawn(async move {
            drop(jobs);
            Arc::clone(&live)
                .pump(events, files, connection, translator)
                .await;
            lock(&sessions.sessions).remove(&*live.id.0);
        });
    }

    /// Ends every session (the editor is gone): turns interrupted, transcripts flushed.
    async fn shutdown(&self) {
        let sessions: Vec<Arc<Live>> = lock(&self.sessions).drain().map(|(_, live)| live).collect();
        let ends = sessions.iter().map(|live| live.handle.clone().shutdown());
        let all = futures::future::join_all(ends);
        if tokio::time::timeout(SHUTDOWN_GRACE, all).await.is_err() {
            tracing::warn!("sessions still ending after {SHUTDOWN_GRACE:?}; leaving them");
        }
    }
}

/// Why a session could not start, for the editor (every settings problem named).
fn start_error(error: StartError) -> Error {
    let message = match error {
        StartError::Settings {
            warnings,
            errors,
            refusal,
        } => {
            let mut lines = errors;
            lines.extend(warnings);
            lines.push(refusal);
            lines.join("\n")
        }
        // ACP's "authentication required": the editor can say what is missing.
        StartError::Credentials(error) => {
            return Error::new(
                AUTH_REQUIRED,
                format!(
                    "{error}; set ANTHROPIC_API_KEY in the environment the editor starts tine in (its agent_servers entry's `env`)"
                ),
            );
        }
        other => other.to_string(),
    };
    failure(message)
}

/// ACP's error code for a missing login or key.
const AUTH_REQUIRED: i32 = -32000;

/// The editor's MCP servers as an `--mcp-config` value (started without a trust prompt: the
/// editor configured them). `sse` is not offered in `initialize`; such a server is skipped.
fn mcp_config(servers: &[McpServer]) -> Option<String> {
    let mut entries = Map::new();
    for server in servers {
        let (name, entry) = match server {
            McpServer::Stdio(stdio) => {
                let env: Map<String, Value> = stdio
                    .env
                    .iter()
                    .map(|var| (var.name.clone(), Value::String(var.value.clone())))
                    .collect();
                (
                    stdio.name.clone(),
                    json!({"command": stdio.command, "args": stdio.args, "env": env}),
                )
            }
            McpServer::Http(http) => {
                let headers: Map<String, Value> = http
                    .headers
                    .iter()
                    .map(|header| (header.name.clone(), Value::String(header.value.clone())))
                    .collect();
                (
                    http.name.clone(),
                    json!({"type": "http", "url": http.url, "headers": headers}),
                )
            }
            McpServer::Sse(sse) => {
                tracing::warn!(server = %sse.name, "an sse MCP server is not supported; skipped");
                continue;
            }
            _ => continue,
        };
        entries.insert(name, entry);
    }
    (!entries.is_empty()).then(|| json!({"mcpServers": entries}).to_string())
}

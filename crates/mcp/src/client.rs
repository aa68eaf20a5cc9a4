//! One connection to one server through rmcp: the child process (its own process group, tine's
//! credentials removed, stderr kept for diagnostics), the streamable HTTP endpoint or the SDK
//! app's relay (`sdk`), the
//! `initialize` handshake and the tool list, all under one deadline; and the client side of
//! the protocol tine answers (elicitation, declined unless a front end installed a handler).

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use http::{HeaderName, HeaderValue};
use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::config::McpServerConfig;
use crate::http::ReqwestHttpClient;
use crate::sdk::{NO_RELAY, SdkMcpRelay, SdkRelayTransport};

/// What a server asks the user through `elicitation/create`.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server asking.
    pub server: String,
    /// What it asks, for the user to read.
    pub message: String,
    /// The JSON Schema of the answer (form mode).
    pub schema: Option<Value>,
    /// The page to open (URL mode).
    pub url: Option<String>,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// The user answered (the form's content, in form mode).
    Accept(Option<Value>),
    /// The user said no.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

/// Shows an elicitation to the user (the TUI implements it). Without one, tine does not
/// advertise the capability and declines any request (headless runs have nobody to ask).
pub trait ElicitationHandler: Send + Sync {
    /// Asks the user; resolves with the answer.
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitationAnswer>;
}

/// The client side of one connection.
pub(crate) struct TineClient {
    server: String,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
}

impl ClientHandler for TineClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.elicitation.is_some() {
            let mut elicitation = ElicitationCapability::default();
            elicitation.form = Some(FormElicitationCapability::default());
            capabilities.elicitation = Some(elicitation);
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("tine", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(handler) = &self.elicitation else {
            tracing::info!(server = %self.server, "elicitation declined: no front end to ask");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        // Read the request as JSON: the parameter enum grows with the protocol.
        let value = serde_json::to_value(&request).unwrap_or(Value::Null);
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let answer = handler
            .elicit(ElicitationRequest {
                server: self.server.clone(),
                message: text("message").unwrap_or_default(),
                schema: value.get("requestedSchema").cloned(),
                url: text("url"),
            })
            .await;
        Ok(match answer {
            ElicitationAnswer::Accept(Some(content)) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            ElicitationAnswer::Accept(None) => ElicitResult::new(ElicitationAction::Accept),
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

pub(crate) type Service = RunningService<RoleClient, TineClient>;

/// The last few KiB a server wrote to stderr (why it failed, usually).
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

const STDERR_TAIL_BYTES: usize = 4096;

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tail.extend(bytes);
        let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
        tail.drain(..excess);
    }

    /// The tail's last lines, for an error message ("" when the server wrote nothing).
    pub(crate) fn last_lines(&self, lines: usize) -> String {
        let tail = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let kept: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        kept[kept.len().saturating_sub(lines)..].join(" | ")
    }
}

/// A connected server, before the manager takes it over.
pub(crate) struct Connected {
    pub service: Service,
    /// The child's process group (stdio only).
    pub pgid: Option<u32>,
    pub stderr: StderrTail,
    pub tools: Vec<rmcp::model::Tool>,
    pub has_resources: bool,
}

/// Why a connection attempt failed, in words for `tine mcp list` and the start-up warning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectError {
    /// The server's program could not be started.
    #[error("cannot start `{command}`: {message}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why it could not start.
        message: String,
    },
    /// A configured HTTP header is not valid.
    #[error("invalid HTTP header `{0}`: header names and values must be visible ASCII")]
    Header(String),
    /// The server did not answer `initialize` in time.
    #[error("no answer to `initialize` within {} ms (raise TINE_MCP_TIMEOUT for a slow server){}", .ms, stderr_note(.stderr))]
    Timeout {
        /// How long tine waited, in milliseconds.
        ms: u128,
        /// What the server printed on stderr meanwhile.
        stderr: String,
    },
    /// The MCP handshake failed.
    #[error("the MCP handshake failed: {message}{}", stderr_note(.stderr))]
    Handshake {
        /// Why.
        message: String,
        /// What the server printed on stderr.
        stderr: String,
    },
    /// `tools/list` failed.
    #[error("listing its tools failed: {0}")]
    ListTools(String),
    /// An `sdk` server, and no SDK app to relay to it.
    #[error("{NO_RELAY}")]
    NoSdkRelay,
}

fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {stderr})")
    }
}

/// Connects to one server: starts it (stdio), reaches it (HTTP) or the app that holds it
/// (`sdk`, through `sdk_relay`), runs `initialize` and lists its tools, all within `timeout`.
/// On failure or timeout the child's whole process group is killed, so nothing is left
/// running.
pub(crate) async fn connect(
    name: &str,
    config: &McpServerConfig,
    cwd: &Path,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    sdk_relay: Option<&Arc<dyn SdkMcpRelay>>,
    timeout: Duration,
) -> Result<Connected, ConnectError> {
    let client = TineClient {
        server: name.to_owned(),
        elicitation,
    };
    let stderr = StderrTail::default();
    let (pgid, handshake): (Option<u32>, BoxFuture<'static, _>) = match config {
        McpServerConfig::Stdio { command, args, env } => {
            let (transport, pgid) = spawn_stdio(command, args, env, cwd, &stderr)?;
            (pgid, Box::pin(client.serve(transport)))
        }
        McpServerConfig::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (key, value) in headers {
                let name = HeaderName::try_from(key.as_str())
                    .map_err(|_| ConnectError::Header(key.clone()))?;
                let value = HeaderValue::try_from(value.as_str())
                    .map_err(|_| ConnectError::Header(key.clone()))?;
                custom.insert(name, value);
            }
            let transport = StreamableHttpClientTransport::with_client(
                ReqwestHttpClient::default(),
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom),
            );
            (None, Box::pin(client.serve(transport)))
        }
        // The app routes on the server's key in `mcpServers`, which is `name`.
        McpServerConfig::Sdk { .. } => {
            let relay = sdk_relay.ok_or(ConnectError::NoSdkRelay)?;
            let transport = SdkRelayTransport::new(name, Arc::clone(relay));
            (None, Box::pin(client.serve(transport)))
        }
    };
    if let Some(pgid) = pgid {
        tine_tools::track_tool_process_group(Some(pgid));
    }
    let attempt = async {
        let service = handshake.await.map_err(|error| ConnectError::Handshake {
            message: error.to_string(),
            stderr: stderr.last_lines(3),
        })?;
        let has_resources = service
            .peer_info()
            .is_some_and(|info| info.capabilities.resources.is_some());
        let has_tools = service
            .peer_info()
            .is_none_or(|info| info.capabilities.tools.is_some());
        let mut tools = if has_tools {
            service
                .list_all_tools()
                .await
                .map_err(|error| ConnectError::ListTools(error.to_string()))?
        } else {
            Vec::new()
        };
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok::<_, ConnectError>((service, tools, has_resources))
    };
    let result = match tokio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(ConnectError::Timeout {
            ms: timeout.as_millis(),
            stderr: stderr.last_lines(3),
        }),
    };
    match result {
        Ok((service, tools, has_resources)) => Ok(Connected {
            service,
            pgid,
            stderr,
            tools,
            has_resources,
        }),
        Err(error) => {
            // The attempt (and with it the transport) is gone; the group may not be.
            kill_group(pgid);
            Err(error)
        }
    }
}

fn spawn_stdio(
    command: &str,
    args: &[String],
    env: &std::collections::BTreeMap<String, String>,
    cwd: &Path,
    stderr: &StderrTail,
) -> Result<(TokioChildProcess, Option<u32>), ConnectError> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).current_dir(cwd);
    // tine's credentials are not the server's, unless its configuration passes them itself.
    for name in tine_tools::CREDENTIAL_ENV_VARS {
        cmd.env_remove(name);
    }
    cmd.envs(env);
    // Dies with tine, even after `kill -9`.
    tine_tools::guard_child(cmd.as_std_mut());
    let mut wrapped = CommandWrap::from(cmd);
    // Its own group: killing it kills what it started too (npx, a node child, ...).
    wrapped.wrap(ProcessGroup::leader());
    let spawn_error = |error: std::io::Error| ConnectError::Spawn {
        command: command.to_owned(),
        message: error.to_string(),
    };
    let (transport, child_stderr) = TokioChildProcess::builder(wrapped)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_error)?;
    let pgid = transport.id();
    if let Some(mut child_stderr) = child_stderr {
        let tail = stderr.clone();
        tokio::spawn(async move {
            let mut chunk = vec![0u8; 4096];
            loop {
                match child_stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(read) => tail.push(&chunk[..read]),
                }
            }
        });
    }
    Ok((transport, pgid))
}

/// Kills a server's whole process group (no-op for HTTP servers and already-empty groups).
pub(crate) fn kill_group(pgid: Option<u32>) {
    let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let pid = nix::unistd::Pid::from_raw(pgid);
    if let Err(error) = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL) {
        tracing::debug!(pgid, %error, "killpg of an MCP server");
    }
}

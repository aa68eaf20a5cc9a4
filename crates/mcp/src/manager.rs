//! The session's MCP servers: started once, in parallel, each within the start-up timeout, so a
//! server that never answers delays the start by at most that long and never hides the others'
//! tools. The tool array is fixed from what connected by then (a server that connects later
//! would change the prompt-cache key mid-session); `restart` (the `/mcp` command) reconnects
//! one server explicitly. A server that dies is reported as an [`McpEvent`] and its tools answer
//! with an error the model reads; `shutdown` ends every server's process group.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tine_config::settings::LoadedSettings;
use tine_tools::Tool;
use tokio::sync::broadcast;

use crate::client::{ConnectError, Connected, ElicitationHandler, connect};
use crate::config::McpServerConfig;
use crate::expand::process_env;
use crate::output::{DEFAULT_MAX_OUTPUT_TOKENS, OutputLimits};
use crate::resources::{ListMcpResourcesTool, ReadMcpResourceTool, ResourceAccess};
use crate::sdk::SdkMcpRelay;
use crate::slot::{
    Live, McpServerIdentity, McpServerStatus, McpToolInfo, ServerSlot, SlotState, close_live,
};
use crate::sources::{McpConfig, McpConfigError, McpScope, McpSources, load_config};
use crate::tool::McpTool;
use crate::trust::{ProjectTrust, TrustDecision, how_to_trust};

/// `TINE_MCP_TIMEOUT` / `MCP_TIMEOUT` default: how long one server may take to start.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_millis(10_000);
/// `MCP_TOOL_TIMEOUT` default: generous, since the user can interrupt a call at any time.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Looks up `${VAR}` values in server configurations.
pub(crate) type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How the servers are run.
#[derive(Clone)]
pub struct McpOptions {
    /// How long a server may take to answer `initialize`.
    pub startup_timeout: Duration,
    /// How long one tool call may take.
    pub tool_timeout: Duration,
    /// Tokens of a tool result at most; more is saved to a file.
    pub max_output_tokens: usize,
    /// Where results over the limit are saved (`TINE_HOME/mcp-output`).
    pub output_dir: PathBuf,
    /// The front end's elicitation prompt; `None` declines (headless).
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// How `${VAR}` in configs is looked up (the process environment in production).
    pub env: EnvLookup,
    /// The Agent SDK app's relay to its in-process servers (`"type": "sdk"`); `None`: no app
    /// drives this run, and such a server fails saying so.
    pub sdk_relay: Option<Arc<dyn SdkMcpRelay>>,
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions")
            .field("startup_timeout", &self.startup_timeout)
            .field("tool_timeout", &self.tool_timeout)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("output_dir", &self.output_dir)
            .field("elicitation", &self.elicitation.is_some())
            .field("sdk_relay", &self.sdk_relay.is_some())
            .finish_non_exhaustive()
    }
}

impl McpOptions {
    /// Defaults, with results saved under `tine_home`, and the process environment for
    /// `${VAR}`.
    pub fn new(tine_home: &std::path::Path) -> Self {
        McpOptions {
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            output_dir: tine_home.join("mcp-output"),
            elicitation: None,
            env: Arc::new(process_env),
            sdk_relay: None,
        }
    }

    /// [`McpOptions::new`] with `TINE_MCP_TIMEOUT` (or Claude Code's `MCP_TIMEOUT`),
    /// `MCP_TOOL_TIMEOUT` (ms) and `MAX_MCP_OUTPUT_TOKENS` from the environment.
    pub fn from_env(tine_home: &std::path::Path) -> Self {
        let number = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
        };
        let mut options = Self::new(tine_home);
        if let Some(ms) = number("TINE_MCP_TIMEOUT").or_else(|| number("MCP_TIMEOUT")) {
            options.startup_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = number("MCP_TOOL_TIMEOUT") {
            options.tool_timeout = Duration::from_millis(ms);
        }
        if let Some(tokens) = number("MAX_MCP_OUTPUT_TOKENS") {
            options.max_output_tokens = usize::try_from(tokens).unwrap_or(usize::MAX);
        }
        options
    }

    pub(crate) fn limits(&self) -> OutputLimits {
        OutputLimits {
            max_tokens: self.max_output_tokens,
            dir: self.output_dir.clone(),
        }
    }
}

/// One server in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerInfo {
    /// The server's name.
    pub name: String,
    /// The scope its config came from.
    pub scope: McpScope,
    /// The file (or flag) its config came from.
    pub origin: String,
    /// The command line or URL (`${VAR}` unexpanded, no header values).
    pub summary: String,
    /// Its configuration (`${VAR}` unexpanded; [`McpServerConfig::to_public_json`] leaves
    /// out what may hold secrets).
    pub config: McpServerConfig,
    /// Its state.
    pub status: McpServerStatus,
    /// The tools it offers, sorted by name (none unless connected).
    pub tools: Vec<McpToolInfo>,
    /// Who it said it is in the handshake (connected only).
    pub identity: Option<McpServerIdentity>,
}

/// What the front end is told about servers during the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpEvent {
    /// A connected server went away (crashed, closed its connection).
    ServerExited {
        /// The server's name.
        name: String,
        /// Why it went away.
        reason: String,
    },
    /// `restart` reconnected it.
    ServerRestarted {
        /// The server's name.
        name: String,
        /// How many tools it offers now.
        tools: usize,
    },
}

/// A start-up problem worth showing (a bad config, an untrusted or failed server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpWarning {
    /// The server concerned, if one.
    pub server: Option<String>,
    /// What to show.
    pub message: String,
}

impl std::fmt::Display for McpWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.server {
            Some(server) => write!(f, "MCP server {server}: {}", self.message),
            None => write!(f, "MCP: {}", self.message),
        }
    }
}

/// Why `restart` could not reconnect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// No server has this name.
    #[error("no MCP server named `{0}` (see `tine mcp list`)")]
    UnknownServer(String),
    /// A `.mcp.json` server nobody trusted yet.
    #[error("MCP server `{name}` needs trust first: {how}")]
    NeedsTrust {
        /// The server's name.
        name: String,
        /// How to trust it.
        how: String,
    },
    /// The server is disabled by settings.
    #[error("MCP server `{0}` is disabled by disabledMcpjsonServers")]
    Disabled(String),
    /// The server's config is not valid.
    #[error("MCP server `{name}`: {error}")]
    Config {
        /// The server's name.
        name: String,
        /// What is wrong with it.
        error: crate::config::ServerConfigError,
    },
    /// The server could not be connected.
    #[error("MCP server `{name}`: {error}")]
    Connect {
        /// The server's name.
        name: String,
        /// Why.
        error: ConnectError,
    },
}

struct Inner {
    slots: Arc<[Arc<ServerSlot>]>,
    options: McpOptions,
    cwd: PathBuf,
    events: broadcast::Sender<McpEvent>,
}

/// The session's MCP servers. Cloning shares them.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.statuses())
            .finish()
    }
}

impl McpManager {
    /// Reads the configurations, decides trust, connects to every startable server in
    /// parallel (each within `options.startup_timeout`) and returns the manager, the tools to
    /// give the `ToolPool` (sorted by name; the pool puts them after the built-ins), and what
    /// to warn about. Never fails and never waits longer than the timeout (plus process
    /// start): a server that cannot start is a warning and a status.
    pub async fn start(
        sources: &McpSources,
        settings: &LoadedSettings,
        options: McpOptions,
    ) -> (McpManager, Vec<Arc<dyn Tool>>, Vec<McpWarning>) {
        let config = load_config(sources, settings);
        Self::start_with_config(config, sources, settings, options).await
    }

    /// [`McpManager::start`] on configurations already read.
    pub async fn start_with_config(
        config: McpConfig,
        sources: &McpSources,
        settings: &LoadedSettings,
        options: McpOptions,
    ) -> (McpManager, Vec<Arc<dyn Tool>>, Vec<McpWarning>) {
        let mut warnings: Vec<McpWarning> = config
            .errors
            .iter()
            .map(|error: &McpConfigError| McpWarning {
                server: error.server().map(str::to_owned),
                message: error.to_string(),
            })
            .collect();
        let trust = ProjectTrust::from_settings(settings);
        let (events, _) = broadcast::channel(64);
        let slots: Arc<[Arc<ServerSlot>]> = config
            .servers
            .into_iter()
            .map(|entry| {
                let state = match entry.scope {
                    McpScope::Project => match trust.decide(settings, &entry.name) {
                        TrustDecision::Trusted { .. } => SlotState::Stopped,
                        TrustDecision::Disabled => SlotState::Disabled,
                        TrustDecision::Untrusted => SlotState::NeedsTrust,
                    },
                    _ => SlotState::Stopped,
                };
                Arc::new(ServerSlot::new(entry, state))
            })
            .collect();
        let manager = McpManager {
            inner: Arc::new(Inner {
                slots,
                options,
                cwd: sources.cwd.clone(),
                events,
            }),
        };
        let startable: Vec<Arc<ServerSlot>> = manager
            .inner
            .slots
            .iter()
            .filter(|slot| slot.is_stopped())
            .cloned()
            .collect();
        let attempts = startable
            .iter()
            .map(|slot| manager.connect_slot(slot.clone()));
        for (slot, result) in startable
            .iter()
            .zip(futures::future::join_all(attempts).await)
        {
            if let Err(error) = result {
                warnings.push(McpWarning {
                    server: Some(slot.name().to_owned()),
                    message: error.to_string(),
                });
            }
        }
        for slot in manager.inner.slots.iter() {
            if matches!(slot.status(), McpServerStatus::NeedsTrust { .. }) {
                warnings.push(McpWarning {
                    server: Some(slot.name().to_owned()),
                    message: format!(
                        "from {} is not started: {}",
                        slot.entry.origin,
                        how_to_trust(slot.name())
                    ),
                });
            }
        }
        let tools = manager.tools();
        (manager, tools, warnings)
    }

    /// Every configured server with its scope, origin, state and (connected) tools, sorted by
    /// name.
    pub fn statuses(&self) -> Vec<McpServerInfo> {
        self.inner
            .slots
            .iter()
            .map(|slot| {
                let (tools, identity) = slot.offer();
                McpServerInfo {
                    name: slot.entry.name.clone(),
                    scope: slot.entry.scope,
                    origin: slot.entry.origin.clone(),
                    summary: slot.entry.config.to_string(),
                    config: slot.entry.config.clone(),
                    status: slot.status(),
                    tools,
                    identity,
                }
            })
            .collect()
    }

    /// The tools of the servers connected now, sorted by name, with the two resource tools when
    /// a connected server offers resources.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut any_resources = false;
        for slot in self.inner.slots.iter() {
            let Ok(live) = slot.live() else { continue };
            any_resources |= live.has_resources;
            for tool in &live.tools {
                tools.push(Arc::new(McpTool::new(
                    slot.clone(),
                    tool,
                    self.inner.options.tool_timeout,
                    self.inner.options.limits(),
                )));
            }
        }
        if any_resources {
            let access = ResourceAccess {
                slots: Arc::clone(&self.inner.slots),
                timeout: self.inner.options.tool_timeout,
                limits: self.inner.options.limits(),
            };
            tools.push(Arc::new(ListMcpResourcesTool::new(access.clone())));
            tools.push(Arc::new(ReadMcpResourceTool::new(access)));
        }
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        tools
    }

    /// Events about servers (exits, restarts) for the front end.
    pub fn subscribe(&self) -> broadcast::Receiver<McpEvent> {
        self.inner.events.subscribe()
    }

    /// Reconnects one server (the `/mcp` command): closes its connection if it has one and
    /// starts it again within the start-up timeout. A `.mcp.json` server still needs trust.
    /// Returns its status after. The session's tool array is not changed by this: the caller
    /// decides whether to rebuild it (a new tool set changes the prompt-cache key).
    pub async fn restart(&self, name: &str) -> Result<McpServerStatus, McpError> {
        let slot = self
            .inner
            .slots
            .iter()
            .find(|slot| slot.name() == name)
            .cloned()
            .ok_or_else(|| McpError::UnknownServer(name.to_owned()))?;
        match slot.status() {
            McpServerStatus::NeedsTrust { how } => {
                return Err(McpError::NeedsTrust {
                    name: name.to_owned(),
                    how,
                });
            }
            McpServerStatus::Disabled => return Err(McpError::Disabled(name.to_owned())),
            _ => {}
        }
        if let Some(live) = slot.set(SlotState::Stopped) {
            close_live(&live).await;
        }
        self.connect_slot(slot.clone()).await?;
        let status = slot.status();
        if let McpServerStatus::Connected { tools } = status {
            let _ = self.inner.events.send(McpEvent::ServerRestarted {
                name: name.to_owned(),
                tools,
            });
        }
        Ok(status)
    }

    /// Ends every server: closes the connections and kills their process groups. Bounded:
    /// a server that does not exit when asked is killed.
    pub async fn shutdown(&self) {
        let lives: Vec<Arc<Live>> = self
            .inner
            .slots
            .iter()
            .filter_map(|slot| slot.set(SlotState::Stopped))
            .collect();
        futures::future::join_all(lives.iter().map(|live| close_live(live))).await;
    }

    async fn connect_slot(&self, slot: Arc<ServerSlot>) -> Result<(), McpError> {
        let name = slot.name().to_owned();
        let env = self.inner.options.env.clone();
        let config: McpServerConfig = match slot.entry.config.expanded(&|v| env(v)) {
            Ok(config) => config,
            Err(error) => {
                slot.set(SlotState::Failed(error.to_string()));
                return Err(McpError::Config { name, error });
            }
        };
        let connected = connect(
            &name,
            &config,
            &self.inner.cwd,
            self.inner.options.elicitation.clone(),
            self.inner.options.sdk_relay.as_ref(),
            self.inner.options.startup_timeout,
        )
        .await;
        match connected {
            Ok(connected) => {
                let live = self.watch(&slot, connected);
                slot.set(SlotState::Connected(live));
                Ok(())
            }
            Err(error) => {
                slot.set(SlotState::Failed(error.to_string()));
                Err(McpError::Connect { name, error })
            }
        }
    }

    /// Takes over a connection: a task waits for it to end and, unless tine closed it, marks
    /// the server as exited and tells the front end.
    fn watch(&self, slot: &Arc<ServerSlot>, connected: Connected) -> Arc<Live> {
        let Connected {
            service,
            pgid,
            stderr,
            tools,
            has_resources,
        } = connected;
        let live = Arc::new(Live::new(
            service.peer().clone(),
            tools,
            has_resources,
            pgid,
            stderr,
            service.cancellation_token(),
        ));
        let weak_slot = Arc::downgrade(slot);
        let watched = Arc::downgrade(&live);
        let events = self.inner.events.clone();
        let task = tokio::spawn(async move {
            let quit = service.waiting().await;
            let (Some(slot), Some(live)) = (weak_slot.upgrade(), watched.upgrade()) else {
                return;
            };
            if live.is_closing() {
                return;
            }
            // What it started may still be around; the server is gone either way.
            live.kill();
            let stderr = live.stderr_tail(3);
            let mut reason = match quit {
                Ok(_) => "the server closed the connection (it exited)".to_owned(),
                Err(error) => format!("the connection failed: {error}"),
            };
            if !stderr.is_empty() {
                reason.push_str(&format!("; its last stderr: {stderr}"));
            }
            tracing::warn!(server = slot.name(), %reason, "MCP server exited");
            if slot.exited(&live, reason.clone()) {
                let _ = events.send(McpEvent::ServerExited {
                    name: slot.name().to_owned(),
                    reason,
                });
            }
        });
        live.set_task(task);
        live
    }
}

//! One configured server and its connection: [`ServerSlot`] (the configuration and the state
//! it is in: stopped, connected, failed, needing trust, disabled, exited) and [`Live`] (a
//! connection: the peer, the tools it offered, the process group killed when it goes). The
//! manager drives the slots; the tools read them, so a call to a server that went away is
//! answered with why.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::Peer;
use rmcp::RoleClient;
use rmcp::service::RunningServiceCancellationToken;
use tokio::task::JoinHandle;

use crate::client::{StderrTail, kill_group};
use crate::sources::ServerEntry;
use crate::trust::how_to_trust;

/// A server's state, for `tine mcp list`, `/mcp` and the tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServerStatus {
    /// Connected.
    Connected {
        /// How many tools it offers.
        tools: usize,
    },
    /// Could not connect.
    Failed {
        /// Why.
        reason: String,
    },
    /// A `.mcp.json` server nobody trusted yet; `how` says how to.
    NeedsTrust {
        /// How to trust it.
        how: String,
    },
    /// Listed in `disabledMcpjsonServers`.
    Disabled,
    /// Was connected and went away during the session.
    Exited {
        /// Why it went away.
        reason: String,
    },
    /// Shut down by tine.
    Stopped,
}

impl std::fmt::Display for McpServerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpServerStatus::Connected { tools } => {
                write!(
                    f,
                    "connected ({tools} tool{})",
                    if *tools == 1 { "" } else { "s" }
                )
            }
            McpServerStatus::Failed { reason } => write!(f, "failed ({reason})"),
            McpServerStatus::NeedsTrust { how } => write!(f, "needs trust ({how})"),
            McpServerStatus::Disabled => f.write_str("disabled (in disabledMcpjsonServers)"),
            McpServerStatus::Exited { reason } => write!(f, "not running ({reason})"),
            McpServerStatus::Stopped => f.write_str("stopped"),
        }
    }
}

impl McpServerStatus {
    /// The state in the words of Claude Code's status reports (the Agent SDK's
    /// `mcp_status`): `connected`, `failed` (it did not start, or went away), `pending` (not
    /// started: awaiting the user's trust, or being restarted) or `disabled`.
    pub fn state_name(&self) -> &'static str {
        match self {
            McpServerStatus::Connected { .. } => "connected",
            McpServerStatus::Failed { .. } | McpServerStatus::Exited { .. } => "failed",
            McpServerStatus::NeedsTrust { .. } | McpServerStatus::Stopped => "pending",
            McpServerStatus::Disabled => "disabled",
        }
    }

    /// Why it is not connected, when something went wrong or needs doing.
    pub fn problem(&self) -> Option<&str> {
        match self {
            McpServerStatus::Failed { reason } | McpServerStatus::Exited { reason } => Some(reason),
            McpServerStatus::NeedsTrust { how } => Some(how),
            McpServerStatus::Connected { .. }
            | McpServerStatus::Disabled
            | McpServerStatus::Stopped => None,
        }
    }
}

/// One tool a connected server offers, as status reports list it (its name on the server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolInfo {
    /// The tool's name on its server (the model sees `mcp__SERVER__NAME`).
    pub name: String,
    /// The server's description of it.
    pub description: Option<String>,
    /// The server's `readOnlyHint`.
    pub read_only_hint: Option<bool>,
    /// The server's `destructiveHint`.
    pub destructive_hint: Option<bool>,
    /// The server's `openWorldHint`.
    pub open_world_hint: Option<bool>,
}

impl McpToolInfo {
    fn of(tool: &rmcp::model::Tool) -> Self {
        let hints = tool.annotations.as_ref();
        McpToolInfo {
            name: tool.name.to_string(),
            description: tool.description.as_deref().map(str::to_owned),
            read_only_hint: hints.and_then(|h| h.read_only_hint),
            destructive_hint: hints.and_then(|h| h.destructive_hint),
            open_world_hint: hints.and_then(|h| h.open_world_hint),
        }
    }
}

/// Who a connected server said it is in the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerIdentity {
    /// Its implementation's name.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// A live connection.
pub(crate) struct Live {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) tools: Vec<rmcp::model::Tool>,
    pub(crate) has_resources: bool,
    /// Taken by the first kill: after it the id may belong to someone else.
    pgid: Mutex<Option<u32>>,
    stderr: StderrTail,
    stop: Mutex<Option<RunningServiceCancellationToken>>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// Set when tine closes it, so the exit is not reported as a crash.
    closing: AtomicBool,
}

impl Live {
    /// Takes over a connection's parts; `stop` closes it.
    pub(crate) fn new(
        peer: Peer<RoleClient>,
        tools: Vec<rmcp::model::Tool>,
        has_resources: bool,
        pgid: Option<u32>,
        stderr: StderrTail,
        stop: RunningServiceCancellationToken,
    ) -> Self {
        Live {
            peer,
            tools,
            has_resources,
            pgid: Mutex::new(pgid),
            stderr,
            stop: Mutex::new(Some(stop)),
            task: Mutex::new(None),
            closing: AtomicBool::new(false),
        }
    }

    /// The task waiting for the connection to end, ended by [`close_live`].
    pub(crate) fn set_task(&self, task: JoinHandle<()>) {
        *self.task.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
    }

    /// Whether tine is closing it (its end is then no crash).
    pub(crate) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }

    /// The last `n` lines the server wrote on stderr.
    pub(crate) fn stderr_tail(&self, n: usize) -> String {
        self.stderr.last_lines(n)
    }

    pub(crate) fn kill(&self) {
        kill_group(
            self.pgid
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }

    fn stop(&self) {
        self.closing.store(true, Ordering::SeqCst);
        let stop = self
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(stop) = stop {
            stop.cancel();
        }
    }
}

impl Drop for Live {
    /// The last tool holding the connection is gone (the session ended without `shutdown`):
    /// the server must not outlive it.
    fn drop(&mut self) {
        self.stop();
        self.kill();
    }
}

pub(crate) enum SlotState {
    Connected(Arc<Live>),
    Failed(String),
    NeedsTrust,
    Disabled,
    Exited(String),
    Stopped,
}

/// One configured server and its state.
pub(crate) struct ServerSlot {
    pub(crate) entry: ServerEntry,
    state: Mutex<SlotState>,
}

impl ServerSlot {
    pub(crate) fn new(entry: ServerEntry, state: SlotState) -> Self {
        ServerSlot {
            entry,
            state: Mutex::new(state),
        }
    }

    /// Whether it waits to be connected.
    pub(crate) fn is_stopped(&self) -> bool {
        matches!(
            *self.state.lock().unwrap_or_else(PoisonError::into_inner),
            SlotState::Stopped
        )
    }

    /// `live` went away without tine closing it: the slot is `Exited` unless it holds another
    /// connection by now (a restart). Whether it was still the slot's.
    pub(crate) fn exited(&self, live: &Arc<Live>, reason: String) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if matches!(&*state, SlotState::Connected(current) if Arc::ptr_eq(current, live)) {
            *state = SlotState::Exited(reason);
            true
        } else {
            false
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.entry.name
    }

    /// The live connection, or why there is none ("MCP server x is not running: ...").
    pub(crate) fn live(&self) -> Result<Arc<Live>, String> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let why = match &*state {
            SlotState::Connected(live) => return Ok(live.clone()),
            SlotState::Failed(reason) | SlotState::Exited(reason) => reason.clone(),
            SlotState::NeedsTrust => "it is not trusted yet".to_owned(),
            SlotState::Disabled => "it is disabled".to_owned(),
            SlotState::Stopped => "it was shut down".to_owned(),
        };
        Err(format!(
            "MCP server {} is not running: {why}. The user can restart it with /mcp.",
            self.entry.name
        ))
    }

    pub(crate) fn status(&self) -> McpServerStatus {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &*state {
            SlotState::Connected(live) => McpServerStatus::Connected {
                tools: live.tools.len(),
            },
            SlotState::Failed(reason) => McpServerStatus::Failed {
                reason: reason.clone(),
            },
            SlotState::NeedsTrust => McpServerStatus::NeedsTrust {
                how: how_to_trust(&self.entry.name),
            },
            SlotState::Disabled => McpServerStatus::Disabled,
            SlotState::Exited(reason) => McpServerStatus::Exited {
                reason: reason.clone(),
            },
            SlotState::Stopped => McpServerStatus::Stopped,
        }
    }

    /// The tools it offers and who it said it is, when connected.
    pub(crate) fn offer(&self) -> (Vec<McpToolInfo>, Option<McpServerIdentity>) {
        let Ok(live) = self.live() else {
            return (Vec::new(), None);
        };
        let tools = live.tools.iter().map(McpToolInfo::of).collect();
        let identity = live.peer.peer_info().and_then(|info| {
            info.server_info.as_ref().map(|server| McpServerIdentity {
                name: server.name.clone(),
                version: server.version.clone(),
            })
        });
        (tools, identity)
    }

    /// Puts the slot in `state`; the connection it held, if any.
    pub(crate) fn set(&self, state: SlotState) -> Option<Arc<Live>> {
        let old = std::mem::replace(
            &mut *self.state.lock().unwrap_or_else(PoisonError::into_inner),
            state,
        );
        match old {
            SlotState::Connected(live) => Some(live),
            _ => None,
        }
    }
}

/// How long a server may take to exit once its connection is closed before it is killed.
const CLOSE_GRACE: Duration = Duration::from_millis(1500);

/// Closes `live`: asks the server to go, waits for its task a little, then kills its group.
pub(crate) async fn close_live(live: &Live) {
    live.stop();
    let task = live
        .task
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(task) = task {
        let abort = task.abort_handle();
        if tokio::time::timeout(CLOSE_GRACE, task).await.is_err() {
            abort.abort();
        }
    }
    live.kill();
}

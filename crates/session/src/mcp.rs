//! The session's MCP servers (tine-mcp): started once during assembly, in parallel, each within
//! `TINE_MCP_TIMEOUT`, so a server that never answers delays the start by at most that long;
//! their tools join the tool pool after the built-ins, fixed for the session (a server that
//! connects later would change the prompt-cache key), except when the person restarts a
//! server with `/mcp restart` and its tools differ: then the array changes once. What
//! went wrong is said as notices: a bad configuration, a server that failed or timed out, a
//! project `.mcp.json` server nobody trusted (it is not started). A server that goes away
//! mid-session is a warning notice when it happens, and its tools answer with an error the
//! model reads. The servers of an Agent SDK app (`"type": "sdk"`) are reached through the relay
//! the front end gives (`SessionOptions::sdk_mcp_relay`). `/mcp` lists the servers (its data
//! with what the SDK's `mcp_status` reports) and restarts one; shutdown ends every server's
//! process group.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tine_api_client::{ToolArray, ToolDefinition};
use tine_config::settings::LoadedSettings;
use tine_mcp::{
    McpEvent, McpManager, McpOptions, McpServerInfo, McpServerStatus, McpSources, McpToolInfo,
    SdkMcpRelay,
};
use tine_permissions::{PermissionContext, PermissionRule, RuleBehavior, RuleSource};
use tine_query_loop::QueryEngine;
use tine_tools::{Tool, definition_of};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::elicitation::{ElicitationAsker, Elicitations};
use crate::emit::Emitter;
use crate::permission::Permissions;
use crate::tool_search::is_mcp_tool;

use crate::protocol::{Notice, SessionEvent};

/// The running servers and the task that reports their exits.
pub(crate) struct SessionMcp {
    pub manager: McpManager,
    reporter: JoinHandle<()>,
    /// The servers' open questions to the person (interactive sessions only).
    pub elicitations: Option<Arc<Elicitations>>,
    /// Servers turned off (`Op::McpToggle`): their tools are out of the array.
    disabled: std::collections::BTreeSet<String>,
    /// With tool search on, tools a restart brought that the model has not been told of.
    pub new_deferred: crate::tool_search::NewDeferredTools,
}

impl SessionMcp {
    /// Ends every server (bounded: one that does not exit when asked is killed) and the
    /// reporting task; an exit tine caused is not reported.
    pub(crate) async fn shutdown(self) {
        self.manager.shutdown().await;
        self.reporter.abort();
    }
}

/// Starts the servers the options and settings configure and returns them with their tools
/// (sorted by name; the pool puts them after the built-ins), the start-up warnings joining
/// `notices`; reading what oversized results were saved to is allowed from then on. `strict`
/// (`--strict-mcp-config`, and `--bare`) starts only the `configs` (`--mcp-config`) servers. No server configured:
/// nothing runs and `None` comes back. `interactive` (a person answers): the servers'
/// elicitations are asked through [`SessionEvent::Elicitation`] until `session` ends; else
/// they are declined. `sdk_relay` reaches the servers of the Agent SDK app driving the session
/// (`"type": "sdk"`); without one they fail, saying so.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn start(
    interactive: bool,
    session: &CancellationToken,
    configs: &[String],
    strict: bool,
    sdk_relay: Option<Arc<dyn SdkMcpRelay>>,
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
    loaded: &LoadedSettings,
    events: &Emitter,
    permissions: &mut PermissionContext,
    notices: &mut Vec<Notice>,
) -> (Option<SessionMcp>, Vec<Arc<dyn Tool>>) {
    let mut sources = McpSources::new(cwd).with_flag_configs(configs.iter().cloned());
    if let Some(user_home) = user_home {
        sources = sources.with_user_home(user_home);
    }
    sources.strict = strict;
    let config = tine_mcp::load_config(&sources, loaded);
    if config.servers.is_empty() && config.errors.is_empty() {
        return (None, Vec::new());
    }
    let mut mcp_options = McpOptions::from_env(home);
    mcp_options.sdk_relay = sdk_relay;
    let elicitations = interactive.then(|| Arc::new(Elicitations::default()));
    if let Some(questions) = &elicitations {
        mcp_options.elicitation = Some(Arc::new(ElicitationAsker {
            questions: Arc::clone(questions),
            events: events.clone(),
            session: session.clone(),
        }));
    }
    let (manager, tools, warnings) =
        McpManager::start_with_config(config, &sources, loaded, mcp_options).await;
    notices.extend(warnings.iter().map(|w| Notice::warning(w.to_string())));
    allow_reading_saved_output(permissions, home);
    let reporter = tokio::spawn(report_exits(manager.subscribe(), events.clone()));
    (
        Some(SessionMcp {
            manager,
            reporter,
            elicitations,
            disabled: Default::default(),
            new_deferred: Default::default(),
        }),
        tools,
    )
}

/// Reads of what oversized MCP results were saved to (`TINE_HOME/mcp-output`, outside the
/// project) are allowed: the truncation note tells the model to Read the file. A deny rule
/// still wins.
fn allow_reading_saved_output(permissions: &mut PermissionContext, home: &Path) {
    let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    let dir = home.join("mcp-output");
    let rule = PermissionRule::with_content("Read", format!("/{}/**", dir.display()));
    permissions.add_session_rule(rule, RuleBehavior::Allow, RuleSource::Session);
}

/// A server that went away mid-session becomes a warning, when it happens; a restart, a note.
async fn report_exits(mut exits: broadcast::Receiver<McpEvent>, events: Emitter) {
    loop {
        let notice = match exits.recv().await {
            Ok(McpEvent::ServerExited { name, reason }) => Notice::warning(format!(
                "MCP server {name} stopped: {reason}; its tools answer with an error until \
                 `/mcp restart {name}`"
            )),
            Ok(McpEvent::ServerRestarted { name, tools }) => {
                Notice::info(format!("MCP server {name} restarted ({tools} tools)"))
            }
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if !events.emit_free(SessionEvent::Notice(notice)) {
            return;
        }
    }
}

/// `/mcp` (every server with its scope, where it is configured and its state) and
/// `/mcp restart NAME`. The data is `{"mcp_servers": [...]}` (see [`server_data`]). A
/// restart that connects offers the server's tools from the next request on, as Claude Code
/// does after a reconnect: when they differ from what the array holds (the server failed at
/// start-up, or now offers other tools), the array changes once, on this explicit action.
pub(crate) async fn command(
    mcp: Option<&mut SessionMcp>,
    engine: &mut QueryEngine,
    permissions: &Permissions,
    args: &str,
) -> (String, bool, Value) {
    let mut words = args.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, ..) => (list(mcp.as_deref()), false, data(mcp.as_deref())),
        (Some("restart"), Some(name), None) => {
            let Some(mcp) = mcp else {
                return (
                    format!("no MCP server named `{name}` (none is configured)"),
                    true,
                    data(None),
                );
            };
            mcp.disabled.remove(name);
            match mcp.manager.restart(name).await {
                Ok(status @ McpServerStatus::Connected { .. }) => {
                    let manager = mcp.manager.clone();
                    let disabled = mcp.disabled.clone();
                    let data = data(Some(mcp));
                    let offered =
                        offer_tools(engine, &manager, permissions, &disabled, &mcp.new_deferred);
                    let note = if offered {
                        " Its tools are offered from the next request on."
                    } else {
                        ""
                    };
                    (format!("MCP server {name}: {status}.{note}"), false, data)
                }
                Ok(status) => (
                    format!("MCP server {name}: {status}"),
                    true,
                    data(Some(mcp)),
                ),
                Err(error) => (error.to_string(), true, data(Some(mcp))),
            }
        }
        _ => (
            "usage: /mcp (list the servers) or /mcp restart NAME".to_owned(),
            true,
            data(mcp.as_deref()),
        ),
    }
}

/// Puts the connected servers' tools in the engine's tool array: the built-ins as they are
/// (their bytes, the sandbox note among them), then every connected server's tools sorted by
/// name, as at start-up. Returns whether the array changed (an unchanged one keeps its bytes,
/// and the cache). With tool search on, the tools become the catalog's instead and the array
/// keeps its bytes (`tool_search::offer`); the ones new to it are named to the model with the
/// next prompt (`new_deferred`).
fn offer_tools(
    engine: &mut QueryEngine,
    manager: &McpManager,
    permissions: &Permissions,
    disabled: &std::collections::BTreeSet<String>,
    new_deferred: &crate::tool_search::NewDeferredTools,
) -> bool {
    let off: Vec<String> = disabled
        .iter()
        .map(|s| tine_mcp::tool_name(s, ""))
        .collect();
    let config = engine.config();
    let connected: Vec<Arc<dyn Tool>> = manager
        .tools()
        .into_iter()
        .filter(|tool| {
            let name = tool.name();
            !permissions.is_tool_denied(name)
                && !off.iter().any(|prefix| name.starts_with(prefix.as_str()))
        })
        .collect();
    // Tool search on, and every MCP tool the array sends is still offered: the catalog changes,
    // the array's bytes stay.
    let sent_still_offered = config
        .tool_definitions
        .iter()
        .filter(|d| is_mcp_tool(&d.name))
        .all(|d| connected.iter().any(|t| t.name() == d.name));
    if sent_still_offered
        && let Some(crate::tool_search::Offered { tools, array, new }) =
            crate::tool_search::offer(&config.tools, &config.tool_definitions, &connected)
    {
        tracing::info!(
            new = new.len(),
            "MCP tools changed by a restart or toggle: the deferred tools change, the array stays"
        );
        let changed = !new.is_empty()
            || array.deferred().count() != config.tool_definitions.deferred().count();
        new_deferred.add(new);
        engine.set_tools(tools, array);
        return changed;
    }
    let mut tools: Vec<Arc<dyn Tool>> = config
        .tools
        .iter()
        .filter(|tool| !is_mcp_tool(tool.name()))
        .cloned()
        .collect();
    let mut definitions: Vec<ToolDefinition> = config
        .tool_definitions
        .iter()
        .filter(|definition| !is_mcp_tool(&definition.name))
        .cloned()
        .collect();
    for tool in manager.tools() {
        let name = tool.name();
        if permissions.is_tool_denied(name)
            || tools.iter().any(|t| t.name() == name)
            || off.iter().any(|prefix| name.starts_with(prefix.as_str()))
        {
            continue;
        }
        definitions.push(definition_of(tool.as_ref()));
        tools.push(tool);
    }
    // The server tools (web search) stay where they were, after the client tools; the
    // deferred built-ins too.
    let array = ToolArray::new(definitions)
        .with_server_tools(config.tool_definitions.server_tools().to_vec())
        .with_deferred(
            config
                .tool_definitions
                .deferred()
                .filter(|d| !is_mcp_tool(&d.name))
                .cloned()
                .collect(),
        );
    if array == config.tool_definitions {
        return false;
    }
    tracing::info!(
        tools = tools.len(),
        "MCP tools changed by a restart or toggle: the tool array changes once"
    );
    engine.set_tools(tools.into(), array);
    true
}

fn list(mcp: Option<&SessionMcp>) -> String {
    let servers = mcp.map(|m| m.manager.statuses()).unwrap_or_default();
    if servers.is_empty() {
        return "No MCP servers configured (`tine mcp add`, `.mcp.json` or --mcp-config).\n"
            .to_owned();
    }
    let mut text = String::from("MCP servers:\n");
    for server in &servers {
        let status = match mcp.is_some_and(|m| m.disabled.contains(&server.name)) {
            true => "disabled".to_owned(),
            false => server.status.to_string(),
        };
        text.push_str(&format!(
            "- {} ({}, {}): {status}\n",
            server.name, server.scope, server.origin
        ));
    }
    text.push_str("\n`/mcp restart NAME` reconnects one.\n");
    text
}

fn data(mcp: Option<&SessionMcp>) -> Value {
    let servers: Vec<Value> = mcp
        .map(|m| m.manager.statuses())
        .unwrap_or_default()
        .iter()
        .map(|s| server_data(s, mcp.is_some_and(|m| m.disabled.contains(&s.name))))
        .collect();
    json!({ "mcp_servers": servers })
}

/// One server of `/mcp`'s data: `name`, `scope`, `origin` and `status` (the line `/mcp`
/// shows), and what the Agent SDK's `mcp_status` reports in its own field names: `state`
/// (its `status`: connected, failed, pending or disabled), `error` (when failed or pending),
/// `config` (without `env` or header values), `tools` (connected: `name`, `description`,
/// `annotations` with `readOnly`, `destructive`, `openWorld`) and `serverInfo` (connected:
/// `name`, `version`). `off`: turned off for the session (`Op::McpToggle`).
fn server_data(server: &McpServerInfo, off: bool) -> Value {
    let mut entry = json!({
        "name": server.name,
        "scope": server.scope.as_str(),
        "origin": server.origin,
        "status": match off {
            true => "disabled".to_owned(),
            false => server.status.to_string(),
        },
        "state": match off {
            true => "disabled",
            false => server.status.state_name(),
        },
        "config": server.config.to_public_json(),
    });
    if let Some(problem) = server.status.problem().filter(|_| !off) {
        entry["error"] = json!(problem);
    }
    if !off && matches!(server.status, McpServerStatus::Connected { .. }) {
        entry["tools"] = server.tools.iter().map(tool_data).collect();
        if let Some(identity) = &server.identity {
            entry["serverInfo"] = json!({"name": identity.name, "version": identity.version});
        }
    }
    entry
}

fn tool_data(tool: &McpToolInfo) -> Value {
    let mut entry = json!({ "name": tool.name });
    if let Some(description) = &tool.description {
        entry["description"] = json!(description);
    }
    let hints = [
        ("readOnly", tool.read_only_hint),
        ("destructive", tool.destructive_hint),
        ("openWorld", tool.open_world_hint),
    ];
    let annotations: serde_json::Map<String, Value> = hints
        .into_iter()
        .filter_map(|(key, hint)| Some((key.to_owned(), json!(hint?))))
        .collect();
    if !annotations.is_empty() {
        entry["annotations"] = Value::Object(annotations);
    }
    entry
}

/// `Op::McpToggle`: server `name` off (its tools leave the array, once, on this explicit
/// action); `Err` when there is no such server. On again is a restart (see [`command`]).
pub(crate) fn disable(
    mcp: Option<&mut SessionMcp>,
    engine: &mut QueryEngine,
    permissions: &Permissions,
    name: &str,
) -> Result<(String, Value), String> {
    let Some(mcp) = mcp.filter(|m| m.manager.statuses().iter().any(|s| s.name == name)) else {
        return Err(format!("no MCP server named `{name}`"));
    };
    mcp.disabled.insert(name.to_owned());
    offer_tools(
        engine,
        &mcp.manager,
        permissions,
        &mcp.disabled,
        &mcp.new_deferred,
    );
    Ok((
        format!(
            "MCP server {name}: disabled; its tools are out of the array from the next request on."
        ),
        data(Some(mcp)),
    ))
}

/// Whether server `name` is configured.
pub(crate) fn knows(mcp: Option<&SessionMcp>, name: &str) -> bool {
    mcp.is_some_and(|m| m.manager.statuses().iter().any(|s| s.name == name))
}

//! The messages of the control protocol that are not a session's plain output: the `system`
//! `init` line in Claude Code's shape, the echo of a user message (`--replay-user-messages`),
//! the sub-agents' `task_started`, `task_progress` and `task_notification` lines, and bad input said as a
//! `system` line the app can read (never an `error` line, which the SDK raises on).

use serde_json::{Value, json};
use tine_session::{CommandSource, SessionInfo, SubagentTotals, TaskKind, TaskState, TaskUpdate};

/// The `init` line: what the session is, as Claude Code says it.
pub(crate) fn init(info: &SessionInfo) -> Value {
    let names = |source: CommandSource| -> Vec<&str> {
        info.commands
            .iter()
            .filter(|c| c.source == source)
            .map(|c| c.name.as_str())
            .collect()
    };
    let mut slash_commands = names(CommandSource::Builtin);
    slash_commands.extend(names(CommandSource::Custom));
    slash_commands.extend(names(CommandSource::Skill));
    let api_key_source = if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        "ANTHROPIC_API_KEY"
    } else {
        "none"
    };
    json!({
        "type": "system",
        "subtype": "init",
        "session_id": info.session_id.to_string(),
        "cwd": info.cwd.display().to_string(),
        "tools": info.tools,
        "mcp_servers": mcp_servers(info),
        "model": info.model,
        "permissionMode": info.permission_mode.to_string(),
        "slash_commands": slash_commands,
        "skills": names(CommandSource::Skill),
        "apiKeySource": api_key_source,
        "output_style": "default",
        "plugins": [],
        "claude_code_version": tine_session::CLAUDE_CODE_PROTOCOL_VERSION,
        "tine_version": env!("CARGO_PKG_VERSION"),
        "uuid": new_uuid(),
    })
}

/// The MCP servers as the `init` line lists them: `[{name, status}]`, from the tools the
/// session offers (`mcp__SERVER__TOOL`).
fn mcp_servers(info: &SessionInfo) -> Vec<Value> {
    let mut servers: Vec<&str> = info
        .tools
        .iter()
        .filter_map(|t| t.strip_prefix("mcp__"))
        .filter_map(|t| t.split_once("__").map(|(server, _)| server))
        .collect();
    servers.dedup();
    servers
        .into_iter()
        .map(|name| json!({"name": name, "status": "connected"}))
        .collect()
}

/// A user message of the app's, echoed back (`--replay-user-messages`).
pub(crate) fn replayed_user(info: &SessionInfo, text: &str, uuid: Option<&str>) -> Value {
    json!({
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": Value::Null,
        "session_id": info.session_id.to_string(),
        "uuid": uuid.map_or_else(new_uuid, str::to_owned),
        "isReplay": true,
    })
}

/// A sub-agent's update as Claude Code's `system` lines (none for a shell): `task_started`
/// when it is `first` seen, then, while it runs, `task_progress` once it has done something,
/// or `task_notification` when it has ended.
pub(crate) fn task(info: &SessionInfo, task: &TaskUpdate, first: bool) -> Vec<Value> {
    if task.kind != TaskKind::Agent {
        return Vec::new();
    }
    let session_id = info.session_id.to_string();
    let mut lines = Vec::new();
    if first {
        lines.push(json!({
            "type": "system",
            "subtype": "task_started",
            "task_id": task.id,
            "description": task.title,
            "task_type": "local_agent",
            "uuid": new_uuid(),
            "session_id": session_id,
        }));
    }
    let status = match &task.state {
        TaskState::Running => {
            if let Some(activity) = &task.activity {
                lines.push(json!({
                    "type": "system",
                    "subtype": "task_progress",
                    "task_id": task.id,
                    "description": task.title,
                    "usage": usage(&activity.totals),
                    "last_tool_name": activity.recent.last().map(|call| call.tool.clone()),
                    "uuid": new_uuid(),
                    "session_id": session_id,
                }));
            }
            return lines;
        }
        TaskState::Completed => "completed",
        TaskState::Failed(_) => "failed",
        TaskState::Cancelled => "stopped",
    };
    lines.push(json!({
        "type": "system",
        "subtype": "task_notification",
        "task_id": task.id,
        "status": status,
        "output_file": task.output_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
        "summary": task.detail,
        "usage": task.activity.as_ref().map(|a| usage(&a.totals)),
        "uuid": new_uuid(),
        "session_id": session_id,
    }));
    lines
}

/// A task's usage as the SDKs read it (`total_tokens`, `tool_uses`, `duration_ms`).
fn usage(totals: &SubagentTotals) -> Value {
    json!({
        "total_tokens": totals.total_tokens,
        "tool_uses": totals.tool_uses,
        "duration_ms": u64::try_from(totals.duration.as_millis()).unwrap_or(u64::MAX),
    })
}

/// Bad input, for the app to read: the run goes on.
pub(crate) fn bad_input(line: usize, error: &str) -> Value {
    json!({
        "type": "system",
        "subtype": "input_error",
        "line": line,
        "error": format!("standard input line {line}: {error}"),
    })
}

pub(crate) fn new_uuid() -> String {
    tine_config::SessionId::new_random().to_string()
}

//! The app's control requests, as ops of the session protocol. A request the session answers
//! at once (interrupt) is answered right away; one whose answer is an event of its op (the
//! mode, a task stopped, an MCP server's state) waits for that event ([`Awaiting`]); one the
//! session queues behind the running turn (the model, thinking) is answered when queued, since
//! it applies from the next request on.

use std::collections::HashMap;

use serde_json::{Value, json};
use tine_session::{
    Op, OpId, PermissionMode, RewindScope, RewindTarget, SessionEvent, SessionHandle, UsageReport,
};

/// What an op's events must say before its control request is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Awaiting {
    /// `set_permission_mode`: `PermissionModeChanged` (or `OpFailed`).
    Mode,
    /// `mcp_status`: the `/mcp` command's output, as `{mcpServers: [...]}`.
    McpStatus,
    /// `mcp_reconnect`, `mcp_toggle`: a command output (an error output is an error).
    McpChange,
    /// `stop_task`: `TaskStopped` (or `OpFailed`).
    Stop,
    /// `rewind_files`: `Rewound` (or `RewindConflicts`, `OpFailed`).
    Rewind,
}

/// What to do with a control request: answer it now, or once an op's events say how it went.
pub(crate) enum Handled {
    Now(Result<Value, String>),
    Later(OpId, Awaiting),
}

/// The app's request `request` (its `subtype` and fields).
/// `prompts` maps the uuids of the user messages tine replayed to the ops that sent them
/// (`rewind_files` names one).
pub(crate) fn handle(
    session: &SessionHandle,
    request: &Value,
    usage: Option<&UsageReport>,
    prompts: &HashMap<String, OpId>,
) -> Handled {
    let text = |key: &str| request.get(key).and_then(Value::as_str);
    let submit = |op: Op| session.submit(op).map_err(|e| e.to_string());
    match text("subtype") {
        Some("initialize") => Handled::Now(Err("the session is initialized already".to_owned())),
        Some("interrupt") => Handled::Now(submit(Op::Interrupt).map(|_| json!({}))),
        Some("set_permission_mode") => {
            let mode = request.get("mode").cloned().unwrap_or(Value::Null);
            match serde_json::from_value::<PermissionMode>(mode) {
                Ok(mode) => later(submit(Op::SetPermissionMode(mode)), Awaiting::Mode),
                Err(_) => Handled::Now(Err(format!(
                    "unknown permission mode {}: use default, acceptEdits, plan, \
                     bypassPermissions or dontAsk",
                    request.get("mode").unwrap_or(&Value::Null)
                ))),
            }
        }
        Some("set_model") => {
            // No model (the SDK's `setModel()`) is the default: the session's own.
            let model = text("model").unwrap_or("default");
            Handled::Now(submit(Op::SetModel(model.to_owned())).map(|_| json!({})))
        }
        Some("set_max_thinking_tokens") => {
            let budget = request
                .get("max_thinking_tokens")
                .and_then(Value::as_u64)
                .and_then(|b| u32::try_from(b).ok());
            Handled::Now(submit(Op::SetThinking(budget)).map(|_| json!({})))
        }
        Some("get_context_usage") => Handled::Now(Ok(context_usage(usage))),
        Some("mcp_status") => later(
            submit(Op::Command {
                name: "mcp".to_owned(),
                args: String::new(),
            }),
            Awaiting::McpStatus,
        ),
        Some("mcp_reconnect") => match text("serverName") {
            Some(server) => later(
                submit(Op::McpRestart(server.to_owned())),
                Awaiting::McpChange,
            ),
            None => Handled::Now(Err("mcp_reconnect needs a serverName".to_owned())),
        },
        Some("mcp_toggle") => match (
            text("serverName"),
            request.get("enabled").and_then(Value::as_bool),
        ) {
            (Some(server), Some(enabled)) => later(
                submit(Op::McpToggle {
                    server: server.to_owned(),
                    enabled,
                }),
                Awaiting::McpChange,
            ),
            _ => Handled::Now(Err("mcp_toggle needs a serverName and enabled".to_owned())),
        },
        Some("stop_task") => match text("task_id") {
            Some(task) => later(submit(Op::StopTask(task.to_owned())), Awaiting::Stop),
            None => Handled::Now(Err("stop_task needs a task_id".to_owned())),
        },
        Some("rewind_files") => match text("user_message_id") {
            Some(uuid) => {
                let to = prompts.get(uuid).map_or_else(
                    || RewindTarget::Message(uuid.to_owned()),
                    |op| RewindTarget::Turn(*op),
                );
                let rewind = Op::Rewind {
                    to,
                    scope: RewindScope::Code,
                    force: false,
                };
                later(submit(rewind), Awaiting::Rewind)
            }
            None => Handled::Now(Err(
                "rewind_files needs the user_message_id of a user message".to_owned(),
            )),
        },
        Some(other) => Handled::Now(Err(format!("unknown control request subtype `{other}`"))),
        None => Handled::Now(Err("a control request needs a subtype".to_owned())),
    }
}

fn later(submitted: Result<OpId, String>, awaiting: Awaiting) -> Handled {
    match submitted {
        Ok(id) => Handled::Later(id, awaiting),
        Err(error) => Handled::Now(Err(error)),
    }
}

/// The answer an awaited op's event gives, if it is the one `awaiting` waits for.
pub(crate) fn answered(awaiting: Awaiting, msg: &SessionEvent) -> Option<Result<Value, String>> {
    match (awaiting, msg) {
        (_, SessionEvent::OpFailed { message }) => Some(Err(message.clone())),
        (Awaiting::Mode, SessionEvent::PermissionModeChanged(_)) => Some(Ok(json!({}))),
        (Awaiting::Stop, SessionEvent::TaskStopped(_)) => Some(Ok(json!({}))),
        (Awaiting::Rewind, SessionEvent::Rewound(report)) => {
            let files: Vec<String> = report
                .restored
                .iter()
                .chain(&report.removed)
                .map(|path| path.display().to_string())
                .collect();
            Some(Ok(json!({"canRewind": true, "filesChanged": files})))
        }
        (Awaiting::Rewind, SessionEvent::RewindConflicts { files, .. }) => {
            let files: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
            Some(Err(format!(
                "nothing was rewound: these files were changed by the session and since by \
                 someone else too: {}",
                files.join(", ")
            )))
        }
        (Awaiting::McpStatus, SessionEvent::CommandOutput(output)) => {
            Some(Ok(mcp_status(&output.data)))
        }
        (Awaiting::McpChange, SessionEvent::CommandOutput(output)) => Some(match output.is_error {
            true => Err(output.text.clone()),
            false => Ok(json!({})),
        }),
        _ => None,
    }
}

/// `/mcp`'s data as the SDK's `McpStatusResponse`.
fn mcp_status(data: &Value) -> Value {
    let servers: Vec<Value> = data
        .get("mcp_servers")
        .and_then(Value::as_array)
        .map(|servers| {
            servers
                .iter()
                .map(|server| {
                    let status = server.get("status").and_then(Value::as_str).unwrap_or("");
                    let state = if status.starts_with("connected") {
                        "connected"
                    } else if status == "disabled" {
                        "disabled"
                    } else if status.contains("trust") {
                        "needs-auth"
                    } else {
                        "failed"
                    };
                    let mut out = json!({
                        "name": server.get("name").cloned().unwrap_or(Value::Null),
                        "status": state,
                        "scope": server.get("scope").cloned().unwrap_or(Value::Null),
                    });
                    if state == "failed"
                        && let Some(object) = out.as_object_mut()
                    {
                        object.insert("error".to_owned(), json!(status));
                    }
                    if let (Some(tools), Some(object)) = (server.get("tools"), out.as_object_mut())
                    {
                        object.insert("tools".to_owned(), tools.clone());
                    }
                    out
                })
                .collect()
        })
        .unwrap_or_default();
    json!({ "mcpServers": servers })
}

/// `get_context_usage`: the last request's prompt against the window (tine does not break
/// the context down by kind: one category).
fn context_usage(usage: Option<&UsageReport>) -> Value {
    let (tokens, window, model) = usage.map_or((0, 0, String::new()), |u| {
        (u.context_tokens, u.context_window, u.model.clone())
    });
    let percentage = if window == 0 {
        0.0
    } else {
        tokens as f64 * 100.0 / window as f64
    };
    json!({
        "categories": [{"name": "Messages", "tokens": tokens, "color": "#8a8a8a"}],
        "totalTokens": tokens,
        "maxTokens": window,
        "rawMaxTokens": window,
        "percentage": percentage,
        "model": model,
        "isAutoCompactEnabled": true,
    })
}

//! The session's events as ACP `session/update`s, one session at a time: text and thinking
//! deltas as message chunks, a tool call announced once its input is complete (with its kind,
//! title, locations and the diff it would make) and updated as it runs and ends (a refusal is
//! its failed result),
//! TodoWrite as the agent's plan, the command table as the available commands, a new permission
//! mode as the current mode. A resumed conversation's history is replayed the same way.

use std::collections::{HashMap, HashSet};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk,
    CurrentModeUpdate, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionModeId,
    SessionUpdate, TextContent, ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    UnstructuredCommandInput,
};
use serde_json::Value;
use tine_api_client::StopReason;
use tine_session::{CommandInfo, HistoryItem, QueryEvent, SessionEvent, ToolOutput};

use crate::tool_calls;

/// The editor terminal each call ran in, by `tool_use` id: its end shows that terminal.
pub(crate) type Terminals = std::sync::Arc<std::sync::Mutex<HashMap<String, String>>>;

/// The tool whose calls are the plan, not tool calls.
const TODO_WRITE: &str = "TodoWrite";

/// What one session has announced so far.
#[derive(Debug, Default)]
pub(crate) struct Translator {
    /// Each announced call's tool, input and (a Write's) text before, by `tool_use` id.
    calls: HashMap<String, Call>,
    /// Calls shown as something else (TodoWrite: the plan).
    hidden: HashSet<String>,
    /// Calls already marked as running.
    running: HashSet<String>,
    /// Calls that have ended.
    finished: HashSet<String>,
    /// The editor terminal each call ran in.
    terminals: Terminals,
    /// The stop reason of the turn's last reply.
    pub(crate) last_stop: Option<StopReason>,
}

/// An announced call.
#[derive(Debug)]
struct Call {
    tool: String,
    input: Value,
    /// What a Write replaces, read before it runs.
    before: Option<String>,
}

fn text_chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

impl Translator {
    /// The updates `event` makes (none for what an editor does not show).
    pub(crate) fn updates(&mut self, event: &SessionEvent) -> Vec<SessionUpdate> {
        match event {
            SessionEvent::Configured(info) => vec![commands(&info.commands)],
            SessionEvent::TurnStarted => {
                self.last_stop = None;
                Vec::new()
            }
            SessionEvent::Query(event) => self.query(event),
            SessionEvent::ToolInput { id, tool, input } => self.announce(id, tool, input),
            // A call is announced before it is asked about (the ask may come first).
            SessionEvent::PermissionRequest(request) => match &request.tool_use_id {
                Some(id) => self.announce(id, &request.tool, &request.input),
                None => Vec::new(),
            },
            SessionEvent::PermissionModeChanged(mode) => vec![SessionUpdate::CurrentModeUpdate(
                CurrentModeUpdate::new(SessionModeId::new(mode.as_str())),
            )],
            SessionEvent::CommandOutput(output) if !output.text.is_empty() => {
                vec![SessionUpdate::AgentMessageChunk(text_chunk(&output.text))]
            }
            SessionEvent::PromptBlocked { reason } => vec![SessionUpdate::AgentMessageChunk(
                text_chunk(&format!("The prompt was blocked by a hook: {reason}")),
            )],
            _ => Vec::new(),
        }
    }

    fn query(&mut self, event: &QueryEvent) -> Vec<SessionUpdate> {
        match event {
            QueryEvent::TextDelta { text } => {
                vec![SessionUpdate::AgentMessageChunk(text_chunk(text))]
            }
            QueryEvent::ThinkingDelta { text } => {
                vec![SessionUpdate::AgentThoughtChunk(text_chunk(text))]
            }
            QueryEvent::AssistantMessage { stop_reason, .. } => {
                self.last_stop = stop_reason.clone();
                Vec::new()
            }
            QueryEvent::ToolProgress { tool_use_id, .. } => {
                if self.hidden.contains(tool_use_id) || !self.running.insert(tool_use_id.clone()) {
                    return Vec::new();
                }
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    ToolCallId::new(tool_use_id.as_str()),
                    ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
                ))]
            }
            QueryEvent::ToolResult {
                tool_use_id,
                tool,
                output,
            } => self.finished(tool_use_id, tool, output),
            _ => Vec::new(),
        }
    }

    /// A call whose input is complete: the tool call, or for TodoWrite the plan; once.
    fn announce(&mut self, id: &str, tool: &str, input: &Value) -> Vec<SessionUpdate> {
        if self.calls.contains_key(id) {
            return Vec::new();
        }
        let before = tool_calls::text_before(tool, input);
        let update = if tool == TODO_WRITE {
            self.hidden.insert(id.to_owned());
            SessionUpdate::Plan(plan(input))
        } else {
            SessionUpdate::ToolCall(tool_calls::announce(id, tool, input, before.as_deref()))
        };
        let call = Call {
            tool: tool.to_owned(),
            input: input.clone(),
            before,
        };
        self.calls.insert(id.to_owned(), call);
        vec![update]
    }

    fn finished(&mut self, id: &str, tool: &str, output: &ToolOutput) -> Vec<SessionUpdate> {
        self.running.remove(id);
        self.finished.insert(id.to_owned());
        if self.hidden.contains(id) {
            return Vec::new();
        }
        let call = self.calls.get(id);
        let input = call.map(|call| &call.input);
        let before = call.and_then(|call| call.before.as_deref());
        let mut update = tool_calls::finished(id, tool, input, before, output);
        let terminal = self
            .terminals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(id);
        if let Some(terminal) = terminal {
            // The editor shows the run in its terminal; the text is for the model.
            update.fields.content = Some(vec![
                agent_client_protocol::v1::schema::ToolCallContent::Terminal(
                    agent_client_protocol::v1::schema::Terminal::new(terminal),
                ),
            ]);
        }
        vec![SessionUpdate::ToolCallUpdate(update)]
    }

    /// Whether an announced call that has not finished names `path` (as its `file_path` or
    /// `notebook_path`, absolute or relative to the project).
    pub(crate) fn names(&self, path: &std::path::Path) -> bool {
        self.calls.iter().any(|(id, call)| {
            !self.finished.contains(id)
                && ["file_path", "notebook_path"].iter().any(|key| {
                    call.input
                        .get(*key)
                        .and_then(Value::as_str)
                        .is_some_and(|named| !named.is_empty() && path.ends_with(named))
                })
        })
    }

    /// The unfinished Bash call running `command`, if announced.
    pub(crate) fn running_command(&self, command: &str) -> Option<String> {
        self.calls
            .iter()
            .find(|(id, call)| {
                call.tool == "Bash"
                    && !self.finished.contains(*id)
                    && call.input.get("command").and_then(Value::as_str) == Some(command)
            })
            .map(|(id, _)| id.clone())
    }

    /// Which call ran in which editor terminal (filled as terminals open).
    pub(crate) fn terminals(&self) -> Terminals {
        std::sync::Arc::clone(&self.terminals)
    }

    /// A resumed conversation, shown again.
    pub(crate) fn replay(&mut self, items: &[HistoryItem]) -> Vec<SessionUpdate> {
        let mut updates = Vec::new();
        for item in items {
            match item {
                HistoryItem::Prompt(text) => {
                    updates.push(SessionUpdate::UserMessageChunk(text_chunk(text)));
                }
                HistoryItem::Text(text) => {
                    updates.push(SessionUpdate::AgentMessageChunk(text_chunk(text)));
                }
                HistoryItem::Thinking(text) => {
                    updates.push(SessionUpdate::AgentThoughtChunk(text_chunk(text)));
                }
                HistoryItem::ToolCall { id, tool, input } => {
                    updates.extend(self.announce(id, tool, input));
                }
                HistoryItem::ToolResult {
                    id,
                    is_error,
                    content,
                } => {
                    let tool = self
                        .calls
                        .get(id)
                        .map(|call| call.tool.clone())
                        .unwrap_or_default();
                    let output = if *is_error {
                        ToolOutput::error(content.clone())
                    } else {
                        ToolOutput::text(content.clone())
                    };
                    updates.extend(self.finished(id, &tool, &output));
                }
                _ => {}
            }
        }
        updates
    }
}

/// The session's slash commands (built-ins, skills, custom commands) for the editor's menu.
pub(crate) fn commands(table: &[CommandInfo]) -> SessionUpdate {
    let commands = table
        .iter()
        .map(|command| {
            AvailableCommand::new(command.name.as_str(), command.description.as_str()).input(Some(
                AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(
                    "arguments (optional)",
                )),
            ))
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands))
}

/// TodoWrite's list as the agent's plan.
fn plan(input: &Value) -> Plan {
    let entries = input
        .get("todos")
        .and_then(Value::as_array)
        .map(|todos| {
            todos
                .iter()
                .map(|todo| {
                    let field = |name: &str| todo.get(name).and_then(Value::as_str);
                    let status = match field("status") {
                        Some("in_progress") => PlanEntryStatus::InProgress,
                        Some("completed") => PlanEntryStatus::Completed,
                        _ => PlanEntryStatus::Pending,
                    };
                    let priority = match field("priority") {
                        Some("high") => PlanEntryPriority::High,
                        Some("low") => PlanEntryPriority::Low,
                        _ => PlanEntryPriority::Medium,
                    };
                    PlanEntry::new(field("content").unwrap_or_default(), priority, status)
                })
                .collect()
        })
        .unwrap_or_default();
    Plan::new(entries)
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;

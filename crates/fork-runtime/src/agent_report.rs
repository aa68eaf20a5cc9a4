//! What the parent, and an agent's output file, read about a sub-agent: the launch and
//! sent-to-background texts, the task's state and report from its run, and a message as the
//! output file's lines.

use tine_api_client::{ContentBlock, Message, MessageContent, Role};
use tine_query_loop::Terminal;
use tine_tools::ToolOutput;

use crate::fork::ForkResult;
use crate::tasks::{TaskOutput, TaskState};

/// What the parent reads when the person sent a running agent to the background.
pub(crate) fn sent_to_background(id: &str, description: &str, output: &TaskOutput) -> ToolOutput {
    ToolOutput::text(format!(
        "The user sent this agent to the background.\nagentId: {id} ({description})\nIt goes on \
         working; you will be notified with a <task-notification> when it completes. Do not \
         duplicate its work. Its output so far: {} (or TaskOutput with task_id {id}).",
        output.path().display()
    ))
    .with_summary(format!("sent {id} to the background"))
}

/// What the parent reads when an agent was started in the background.
pub(crate) fn launched(id: &str, description: &str, output: &TaskOutput) -> ToolOutput {
    ToolOutput::text(format!(
        "Async agent launched successfully.\nagentId: {id} ({description})\nThe agent is working \
         in the background; you will be notified with a <task-notification> when it completes. \
         Do not duplicate its work. Its output so far: {} (or TaskOutput with task_id {id}).",
        output.path().display()
    ))
    .with_summary(format!("started {id} in the background"))
}

/// The task's state and report from the agent's run.
pub(crate) fn outcome(result: &ForkResult) -> (TaskState, String) {
    let report = result.reply();
    let state = match &result.terminal {
        Terminal::Aborted => TaskState::Cancelled,
        terminal if terminal.is_success() => TaskState::Completed,
        terminal => TaskState::Failed(terminal.describe()),
    };
    let report = match (&state, report.trim().is_empty()) {
        (TaskState::Completed, true) => "(the agent finished without a report)".to_owned(),
        (TaskState::Failed(why), true) => why.clone(),
        (TaskState::Cancelled, true) => "(stopped before it reported)".to_owned(),
        _ => report,
    };
    (state, report)
}

/// A message as a few lines of the output file (text, tool calls by name, results' sizes).
pub(crate) fn render_for_output(message: &Message) -> String {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let mut out = String::new();
    match &message.content {
        MessageContent::Text(text) => out.push_str(&format!("[{role}] {text}\n")),
        MessageContent::Blocks(blocks) => {
            for block in blocks {
                match block {
                    ContentBlock::Text(t) => out.push_str(&format!("[{role}] {}\n", t.text)),
                    ContentBlock::ToolUse(call) => {
                        out.push_str(&format!("[tool call] {}({})\n", call.name, call.input));
                    }
                    ContentBlock::ToolResult(result) => {
                        out.push_str(&format!("[tool result] {}\n", result.tool_use_id));
                    }
                    // Not worth a line of a log people read along.
                    ContentBlock::Image(_)
                    | ContentBlock::Document(_)
                    | ContentBlock::Thinking(_)
                    | ContentBlock::RedactedThinking(_)
                    | ContentBlock::ToolReference(_)
                    | ContentBlock::Unknown(_) => {}
                }
            }
        }
    }
    out
}

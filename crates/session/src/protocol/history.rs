//! A resumed conversation as a front end shows it again: [`HistoryItem`]s, oldest first, sent
//! as [`SessionEvent::History`](crate::SessionEvent::History). What tine itself put into user
//! messages (`<system-reminder>` blocks: the session's context, recalled memories) is not the
//! person's and is left out; a compaction is its boundary, and the summary message after it
//! (the model's new history, not something the person typed) is not a prompt.

use serde_json::Value;
use tine_query_loop::CompactBoundary;

/// One step of a conversation shown again.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryItem {
    /// The person's words: a new turn starts.
    Prompt(String),
    /// Text of a reply (markdown).
    Text(String),
    /// Thinking of a reply.
    Thinking(String),
    /// A tool call of a reply.
    ToolCall {
        /// The `tool_use` id.
        id: String,
        /// The tool's name.
        tool: String,
        /// Its input.
        input: Value,
    },
    /// A tool call's result, as the model read it.
    ToolResult {
        /// The `tool_use` id it answers.
        id: String,
        /// Whether it was an error (a refusal among them).
        is_error: bool,
        /// Its text.
        content: String,
    },
    /// The conversation was compacted here (the chain starts at the last compaction).
    Compaction(CompactBoundary),
}

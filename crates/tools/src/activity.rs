//! What a tool that runs a sub-agent (the Agent tool) tells UIs of it: while it runs, its
//! latest calls and totals as a [`ToolProgress`](crate::ToolProgress) payload
//! ([`SubagentProgress`], with the message its loop just added, for front ends that show the
//! nested transcript); when it ends, its totals ([`crate::ToolDisplay::Agent`]). Display only:
//! nothing here reaches a request.

use std::time::Duration;

use tine_api_client::{Message, StopReason, Usage};

/// The latest calls a progress report carries (a UI shows them and "+N more tool uses").
pub const RECENT_SUBAGENT_CALLS: usize = 3;

/// What a sub-agent has done so far (Claude Code's task usage: `tool_uses`, `total_tokens`,
/// `duration_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubagentTotals {
    /// Tool calls it has made.
    pub tool_uses: u32,
    /// Its latest request's tokens, prompt and output (how much context it holds).
    pub total_tokens: u64,
    /// Time since it started.
    pub duration: Duration,
}

/// One call a sub-agent made, as a line reads it: `Read(src/config.rs)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentCall {
    /// The tool.
    pub tool: String,
    /// Its argument as people read it ([`crate::call_summary`]).
    pub summary: String,
}

/// A sub-agent's totals and latest calls.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubagentActivity {
    /// What it has done so far.
    pub totals: SubagentTotals,
    /// Its latest calls, oldest first, at most [`RECENT_SUBAGENT_CALLS`].
    pub recent: Vec<SubagentCall>,
}

impl SubagentActivity {
    /// Calls made that `recent` does not list.
    pub fn more(&self) -> u32 {
        let listed = u32::try_from(self.recent.len()).unwrap_or(u32::MAX);
        self.totals.tool_uses.saturating_sub(listed)
    }
}

/// A message a sub-agent's loop added.
#[derive(Debug, Clone, PartialEq)]
pub enum SubagentStep {
    /// A reply of its model.
    Reply {
        /// The reply.
        message: Message,
        /// The uuid of its record in the sub-agent's transcript.
        uuid: String,
        /// The API's id of the reply (`msg_…`).
        id: String,
        /// The model that answered.
        model: String,
        /// Why the model stopped.
        stop_reason: Option<StopReason>,
        /// The reply's usage.
        usage: Usage,
    },
    /// A user-role message its loop appended (tool results, a hook's reason).
    User {
        /// The message.
        message: Message,
        /// The uuid of its record.
        uuid: String,
    },
}

/// A running sub-agent's progress, reported each time its loop adds a message.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentProgress {
    /// The sub-agent's task id (`a_…`).
    pub agent_id: String,
    /// Its totals and latest calls, as of `step`.
    pub activity: SubagentActivity,
    /// The message just added.
    pub step: SubagentStep,
}

//! The SubagentStop call point: when a sub-agent's model ends a turn, its loop runs the
//! [`SubagentStopHook`] (the session implements it with the user's hooks) with who the agent
//! is ([`SubagentIdentity`]), as Claude Code's `SubagentStopHookInput` says it: `agent_id`,
//! `agent_type`, `agent_transcript_path`, and the agent's last reply.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use tine_query_loop::{StopContext, StopHookOutcome, StopHooks};

use crate::fork::last_reply;

/// Who a sub-agent is, for the hooks run in its loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentIdentity {
    /// Its task id (`a_` + 8 base-36), which names its sidechain transcript and output file.
    pub agent_id: String,
    /// `fork`, `general-purpose`, `Explore`, `Plan` or a custom agent's name.
    pub agent_type: String,
    /// Its sidechain transcript, when it has one.
    pub transcript_path: Option<PathBuf>,
    /// Where it works: the session's directory, or its own worktree.
    pub cwd: PathBuf,
}

/// Runs when a sub-agent's model ends a turn with no tool calls; a block makes the agent go
/// on with the reason (bounded as the main thread's Stop hooks are).
pub trait SubagentStopHook: Send + Sync {
    /// Decides whether `agent` may stop now.
    fn on_subagent_stop<'a>(
        &'a self,
        agent: &'a SubagentIdentity,
        ctx: StopContext<'a>,
    ) -> BoxFuture<'a, StopHookOutcome>;
}

/// One agent's stop hooks, as its loop's [`StopHooks`].
pub(crate) struct AgentStopHooks {
    pub(crate) hook: Arc<dyn SubagentStopHook>,
    pub(crate) agent: SubagentIdentity,
}

impl StopHooks for AgentStopHooks {
    fn on_stop<'a>(&'a self, ctx: StopContext<'a>) -> BoxFuture<'a, StopHookOutcome> {
        self.hook.on_subagent_stop(&self.agent, ctx)
    }
}

/// The text of the last assistant message of `ctx` (Claude Code's `last_assistant_message`).
pub fn last_assistant_text(ctx: &StopContext<'_>) -> Option<String> {
    last_reply(ctx.messages)
}

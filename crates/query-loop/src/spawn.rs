//! How a tool reaches the turn in progress: the Agent tool forks the conversation it
//! is called from, but the session's cache-safe slot is empty mid-turn by design (it describes
//! a finished turn). So the loop hands every tool call a [`TurnInProgress`] (the template the
//! turn's requests are built from and the messages so far, the reply whose calls are running
//! last) as a call-scoped extension of its `ToolContext`, and the Agent tool gives it to the
//! session's [`SubagentSpawner`] (fork-runtime implements it; the session stores it on the
//! context as a [`Spawner`]). This crate knows neither forks nor agents: only these two shapes.

use std::sync::Arc;

use futures::future::BoxFuture;
use tine_api_client::Message;
use tine_tools::{ContextExtension, Tool, ToolContext, ToolError, ToolOutput};

use crate::params::QuerySource;
use crate::request::RequestTemplate;

/// The turn a tool call runs in, as the loop sees it when the call starts.
#[derive(Clone)]
pub struct TurnInProgress {
    /// What every request of this loop is built from: system prompt bytes, the tool array,
    /// model, thinking, replacement decisions.
    pub template: RequestTemplate,
    /// The tools that run the calls of this loop, the ones `template`'s tool array describes
    /// (after `/mcp restart` they may be newer than the session's first set): a fork child
    /// sends that array, so it must be able to run every tool in it.
    pub tools: Arc<[Arc<dyn Tool>]>,
    /// The conversation so far; the last message is the reply whose tool calls are running.
    pub messages: Arc<[Message]>,
    /// Who runs the loop (`repl_main_thread`, a fork child's source, ...): the recursion
    /// guard's fast path.
    pub query_source: QuerySource,
    /// The `tool_use` id of the call this context belongs to.
    pub tool_use_id: String,
}

impl std::fmt::Debug for TurnInProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnInProgress")
            .field("template", &self.template)
            .field("tools", &self.tools.len())
            .field("messages", &self.messages.len())
            .field("query_source", &self.query_source)
            .field("tool_use_id", &self.tool_use_id)
            .finish()
    }
}

impl ContextExtension for TurnInProgress {
    /// Never inherited: a fork runs its own loop, which hands its own calls their turn.
    fn fork(&self) -> Option<Self> {
        None
    }
}

/// What the Agent tool was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRequest {
    /// A short (3-5 word) description of the task, for people.
    pub description: String,
    /// The task itself: a fork child's directive, or a typed agent's first message.
    pub prompt: String,
    /// A typed agent (`general-purpose`, `Explore`, `Plan`, a custom one); `None` or `"fork"`:
    /// a fork child of the turn in progress.
    pub subagent_type: Option<String>,
    /// A model for a typed agent (`sonnet`, `opus`, `haiku`, a full name, `inherit`).
    pub model: Option<String>,
    /// Run a typed agent in the background (fork children always are).
    pub run_in_background: Option<bool>,
}

/// Starts sub-agents from the turn in progress. Implemented above this crate (fork-runtime's
/// `AgentRuntime`); the Agent tool finds it on the context as a [`Spawner`].
pub trait SubagentSpawner: Send + Sync {
    /// Runs (or starts in the background) what `request` asks for, from `turn`, in a context
    /// derived from `ctx` (whose token is the calling turn's: cancelling the turn cancels the
    /// child). The output is the Agent tool's result.
    fn spawn<'a>(
        &'a self,
        turn: &'a TurnInProgress,
        request: AgentRequest,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// The session's spawner, as stored on the `ToolContext` (forks see the same one, so a fork
/// child's call reaches it and is refused there with an error result).
#[derive(Clone)]
pub struct Spawner(pub Arc<dyn SubagentSpawner>);

impl ContextExtension for Spawner {
    fn fork(&self) -> Option<Self> {
        Some(self.clone())
    }
}

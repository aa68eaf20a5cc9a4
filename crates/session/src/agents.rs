//! Sub-agents in the session: the typed agents this project and user define (and an app
//! gives: `SessionOptions::agents`), the
//! Agent and task tools in the pool, and, once the engine exists, the [`AgentRuntime`] and the
//! [`TaskRegistry`] stored on the session's `ToolContext` (the Agent tool finds the spawner
//! there, the task tools the registry; forks see both). Background agents' notifications are
//! delivered as further turns by the session's task (`actor`). The user's SubagentStop hooks
//! run in each sub-agent's loop.

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use tine_fork_runtime::{
    AgentDefinition, AgentRuntime, AgentUserContext, AgentWorktree, ParentContext,
    SubagentIdentity, SubagentStopHook, TaskNotification, TaskRegistry, agent_dirs, agent_tools,
    last_assistant_text, load_agents,
};
use tine_permissions::PermissionContext;
use tine_query_loop::SessionContext;
use tine_query_loop::hooks::{Hooks, SubagentStop};
use tine_query_loop::{QueryEngine, Spawner, StopContext, StopHookOutcome};
use tine_tools::{Tool, ToolContext};

use crate::protocol::Notice;

/// The session's typed agents: built-ins, then `~/.claude/agents`, `TINE_HOME/agents`,
/// `.claude/agents`, `.tine/agents` (later wins a name); a file that cannot be read is a
/// warning.
pub(crate) fn definitions(
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
    app: &[AgentDefinition],
    notices: &mut Vec<Notice>,
) -> Arc<[AgentDefinition]> {
    let (mut agents, errors) = load_agents(&agent_dirs(cwd, home, user_home));
    notices.extend(errors.into_iter().map(|e| Notice::warning(e.to_string())));
    // The app's win a name, as Claude Code's SDK agents do.
    for agent in app {
        agents.retain(|a| a.name != agent.name);
        agents.push(agent.clone());
    }
    agents.into()
}

/// The Agent, TaskOutput and TaskStop tools (the pool sorts them in with the built-ins).
pub(crate) fn tools(agents: &Arc<[AgentDefinition]>) -> Vec<Arc<dyn Tool>> {
    agent_tools(Arc::clone(agents))
}

/// Stores the spawner and the task registry (output under `TINE_HOME/tasks`) on the session's
/// tool context, which the engine and the forks' parent share.
pub(crate) fn install(
    engine: &QueryEngine,
    parent: &Arc<ParentContext>,
    agents: Arc<[AgentDefinition]>,
    home: &Path,
    context: &SessionContext,
) -> TaskRegistry {
    let tasks = TaskRegistry::new(home.join("tasks"));
    let mut runtime = AgentRuntime::new(
        Arc::clone(parent),
        Arc::clone(&engine.config().can_use_tool),
        agents,
        tasks.clone(),
    );
    if let Some(full) = engine.config().user_context.clone() {
        runtime = runtime.with_user_context(user_context(context, full));
    }
    if let Some(hooks) = engine.config().hooks.clone() {
        runtime = runtime.with_stop_hook(Arc::new(SubagentStopHooks(hooks)));
    }
    let context = engine.tool_context();
    context.insert_ext(tasks.clone());
    context.insert_ext(Spawner(Arc::new(runtime)));
    tasks
}

/// What typed agents are told before their task: the main thread's block, and the
/// environment alone (no git status, no instruction files) for Explore and Plan.
fn user_context(context: &SessionContext, full: Arc<str>) -> AgentUserContext {
    let mut lean = context.clone();
    lean.git = None;
    lean.instructions.clear();
    AgentUserContext {
        full,
        lean: Arc::from(lean.user_context()),
    }
}

/// The worktree of the sub-agent whose call `ctx` belongs to (`isolation: worktree`).
pub(crate) fn worktree_of(ctx: &ToolContext) -> Option<Arc<AgentWorktree>> {
    ctx.ext::<AgentWorktree>()
}

/// A call of a sub-agent in its own worktree is judged with that worktree as its project:
/// its writes there follow the project's rules (its protected directories looked for below
/// the worktree's root, not in `TINE_HOME`'s `.tine`), while a write back into the main
/// checkout is an outside-project write. Rules written for the main checkout's paths stay
/// rooted there.
pub(crate) fn judge_in_worktree(context: &mut PermissionContext, worktree: &AgentWorktree) {
    context.cwd = worktree.cwd.clone();
    context.isolated_root = Some(worktree.root.clone());
}

/// The notifications of background agents that ended together, as one user message.
pub(crate) fn notifications_prompt(notifications: &[TaskNotification]) -> String {
    notifications
        .iter()
        .map(TaskNotification::message)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The user's SubagentStop hooks, run in a sub-agent's loop each time its model ends a turn:
/// exit 2 or `"decision": "block"` gives the reason to the agent and it goes on (at most
/// `DEFAULT_MAX_STOP_HOOK_CONTINUATIONS` times, then it stops anyway), as Claude Code does.
/// Their input is Claude Code's: the common fields (`cwd` the agent's, its worktree if it has
/// one), `stop_hook_active`, `agent_id`, `agent_type` (the matcher's target),
/// `agent_transcript_path`, `last_assistant_message`.
struct SubagentStopHooks(Hooks);

impl SubagentStopHook for SubagentStopHooks {
    fn on_subagent_stop<'a>(
        &'a self,
        agent: &'a SubagentIdentity,
        ctx: StopContext<'a>,
    ) -> BoxFuture<'a, StopHookOutcome> {
        Box::pin(async move {
            let stop = SubagentStop {
                stop_hook_active: ctx.stop_hook_active,
                agent_id: agent.agent_id.clone(),
                agent_type: agent.agent_type.clone(),
                agent_transcript_path: agent.transcript_path.clone(),
                last_assistant_message: last_assistant_text(&ctx),
            };
            let hooks = if agent.cwd == self.0.cwd() {
                self.0.clone()
            } else {
                self.0.in_dir(agent.cwd.clone())
            };
            let outcome = hooks.subagent_stop(&stop).await;
            tracing::debug!(?outcome, agent = %agent.agent_id, "SubagentStop hooks ran");
            outcome
        })
    }
}

//! Sub-agents in the session (issue 15): the typed agents this project and user define, the
//! Agent and task tools in the pool, and, once the engine exists, the [`AgentRuntime`] and the
//! [`TaskRegistry`] stored on the session's `ToolContext` (the Agent tool finds the spawner
//! there, the task tools the registry; forks see both). Background agents' notifications are
//! delivered as further turns by the front end (`SessionHandle::agent_reports`).

use std::path::Path;
use std::sync::Arc;

use futures::future::BoxFuture;
use tine_fork_runtime::{
    AgentDefinition, AgentRuntime, ParentContext, SubagentStop, SubagentStopHook, TaskNotification,
    TaskRegistry, agent_dirs, agent_tools, load_agents,
};
use tine_query_loop::hooks::Hooks;
use tine_query_loop::{QueryEngine, Spawner};
use tine_tools::Tool;

use crate::event::Notice;

/// The session's typed agents: built-ins, then `~/.claude/agents`, `TINE_HOME/agents`,
/// `.claude/agents`, `.tine/agents` (later wins a name); a file that cannot be read is a
/// warning.
pub(crate) fn definitions(
    cwd: &Path,
    home: &Path,
    user_home: Option<&Path>,
    notices: &mut Vec<Notice>,
) -> Arc<[AgentDefinition]> {
    let (agents, errors) = load_agents(&agent_dirs(cwd, home, user_home));
    notices.extend(errors.into_iter().map(|e| Notice::warning(e.to_string())));
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
) -> TaskRegistry {
    let tasks = TaskRegistry::new(home.join("tasks"));
    let mut runtime = AgentRuntime::new(
        Arc::clone(parent),
        Arc::clone(&engine.config().can_use_tool),
        agents,
        tasks.clone(),
    );
    if let Some(hooks) = engine.config().hooks.clone() {
        runtime = runtime.with_stop_hook(Arc::new(SubagentStopHooks(hooks)));
    }
    let context = engine.tool_context();
    context.insert_ext(tasks.clone());
    context.insert_ext(Spawner(Arc::new(runtime)));
    tasks
}

/// The notifications of background agents that ended together, as one user message.
pub(crate) fn notifications_prompt(notifications: &[TaskNotification]) -> String {
    notifications
        .iter()
        .map(TaskNotification::message)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The user's SubagentStop hooks, run when a sub-agent has ended (its report is already
/// final, so a hook's block is logged, not obeyed).
struct SubagentStopHooks(Hooks);

impl SubagentStopHook for SubagentStopHooks {
    fn on_subagent_stop(&self, stop: SubagentStop) -> BoxFuture<'static, ()> {
        let hooks = self.0.clone();
        Box::pin(async move {
            let outcome = hooks.subagent_stop(false).await;
            tracing::debug!(task = %stop.task_id, agent = %stop.agent_type, ?outcome, "SubagentStop hooks ran");
        })
    }
}

//! The Agent tool and the task tools (seed 003 §七). Agent `{description, prompt,
//! subagent_type?, model?, run_in_background?}` needs no approval: it reads the turn in
//! progress and the session's [`Spawner`] from its context (the loop puts the one there per
//! call, the session the other) and hands the call over. TaskOutput reads a task's state and
//! output (an agent of the registry, or a background shell); TaskStop stops one.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tine_permissions::{PermissionTarget, ToolVerdict};
use tine_query_loop::{AgentRequest, Spawner, TurnInProgress};
use tine_tools::{
    BackgroundTasks, TaskStatus, Tool, ToolContext, ToolError, ToolFuture, ToolOutput, parse_input,
};

use crate::agents::AgentDefinition;
use crate::tasks::{TaskRegistry, TaskState};

/// The Agent tool. Its description lists the session's typed agents, once at start (it is
/// part of the tool array, so it never changes during the session).
#[derive(Debug, Clone)]
pub struct AgentTool {
    agents: Arc<[AgentDefinition]>,
}

impl AgentTool {
    /// The Agent tool, offering `agents`.
    pub fn new(agents: Arc<[AgentDefinition]>) -> Self {
        Self { agents }
    }
}

#[derive(Deserialize)]
struct AgentInput {
    description: String,
    prompt: String,
    subagent_type: Option<String>,
    model: Option<String>,
    run_in_background: Option<bool>,
}

const AGENT_DESCRIPTION: &str = "\
Starts a sub-agent on a task. Its result is not shown to the user: pass on what matters.
- Without `subagent_type` it is a fork of you: it inherits this whole conversation (sharing its \
prompt cache, so it costs little), works in the background on the directive in `prompt`, and \
reports back in a <task-notification> message. Fork for independent work in parallel: several \
Agent calls in one reply, one directive each. A fork cannot fork.
- With `subagent_type` it is a specialised agent with its own instructions and tools and a \
fresh context that does not see this conversation: put all it needs in `prompt`. Its report \
is this call's result, unless `run_in_background`. Types:";

impl Tool for AgentTool {
    fn name(&self) -> &str {
        "Agent"
    }

    fn aliases(&self) -> &[&str] {
        &["Task"]
    }

    fn description(&self) -> String {
        let mut text = AGENT_DESCRIPTION.to_owned();
        for agent in self.agents.iter() {
            let tools = agent
                .tools
                .as_ref()
                .map_or_else(|| "all tools".to_owned(), |t| t.join(", "));
            text.push_str(&format!(
                "\n- {}: {} (Tools: {tools})",
                agent.name, agent.description
            ));
        }
        text
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "The task in 3-5 words"
                },
                "prompt": {
                    "type": "string",
                    "description": "The task (a fork's directive)"
                },
                "subagent_type": {
                    "type": "string",
                    "description": "A specialised agent; leave it out to fork"
                },
                "model": {
                    "type": "string",
                    "description": "A typed agent's model: sonnet, opus, haiku, inherit or a full name"
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Run a typed agent in the background (forks always are); you are notified when it ends"
                }
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: AgentInput = parse_input(input)?;
            let Some(spawner) = ctx.ext::<Spawner>() else {
                return Err(ToolError::Failed(
                    "sub-agents are not available in this session".to_owned(),
                ));
            };
            let Some(turn) = ctx.ext::<TurnInProgress>() else {
                return Err(ToolError::Failed(
                    "Agent was called outside a turn; there is nothing to start it from".to_owned(),
                ));
            };
            let request = AgentRequest {
                description: input.description,
                prompt: input.prompt,
                subagent_type: input.subagent_type,
                model: input.model,
                run_in_background: input.run_in_background,
            };
            spawner.0.spawn(&turn, request, ctx).await
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        named_by(input, "subagent_type")
    }

    /// Starting an agent needs no approval: each of its own calls is judged.
    fn check_permissions(&self, _input: &Value, _ctx: &ToolContext) -> ToolVerdict {
        ToolVerdict::Allow {
            reason: "starting a sub-agent needs no approval; its calls are checked".to_owned(),
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }

    /// Several agents of one reply start together.
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        let kind = input
            .get("subagent_type")
            .and_then(Value::as_str)
            .unwrap_or("fork");
        let description = input
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        format!("Agent[{kind}]({description})")
    }
}

#[derive(Deserialize)]
struct TaskIdInput {
    task_id: String,
}

/// The TaskOutput tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskOutputTool;

impl Tool for TaskOutputTool {
    fn name(&self) -> &str {
        "TaskOutput"
    }

    fn description(&self) -> String {
        "Reads a background task's status and output: an agent (its report once it has \
         ended, else what it has done so far) or a background shell (its new output). Takes \
         the task_id the launch returned."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        task_id_schema("The id of the task")
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: TaskIdInput = parse_input(input)?;
            let id = input.task_id.trim();
            if let Some(task) = ctx.ext::<TaskRegistry>().and_then(|r| r.get(id)) {
                let body = match &task.result {
                    Some(result) => result.clone(),
                    None => tokio::fs::read_to_string(&task.output_file)
                        .await
                        .unwrap_or_default(),
                };
                return Ok(ToolOutput::text(format!(
                    "<task-id>{id}</task-id>\n<status>{}</status>\n<output>\n{}\n</output>",
                    task.state,
                    body.trim_end()
                ))
                .with_summary(format!("{id}: {}", task.state)));
            }
            let shells = ctx.ext_or_default::<BackgroundTasks>();
            if let Some(report) = shells.read_new(id) {
                return Ok(ToolOutput::text(format!(
                    "<task-id>{id}</task-id>\n<status>{}</status>\n<output>\n{}\n</output>",
                    report.status,
                    report.new_output.trim_end()
                ))
                .with_summary(format!("{id}: {}", report.status)));
            }
            Err(unknown(id, ctx))
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        named_by(input, "task_id")
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
}

/// The TaskStop tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStopTool;

impl Tool for TaskStopTool {
    fn name(&self) -> &str {
        "TaskStop"
    }

    fn description(&self) -> String {
        "Stops a running background task (an agent or a shell) by its task_id. An agent \
         stops with what it has done so far."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        task_id_schema("The id of the task to stop")
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: TaskIdInput = parse_input(input)?;
            let id = input.task_id.trim();
            if let Some(registry) = ctx.ext::<TaskRegistry>()
                && let Ok(task) = registry.stop(id)
            {
                let text = if task.state == TaskState::Running {
                    format!("Stopping task {id} ({})", task.description)
                } else {
                    format!("Task {id} was not running ({})", task.state)
                };
                return Ok(ToolOutput::text(text));
            }
            let shells = ctx.ext_or_default::<BackgroundTasks>();
            match shells.status(id) {
                Some(TaskStatus::Running) => {
                    shells.kill(id);
                    Ok(ToolOutput::text(format!("Killed background shell {id}")))
                }
                Some(status) => Ok(ToolOutput::text(format!(
                    "Background shell {id} was not running ({status})"
                ))),
                None => Err(unknown(id, ctx)),
            }
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        named_by(input, "task_id")
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }
}

/// The input schema of a tool taking one task id.
fn task_id_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "description": description}
        },
        "required": ["task_id"],
        "additionalProperties": false
    })
}

/// A call's permission target: what its `field` names (a task, an agent type).
fn named_by(input: &Value, field: &str) -> PermissionTarget {
    PermissionTarget::Other {
        content: input.get(field).and_then(Value::as_str).map(str::to_owned),
    }
}

fn unknown(id: &str, ctx: &ToolContext) -> ToolError {
    let mut known: Vec<String> = ctx
        .ext::<TaskRegistry>()
        .map(|r| r.list().into_iter().map(|t| t.id).collect())
        .unwrap_or_default();
    known.extend(
        ctx.ext_or_default::<BackgroundTasks>()
            .list()
            .into_iter()
            .map(|(id, _, _)| id),
    );
    let known = if known.is_empty() {
        "there are no tasks".to_owned()
    } else {
        format!("known ids: {}", known.join(", "))
    };
    ToolError::Failed(format!("no task with id `{id}`; {known}"))
}

/// The Agent tool and the task tools, for the session's pool.
pub fn agent_tools(agents: Arc<[AgentDefinition]>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(AgentTool::new(agents)),
        Arc::new(TaskOutputTool),
        Arc::new(TaskStopTool),
    ]
}

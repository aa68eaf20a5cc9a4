//! BashOutput and KillShell: reading and stopping commands started with `run_in_background`.

use serde::Deserialize;
use serde_json::{Value, json};

use super::background::BackgroundTasks;
use super::background::TaskStatus;
use super::input::{render_by, str_arg};
use crate::context::ToolContext;
use crate::tool::{Tool, ToolError, ToolFuture, ToolOutput, parse_input};
use tine_permissions::PermissionTarget;

#[derive(Deserialize)]
struct BashOutputInput {
    bash_id: String,
    filter: Option<String>,
}

/// The BashOutput tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashOutputTool;

const OUTPUT_DESCRIPTION: &str = "\
Reads a background shell's new output (since the last read) and its status, by the bash_id \
that `run_in_background` returned; `filter` keeps only the lines matching a regex.";

fn unknown_task(id: &str, ctx: &ToolContext) -> ToolError {
    let known: Vec<String> = ctx
        .ext_or_default::<BackgroundTasks>()
        .list()
        .into_iter()
        .map(|(id, _, _)| id)
        .collect();
    let known = if known.is_empty() {
        "there are no background shells".to_owned()
    } else {
        format!("known ids: {}", known.join(", "))
    };
    ToolError::Failed(format!("no background shell with id `{id}`; {known}"))
}

impl Tool for BashOutputTool {
    fn name(&self) -> &str {
        "BashOutput"
    }

    fn description(&self) -> String {
        OUTPUT_DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "bash_id": {
                    "type": "string",
                    "description": "The background shell's id"
                },
                "filter": {
                    "type": "string",
                    "description": "A regex: only matching lines are returned (the others are dropped)"
                }
            },
            "required": ["bash_id"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: BashOutputInput = parse_input(input)?;
            let filter = match input.filter.as_deref() {
                Some(pattern) => Some(regex::Regex::new(pattern).map_err(|error| {
                    ToolError::InvalidInput(format!("`filter` is not a valid regex: {error}"))
                })?),
                None => None,
            };
            let Some(report) = ctx
                .ext_or_default::<BackgroundTasks>()
                .read_new(&input.bash_id)
            else {
                return Err(unknown_task(&input.bash_id, ctx));
            };
            let output = match &filter {
                Some(filter) => report
                    .new_output
                    .lines()
                    .filter(|line| filter.is_match(line))
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => report.new_output.trim_end().to_owned(),
            };
            let exit = match &report.status {
                TaskStatus::Exited(Some(code)) => format!("\n<exit_code>{code}</exit_code>"),
                TaskStatus::Exited(None)
                | TaskStatus::Running
                | TaskStatus::Killed
                | TaskStatus::Failed(_) => String::new(),
            };
            Ok(ToolOutput::text(format!(
                "<status>{}</status>{exit}\n<output>\n{output}\n</output>",
                report.status
            ))
            .with_summary(format!("{}: {}", report.id, report.status)))
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other {
            content: str_arg(input, "bash_id").map(str::to_owned),
        }
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    fn render_call(&self, input: &Value) -> String {
        render_by("BashOutput", input, "bash_id")
    }
}

#[derive(Deserialize)]
struct KillShellInput {
    shell_id: String,
}

/// The KillShell tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct KillShellTool;

impl Tool for KillShellTool {
    fn name(&self) -> &str {
        "KillShell"
    }

    fn description(&self) -> String {
        "Kills a background shell by its id, with every process it started; says whether \
         it was running."
            .to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "shell_id": {
                    "type": "string",
                    "description": "The background shell's id"
                }
            },
            "required": ["shell_id"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: KillShellInput = parse_input(input)?;
            let id = input.shell_id;
            match ctx.ext_or_default::<BackgroundTasks>().status(&id) {
                None => Err(unknown_task(&id, ctx)),
                Some(TaskStatus::Running) => {
                    ctx.ext_or_default::<BackgroundTasks>().kill(&id);
                    Ok(ToolOutput::text(format!("Killed background shell {id}")))
                }
                Some(status) => Ok(ToolOutput::text(format!(
                    "Background shell {id} was not running ({status})"
                ))),
            }
        })
    }

    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other {
            content: str_arg(input, "shell_id").map(str::to_owned),
        }
    }

    fn render_call(&self, input: &Value) -> String {
        render_by("KillShell", input, "shell_id")
    }
}

//! ExitPlanMode: the way out of plan mode. The model presents its plan; the person approves it
//! (and the session leaves plan mode for default or acceptEdits) or sends it back with what to
//! change. The tool itself always asks: the decision, and the mode switch that follows it, are
//! the session's (its `can_use_tool`), so the call only runs once the plan is approved.
//!
//! It is in every session's tool array, whatever the mode: the array's bytes are part of the
//! prompt-cache key and the mode changes mid-session (Shift+Tab). Outside plan mode the
//! session refuses the call, telling the model there is no plan mode to leave.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::tool::{Tool, ToolFuture, ToolOutput, parse_input};
use tine_permissions::{PermissionTarget, ToolVerdict};

/// The tool's name, which the session's permission checker recognises.
pub const EXIT_PLAN_MODE: &str = "ExitPlanMode";

/// What the model reads once the plan is approved (Claude Code's wording).
pub const PLAN_APPROVED: &str = "User has approved your plan. You can now start coding. Start \
with updating your todo list if applicable";

const DESCRIPTION: &str = "\
In plan mode, once you have presented your plan for a task that needs code written and are \
ready to code: asks the user to approve the plan (`plan`, concise markdown) and leave plan \
mode. Not for research tasks (gathering information, reading or searching files, \
understanding the codebase). If the user does not approve, you stay in plan mode with their \
feedback: revise the plan and call this again.";

#[derive(Deserialize)]
struct ExitPlanModeInput {
    plan: String,
}

/// The ExitPlanMode tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitPlanModeTool;

impl Tool for ExitPlanModeTool {
    fn name(&self) -> &str {
        EXIT_PLAN_MODE
    }

    fn description(&self) -> String {
        DESCRIPTION.to_owned()
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "plan": {
                    "type": "string",
                    "description": "The plan for the user to approve (markdown, concise)"
                }
            },
            "required": ["plan"],
            "additionalProperties": false
        })
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let input: ExitPlanModeInput = parse_input(input)?;
            let lines = input.plan.lines().count();
            Ok(ToolOutput::text(PLAN_APPROVED)
                .with_summary(format!("Plan approved ({lines} lines)")))
        })
    }

    /// The plan, so the person's dialog shows it.
    fn permission_target(&self, input: &Value, _ctx: &ToolContext) -> PermissionTarget {
        PermissionTarget::Other {
            content: input.get("plan").and_then(Value::as_str).map(str::to_owned),
        }
    }

    /// A person approves every plan; no allow rule stands in for them.
    fn check_permissions(&self, _input: &Value, _ctx: &ToolContext) -> ToolVerdict {
        ToolVerdict::Ask {
            reason: "Leave plan mode and start coding with this plan?".to_owned(),
        }
    }

    /// It changes nothing itself (plan mode must not refuse it as a write).
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }

    /// Never beside other calls: the mode may change when it is approved.
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    fn render_call(&self, _input: &Value) -> String {
        "ExitPlanMode".to_owned()
    }
}

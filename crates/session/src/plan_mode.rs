//! Leaving plan mode: the session's answer to an ExitPlanMode call (see
//! `tine_tools::ExitPlanModeTool`). Only in plan mode: a person sees the plan and
//! approves it, the session switching to acceptEdits (`Always`: Claude Code's first option,
//! "Yes, and auto-accept edits") or default (`Once`: "Yes, and manually approve edits"), or
//! sends it back with feedback (the model stays in plan mode). Headless, nobody can approve, so the
//! call is refused and the model is told to give its plan as the answer, as
//! `claude -p --permission-mode plan` ends with the plan.

use serde_json::Value;
use tine_permissions::{AlwaysAllow, PermissionDecision, PermissionMode};
use tine_query_loop::PermissionOutcome;
use tine_tools::{Tool, ToolContext};

use crate::options::Approvals;
use crate::permission::Permissions;
use crate::protocol::PermissionAnswer;

/// The outcome of an ExitPlanMode call.
pub(crate) async fn exit_outcome(
    permissions: &Permissions,
    tool: &dyn Tool,
    input: &Value,
    ctx: &ToolContext,
) -> PermissionOutcome {
    let mode = permissions.mode();
    if mode != PermissionMode::Plan {
        return PermissionOutcome::Deny {
            reason: format!(
                "Not in plan mode (the permission mode is {}): there is no plan to approve. Go \
                 on with the task.",
                mode.as_str()
            ),
        };
    }
    let (plan, decision) = permissions.decide(tool, input, ctx);
    let reason = match decision {
        PermissionDecision::Deny { message, .. } => {
            return PermissionOutcome::Deny { reason: message };
        }
        PermissionDecision::Allow { .. } => return approved(permissions, PermissionMode::Default),
        PermissionDecision::Ask { message, .. } => message,
    };
    if permissions.approvals() == Approvals::Headless {
        return PermissionOutcome::Deny {
            reason: "The plan was not approved: nobody can approve it in non-interactive mode \
                     (-p), so the session stays in plan mode and changes nothing. Give the plan \
                     as your final answer."
                .to_owned(),
        };
    }
    // The auto-accept option (the TUI's first).
    let always = Some(AlwaysAllow::Mode(PermissionMode::AcceptEdits));
    match permissions
        .ask_answer(tool, input, plan, &reason, always, ctx)
        .await
    {
        Ok(PermissionAnswer::Once) => approved(permissions, PermissionMode::Default),
        Ok(PermissionAnswer::Always) => approved(permissions, PermissionMode::AcceptEdits),
        // An app's yes: its updates may set the mode; else the plan is approved into default.
        Ok(PermissionAnswer::Allow { updates, .. }) => {
            let mode = updates
                .iter()
                .rev()
                .find_map(|u| match u {
                    crate::protocol::PermissionUpdate::SetMode(mode) => Some(*mode),
                    crate::protocol::PermissionUpdate::AddRules { .. } => None,
                })
                .unwrap_or(PermissionMode::Default);
            approved(permissions, mode)
        }
        Ok(PermissionAnswer::Refuse { message, .. }) => PermissionOutcome::Deny { reason: message },
        Ok(PermissionAnswer::Deny { feedback }) => PermissionOutcome::Deny {
            reason: match feedback.filter(|f| !f.trim().is_empty()) {
                Some(feedback) => format!(
                    "The user did not approve the plan; you are still in plan mode. Revise the \
                     plan with this feedback, then call ExitPlanMode again. The user said: \
                     {feedback}"
                ),
                None => "The user did not approve the plan; you are still in plan mode. Stop \
                         and wait for the user to tell you how to proceed."
                    .to_owned(),
            },
        },
        Err(withdrawn) => withdrawn,
    }
}

/// Approved: the session leaves plan mode for `mode`, then the call runs.
pub(crate) fn approved(permissions: &Permissions, mode: PermissionMode) -> PermissionOutcome {
    match permissions.set_mode_announced(mode) {
        Ok(()) => PermissionOutcome::Allow {
            updated_input: None,
        },
        Err(error) => PermissionOutcome::Deny {
            reason: error.to_string(),
        },
    }
}

//! The main thread's `can_use_tool`: the session's [`Permissions`] for every call, and an
//! ExitPlanMode call's approval (`plan_mode`), which leaves plan mode when a person (or a
//! PreToolUse hook) approves the plan.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tine_permissions::PermissionMode;
use tine_query_loop::{CanUseTool, PermissionOutcome};
use tine_tools::{Tool, ToolContext};

use crate::permission::Permissions;
use crate::rewind::Rewinds;

/// [`Permissions`] as the loop's `can_use_tool`; a call let through that can change files
/// takes the prompt's checkpoint first (`rewind`).
pub(crate) struct SessionPermissions(pub(crate) Arc<Permissions>, pub(crate) Arc<Rewinds>);

impl SessionPermissions {
    /// `outcome`, with the checkpoint taken before an allowed call that can change files.
    async fn checked(
        &self,
        tool: &dyn Tool,
        input: &Value,
        outcome: PermissionOutcome,
    ) -> PermissionOutcome {
        if let PermissionOutcome::Allow { updated_input } = &outcome {
            self.1
                .before(tool, updated_input.as_ref().unwrap_or(input))
                .await;
        }
        outcome
    }
}

impl CanUseTool for SessionPermissions {
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async move {
            if tool.name() == tine_tools::EXIT_PLAN_MODE {
                return crate::plan_mode::exit_outcome(&self.0, tool, input, ctx).await;
            }
            let outcome = self.0.outcome(tool, input, ctx).await;
            self.checked(tool, input, outcome).await
        })
    }

    fn check_hook_allowed<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async move {
            if tool.name() == tine_tools::EXIT_PLAN_MODE && self.0.mode() == PermissionMode::Plan {
                // The hook approved the plan.
                return crate::plan_mode::approved(&self.0, PermissionMode::Default);
            }
            let outcome = self.0.hook_allowed_outcome(tool, input, ctx).await;
            self.checked(tool, input, outcome).await
        })
    }

    fn check_hook_ask<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
        reason: &'a str,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async move {
            let outcome = self.0.hook_ask_outcome(tool, input, ctx, reason).await;
            self.checked(tool, input, outcome).await
        })
    }
}

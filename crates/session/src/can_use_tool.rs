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

/// [`Permissions`] as the loop's `can_use_tool`.
pub(crate) struct SessionPermissions(pub(crate) Arc<Permissions>);

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
            self.0.outcome(tool, input, ctx).await
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
            self.0.hook_allowed_outcome(tool, input, ctx).await
        })
    }

    fn check_hook_ask<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
        reason: &'a str,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(self.0.hook_ask_outcome(tool, input, ctx, reason))
    }
}

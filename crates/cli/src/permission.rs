//! The headless permission check: every tool call asks the permission engine; an answer that
//! would need a person becomes a denial the model can read, with what the user can do about it.

use futures::future::BoxFuture;
use serde_json::Value;
use tine_query_loop::{CanUseTool, PermissionOutcome};
use tine_tools::permissions::{PermissionContext, PermissionDecision, PermissionRequest};
use tine_tools::{Tool, ToolContext};

/// `can_use_tool` for `-p`: Allow runs, Deny refuses with the engine's reason, Ask refuses
/// because nobody can answer.
pub struct HeadlessPermissions {
    context: PermissionContext,
}

impl HeadlessPermissions {
    pub fn new(context: PermissionContext) -> Self {
        Self { context }
    }

    /// The decision for one call, as text the model gets when it is refused.
    pub fn outcome(&self, tool: &dyn Tool, input: &Value, ctx: &ToolContext) -> PermissionOutcome {
        let target = tool.permission_target(input, ctx);
        let verdict = tool.check_permissions(input, ctx);
        let decision = self.context.decide(&PermissionRequest {
            tool: tool.name(),
            target: &target,
            verdict: &verdict,
            is_read_only: tool.is_read_only(input),
        });
        match decision {
            PermissionDecision::Allow { .. } => PermissionOutcome::Allow {
                updated_input: None,
            },
            PermissionDecision::Deny { message, .. } => PermissionOutcome::Deny { reason: message },
            PermissionDecision::Ask {
                message,
                suggestions,
                ..
            } => {
                let rule = suggestions
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_else(|| tool.name().to_owned());
                PermissionOutcome::Deny {
                    reason: format!(
                        "{message}. This call needs approval, which cannot be given in \
                         non-interactive mode (-p). The user can allow it by running tine with \
                         --allowedTools \"{rule}\" (or --permission-mode acceptEdits for file \
                         edits), or by adding the rule to permissions.allow in settings."
                    ),
                }
            }
        }
    }
}

impl CanUseTool for HeadlessPermissions {
    fn check<'a>(
        &'a self,
        tool: &'a dyn Tool,
        input: &'a Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, PermissionOutcome> {
        Box::pin(async move { self.outcome(tool, input, ctx) })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tine_tools::permissions::PermissionMode;

    use super::*;

    fn tool(name: &str) -> Arc<dyn Tool> {
        tine_tools::builtin_tools()
            .into_iter()
            .find(|t| t.name() == name)
            .unwrap()
    }

    #[test]
    fn a_call_that_would_ask_is_denied_with_how_to_allow_it() {
        let dir = tempfile::tempdir().unwrap();
        let checker =
            HeadlessPermissions::new(PermissionContext::new(PermissionMode::Default, dir.path()));
        let ctx = ToolContext::new(dir.path());
        let bash = tool("Bash");
        let outcome = checker.outcome(bash.as_ref(), &json!({"command": "npm test"}), &ctx);
        let PermissionOutcome::Deny { reason } = outcome else {
            panic!("expected a denial, got {outcome:?}");
        };
        assert!(reason.contains("non-interactive"), "{reason}");
        assert!(reason.contains("--allowedTools"), "{reason}");
    }

    #[test]
    fn reads_inside_the_project_are_allowed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let checker =
            HeadlessPermissions::new(PermissionContext::new(PermissionMode::Default, dir.path()));
        let ctx = ToolContext::new(dir.path());
        let read = tool("Read");
        let input = json!({"file_path": dir.path().join("a.txt")});
        assert!(matches!(
            checker.outcome(read.as_ref(), &input, &ctx),
            PermissionOutcome::Allow { .. }
        ));
    }
}

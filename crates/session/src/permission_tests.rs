use std::sync::Arc;

use serde_json::json;
use tine_config::settings::SettingsPaths;
use tine_permissions::PermissionMode;

use super::*;

fn tool(name: &str) -> Arc<dyn Tool> {
    tine_tools::builtin_tools()
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap()
}

fn permissions(dir: &std::path::Path, approvals: Approvals) -> Permissions {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    Permissions::new(
        PermissionContext::new(PermissionMode::Default, dir),
        SettingsPaths::new(dir, dir),
        approvals,
        None,
        Emitter::new(tx),
    )
}

#[tokio::test]
async fn headless_a_call_that_would_ask_is_denied_with_how_to_allow_it() {
    let dir = tempfile::tempdir().unwrap();
    let checker = permissions(dir.path(), Approvals::Headless);
    let ctx = ToolContext::new(dir.path());
    let bash = tool("Bash");
    let outcome = checker
        .outcome(bash.as_ref(), &json!({"command": "npm test"}), &ctx)
        .await;
    let PermissionOutcome::Deny { reason } = outcome else {
        panic!("expected a denial, got {outcome:?}");
    };
    assert!(reason.contains("non-interactive"), "{reason}");
    assert!(
        reason.contains("--allowedTools \"Bash(npm test:*)\""),
        "{reason}"
    );
}

#[tokio::test]
async fn reads_inside_the_project_are_allowed_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    let checker = permissions(dir.path(), Approvals::Interactive);
    let ctx = ToolContext::new(dir.path());
    let read = tool("Read");
    let input = json!({"file_path": dir.path().join("a.txt")});
    assert!(matches!(
        checker.outcome(read.as_ref(), &input, &ctx).await,
        PermissionOutcome::Allow { .. }
    ));
}

#[test]
fn bypass_is_refused_when_settings_disable_it() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let checker = Permissions::new(
        PermissionContext::new(PermissionMode::Default, dir.path()),
        SettingsPaths::new(dir.path(), dir.path()),
        Approvals::Interactive,
        Some("/etc/tine/managed-settings.json".into()),
        Emitter::new(tx),
    );
    assert!(checker.set_mode(PermissionMode::BypassPermissions).is_err());
    assert_eq!(checker.mode(), PermissionMode::Default);
    assert!(rx.try_recv().is_err());
    checker.set_mode_announced(PermissionMode::Plan).unwrap();
    assert!(matches!(
        rx.try_recv(),
        Ok(crate::protocol::Event {
            msg: SessionEvent::PermissionModeChanged(PermissionMode::Plan),
            ..
        })
    ));
}

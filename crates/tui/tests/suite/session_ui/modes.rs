//! Shift+Tab's cycle on the real session: bypassPermissions is in it only for a session started
//! in it (as Claude Code: `--dangerously-skip-permissions`), so three presses from default
//! never turn every check off.

use tine_session::PermissionMode;

use super::*;

async fn status_after_presses(mode: Option<PermissionMode>, presses: usize) -> String {
    let world = World::new();
    let server = mock(Scenario::new().default_reply(Reply::text("Hi."))).await;
    let mut options = world.options(&server);
    options.permission_mode = mode;
    let ui = Ui::start(options).await;
    for _ in 0..presses {
        ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
        settle().await;
    }
    let (_, ended) = ui.exit().await;
    ended
        .screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_tab_reaches_bypass_only_in_a_session_started_in_it() {
    let status = status_after_presses(None, 3).await;
    assert!(
        status.contains("default mode"),
        "default → acceptEdits → plan → default: {status}"
    );
    let status = status_after_presses(None, 2).await;
    assert!(status.contains("plan mode on"), "{status}");
    let status = status_after_presses(Some(PermissionMode::BypassPermissions), 4).await;
    assert!(
        status.contains("bypass permissions on"),
        "bypass → default → acceptEdits → plan → bypass: {status}"
    );
}

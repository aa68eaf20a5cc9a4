//! Shift+Tab's cycle on the real session: bypassPermissions is in it only for a session started
//! in it (as Claude Code: `--dangerously-skip-permissions`), so three presses from default
//! never turn every check off.

use crossterm::event::{KeyCode, KeyModifiers};
use tine_mock_api::{MockConfig, MockServer, Reply, Scenario};
use tine_permissions::PermissionMode;
use tine_session::Resume;

use super::super::start;
use super::{Ui, World, settle};

async fn status_after_presses(mode: Option<PermissionMode>, presses: usize) -> String {
    let world = World::new();
    let server = MockServer::start(MockConfig::new(
        Scenario::new().default_reply(Reply::text("Hi.")),
    ))
    .await
    .unwrap();
    let mut launch = world.launch(&server);
    launch.permission_mode = mode;
    let ui = Ui::start(start(&launch, Resume::New).await.unwrap());
    for _ in 0..presses {
        ui.key(KeyCode::BackTab, KeyModifiers::SHIFT);
        settle().await;
    }
    let (_, screen, _) = ui.exit().await;
    screen
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

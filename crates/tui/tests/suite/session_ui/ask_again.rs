//! "Don't ask again" through the UI on a real session: option 2 of an edit switches the session
//! to acceptEdits (the status line says so) and saves nothing; option 2 of `touch a.txt` saves
//! `Bash(touch:*)`, and `touch b.txt` runs without asking.

use tine_session::{AlwaysAllow, PermissionMode};

use super::*;

fn edits_and_touches() -> Scenario {
    let call = |words: &str, tool: &str, input: serde_json::Value| {
        Rule::new()
            .tool_results(false)
            .last_user_contains(words)
            .reply(Reply::text("On it.").with_tool_use(tool, input))
    };
    Scenario::new()
        .rule(call(
            "write it",
            "Write",
            json!({"file_path": "notes.txt", "content": "hello\n"}),
        ))
        .rule(call(
            "change it",
            "Edit",
            json!({"file_path": "notes.txt", "old_string": "hello", "new_string": "bye"}),
        ))
        .rule(call("touch a", "Bash", json!({"command": "touch a.txt"})))
        .rule(call("touch b", "Bash", json!({"command": "touch b.txt"})))
        .rule(Rule::new().tool_results(true).reply(Reply::text("Done.")))
        .default_reply(Reply::text("Ok."))
}

fn asked(seen: &[Event]) -> bool {
    seen.iter()
        .any(|e| matches!(e.msg, SessionEvent::PermissionRequest(_)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowing_all_edits_switches_to_accept_edits_for_the_session_and_saves_nothing() {
    let world = World::new();
    let server = mock(edits_and_touches()).await;
    let mut ui = Ui::start(world.options(&server)).await;

    ui.type_line("write it");
    let ask = ui.ask().await;
    assert_eq!(
        ask.always,
        Some(AlwaysAllow::Mode(PermissionMode::AcceptEdits))
    );
    let shown = ui.screen();
    assert!(
        shown.contains("2. Yes, allow all edits during this session"),
        "{shown}"
    );
    ui.key(KeyCode::Char('2'), KeyModifiers::NONE);
    let (mode, _) = ui
        .until(|e| match e.msg {
            SessionEvent::PermissionModeChanged(mode) => Some(mode),
            _ => None,
        })
        .await;
    assert_eq!(mode, PermissionMode::AcceptEdits);
    ui.turn_end().await;
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("notes.txt")).unwrap(),
        "hello\n"
    );

    ui.type_line("change it");
    let (_, seen) = ui.turn_end().await;
    assert!(!asked(&seen), "the edit asked again: {seen:?}");
    assert_eq!(
        std::fs::read_to_string(world.cwd.join("notes.txt")).unwrap(),
        "bye\n"
    );
    assert!(!world.cwd.join(".tine/settings.local.json").exists());
    assert!(!world.cwd.join(".tine/settings.json").exists());
    assert!(!world.home.join("settings.json").exists());

    let (_, ended) = ui.exit().await;
    let status = ended
        .screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap()
        .to_owned();
    assert!(status.contains("accept edits on"), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dont_ask_again_for_touch_saves_the_programs_prefix() {
    let world = World::new();
    let server = mock(edits_and_touches()).await;
    let mut ui = Ui::start(world.options(&server)).await;

    ui.type_line("touch a");
    ui.ask().await;
    let shown = ui.screen();
    assert!(
        shown.contains("2. Yes, and don't ask again for Bash(touch:*)"),
        "{shown}"
    );
    ui.key(KeyCode::Char('2'), KeyModifiers::NONE);
    ui.turn_end().await;
    assert!(world.cwd.join("a.txt").exists());
    let local: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(world.cwd.join(".tine/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(local["permissions"]["allow"], json!(["Bash(touch:*)"]));

    ui.type_line("touch b");
    let (_, seen) = ui.turn_end().await;
    assert!(!asked(&seen), "touch b.txt asked: {seen:?}");
    assert!(world.cwd.join("b.txt").exists());
    ui.exit().await;
}

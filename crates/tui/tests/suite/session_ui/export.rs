//! `/export` without a file and Ctrl+R on a real session: the session gives the conversation as
//! the command's data (and writes no file), the UI holds it for the clipboard and says so;
//! Ctrl+R finds the earlier prompt and Enter sends it again.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_without_a_file_is_for_the_clipboard_and_ctrl_r_sends_a_prompt_again() {
    let world = World::new();
    let server = mock(scenario()).await;
    let mut ui = Ui::start(world.options(&server)).await;
    ui.type_line("first question");
    ui.turn_end().await;
    settle().await;

    ui.type_line("/export");
    let (data, _) = ui
        .until(|e| match &e.msg {
            SessionEvent::CommandOutput(out) if out.command == "export" => Some(out.data.clone()),
            _ => None,
        })
        .await;
    let copied = data["clipboard"].as_str().unwrap().to_owned();
    assert!(copied.contains("> first question"), "{copied}");
    assert!(copied.contains("Here is **bold** text."), "{copied}");
    settle().await;
    let screen = ui.screen();
    let lines = copied.lines().count();
    assert!(
        screen.contains(&format!("Copied to clipboard ({lines} lines)")),
        "{screen}"
    );
    let written: Vec<_> = std::fs::read_dir(&world.cwd)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("conversation-"))
        .collect();
    assert!(written.is_empty(), "no file for the clipboard: {written:?}");

    // Ctrl+R, a few letters, Enter: the earlier prompt goes again.
    ui.key(KeyCode::Char('r'), KeyModifiers::CONTROL);
    for c in "first".chars() {
        ui.key(KeyCode::Char(c), KeyModifiers::NONE);
    }
    settle().await;
    let screen = ui.screen();
    assert!(screen.contains("search prompts: first"), "{screen}");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    let last = last_body(&server);
    let messages = last["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{last}");
    assert!(messages[2].to_string().contains("first question"), "{last}");

    let (mut app, _) = ui.exit().await;
    // The test's loop has no terminal: the text waits in the app, as the real loop takes it.
    assert_eq!(app.take_clipboard().as_deref(), Some(copied.as_str()));
    // The history file has `/export` as typed.
    let history = std::fs::read_to_string(world.home.join("history.jsonl")).unwrap();
    assert!(history.contains("\"display\":\"/export\""), "{history}");
    assert!(!history.contains("--clipboard"), "{history}");
}

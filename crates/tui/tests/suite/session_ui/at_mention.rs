//! `@` mentions through the UI on a real session: the picker lists the project's files as
//! `.gitignore` leaves them, Tab puts the path in, and the request carries the file (as a Read
//! of it) or the directory (as its listing).

use super::*;

/// Waits until the screen shows `text`.
async fn screen_shows(ui: &Ui, text: &str) -> String {
    for _ in 0..300 {
        let screen = ui.screen();
        if screen.contains(text) {
            return screen;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the screen never showed {text:?}:\n{}", ui.screen());
}

fn typed(ui: &Ui, text: &str) {
    for c in text.chars() {
        ui.key(KeyCode::Char(c), KeyModifiers::NONE);
    }
}

/// The prompt's block of the last request (the last text of its last message; the context
/// reminder comes before it).
fn last_user_text(server: &MockServer) -> String {
    let body = last_body(server);
    let message = body["messages"].as_array().unwrap().last().unwrap().clone();
    match &message["content"] {
        serde_json::Value::String(text) => text.clone(),
        blocks => blocks
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b["text"].as_str())
            .next_back()
            .unwrap()
            .to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_at_mention_is_picked_inserted_and_sent_as_the_files_content() {
    let world = World::new();
    std::fs::create_dir_all(world.cwd.join("src")).unwrap();
    std::fs::write(
        world.cwd.join("src/main.rs"),
        "fn main() { println!(\"the marker 4711\"); }\n",
    )
    .unwrap();
    std::fs::write(world.cwd.join("src/lib.rs"), "pub fn lib() {}\n").unwrap();
    std::fs::write(world.cwd.join("mapping.secret"), "hidden 0815\n").unwrap();
    std::fs::write(world.cwd.join(".gitignore"), "*.secret\n").unwrap();
    let server = mock(Scenario::new().default_reply(Reply::text("Seen."))).await;
    let mut ui = Ui::start(world.options(&server)).await;
    settle().await;

    // `@ma`: the list shows src/main.rs, not the ignored file.
    typed(&ui, "@ma");
    let screen = screen_shows(&ui, "❯ @src/main.rs").await;
    assert!(!screen.contains("mapping.secret"), "{screen}");
    // Tab: the path takes the query's place.
    ui.key(KeyCode::Tab, KeyModifiers::NONE);
    let screen = screen_shows(&ui, "> @src/main.rs ").await;
    assert!(
        !screen.contains("❯ @src/main.rs"),
        "the list closed: {screen}"
    );
    typed(&ui, "explain");
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    let (outcome, _) = ui.turn_end().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    let sent = last_user_text(&server);
    let path = world.cwd.join("src/main.rs");
    assert!(sent.starts_with("@src/main.rs explain\n\n"), "{sent}");
    assert!(
        sent.contains(&format!(
            "Called the Read tool with the following input: {}",
            json!({"file_path": path})
        )),
        "{sent}"
    );
    assert!(sent.contains("the marker 4711"), "{sent}");

    // A directory goes as its listing.
    typed(&ui, "look in @src");
    screen_shows(&ui, "❯ @src/").await;
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    screen_shows(&ui, "> look in @src/ ").await;
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    let sent = last_user_text(&server);
    assert!(sent.contains("Called the Bash tool"), "{sent}");
    assert!(sent.contains("lib.rs\nmain.rs"), "{sent}");
    assert!(!sent.contains("the marker 4711"), "{sent}");

    // Esc closes the list; a mention of nothing is sent as it is typed.
    typed(&ui, "ask @nobody");
    settle().await;
    ui.key(KeyCode::Esc, KeyModifiers::NONE);
    settle().await;
    assert!(!ui.screen().contains("❯ @"), "{}", ui.screen());
    ui.key(KeyCode::Enter, KeyModifiers::NONE);
    ui.turn_end().await;
    assert_eq!(last_user_text(&server), "ask @nobody");

    ui.exit().await;
}

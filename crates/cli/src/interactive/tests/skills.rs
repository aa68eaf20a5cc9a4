//! Skills through the UI on the real session: `/help` drawn by the app lists them (a skill
//! once, hiding the custom command of its name), `/NAME args` typed in the prompt runs the
//! skill's instructions as the turn, and `/skills` is answered by the session.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tine_mock_api::{MockConfig, MockServer, Reply, Scenario};
use tine_session::Resume;
use tine_tui::UiEvent;

use super::super::start;
use super::{Ui, World, last_body, screen};

fn write(world: &World, path: &str, text: &str) {
    let path = world.cwd.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_are_slash_commands_in_the_ui_listed_by_help_and_by_slash_skills() {
    let world = World::new();
    write(
        &world,
        ".tine/skills/release/SKILL.md",
        "---\ndescription: Cut a release\n---\nRELEASE-BODY for $ARGUMENTS\n",
    );
    write(
        &world,
        ".tine/commands/release.md",
        "---\ndescription: The old release command\n---\nCOMMAND-BODY\n",
    );
    write(
        &world,
        ".tine/commands/lint.md",
        "---\ndescription: Lint the code\n---\nLINT-BODY\n",
    );
    let server = MockServer::start(MockConfig::new(
        Scenario::new().default_reply(Reply::text("Released.")),
    ))
    .await
    .unwrap();
    let mut launch = world.launch(&server);
    launch.bare = false;
    let mut started = start(&launch, Resume::New).await.unwrap();

    // `/help`, drawn by the UI before anything runs.
    for c in "/help".chars() {
        started
            .app
            .handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    started
        .app
        .handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let mut terminal = Terminal::new(TestBackend::new(110, 70)).unwrap();
    terminal.draw(|f| started.app.render(f)).unwrap();
    let help = screen(&terminal);
    assert!(help.contains("(skill) Cut a release"), "{help}");
    assert!(help.contains("/lint"), "{help}");
    assert!(!help.contains("The old release command"), "{help}");
    assert_eq!(help.matches("/release").count(), 1, "{help}");
    assert!(help.contains("/skills"), "{help}");
    started
        .app
        .handle_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));

    let mut ui = Ui::start(started);
    ui.type_line("/release v2");
    ui.turn_end().await;
    let sent = last_body(&server)["messages"].to_string();
    assert!(sent.contains("RELEASE-BODY for v2"), "{sent}");
    assert!(!sent.contains("COMMAND-BODY"), "{sent}");
    // The session's listing went with the first request (not bare).
    assert!(sent.contains("- release: Cut a release"), "{sent}");

    ui.type_line("/skills");
    let (text, _) = ui
        .until(|e| match e {
            UiEvent::CommandOutput { command, text } if command == "skills" => Some(text.clone()),
            _ => None,
        })
        .await;
    assert!(text.contains("- release (project, "), "{text}");
    assert_eq!(server.requests().len(), 1, "/skills made no request");
    ui.exit().await;
}

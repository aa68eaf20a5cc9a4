//! The binary's UI in a real terminal (a tmux pane) for what only a terminal shows:
//! `/export` without a file reaching the clipboard through OSC 52 (tmux with `set-clipboard
//! on` keeps what it is sent as a paste buffer, which the test reads back), Ctrl+R finding an
//! earlier prompt and Enter sending it again, and `/help` scrolling on a short terminal.
//! Skipped, saying so, where tmux is not installed.

use tine_e2e::Project;
use tine_e2e::tine_mock_api::{Reply, Scenario};

use super::mock;
use super::terminal::{Tmux, script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_copies_through_osc_52_ctrl_r_resends_and_help_scrolls() {
    let project = Project::new();
    let Some(tmux) = Tmux::start(project.root()).await else {
        return;
    };
    let server =
        mock(Scenario::new().default_reply(Reply::text("Hello **there**, I am the model."))).await;
    let run = script(&project, &server, "keys", "");
    tmux.open("keys", &run).await;
    // tmux takes an application's OSC 52 only with this (its default is `external`).
    tmux.run(&["set-option", "-s", "set-clipboard", "on"]).await;
    tmux.wait_for("keys", "shift+tab to cycle").await;

    tmux.type_text("keys", "say hi").await;
    tmux.key("keys", "Enter").await;
    tmux.wait_for("keys", "I am the model.").await;

    // /export: the conversation goes to the clipboard, which tmux keeps as a buffer.
    tmux.type_text("keys", "/export").await;
    tmux.key("keys", "Enter").await;
    let screen = tmux.wait_for("keys", "Copied to clipboard (").await;
    assert!(!screen.contains("Exported the conversation to"), "{screen}");
    let buffer = tmux.run(&["show-buffer"]).await;
    assert!(buffer.contains("> say hi"), "the buffer:\n{buffer}");
    assert!(
        buffer.contains("Hello **there**, I am the model."),
        "the buffer:\n{buffer}"
    );
    let files: Vec<String> = std::fs::read_dir(project.cwd())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("conversation-"))
        .collect();
    assert!(files.is_empty(), "no file was written: {files:?}");

    // Ctrl+R over the prompts: `say` finds "say hi"; Enter sends it again.
    let before = server.requests().len();
    tmux.type_text("keys", "draft").await;
    tmux.key("keys", "C-r").await;
    tmux.type_text("keys", "say").await;
    let screen = tmux.wait_for("keys", "search prompts: say").await;
    assert!(screen.contains("> say hi"), "{screen}");
    tmux.key("keys", "Enter").await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(90);
    while server.requests().len() == before {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the prompt was not sent again"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let body: serde_json::Value =
        serde_json::from_slice(&server.requests().last().unwrap().body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert!(
        messages.last().unwrap().to_string().contains("say hi"),
        "{body}"
    );
    assert!(!messages.last().unwrap().to_string().contains("draft"));

    // A short terminal: /help shows what fits and scrolls to the rest.
    tmux.run(&["resize-window", "-t", "keys", "-x", "100", "-y", "14"])
        .await;
    tmux.type_text("keys", "/help").await;
    tmux.key("keys", "Enter").await;
    tmux.wait_for("keys", "↓ more").await;
    tmux.key("keys", "End").await;
    let screen = tmux.wait_for("keys", "↑ more").await;
    assert!(screen.contains("ctrl+r"), "the last keys show:\n{screen}");
    tmux.key("keys", "Escape").await;
    tmux.type_text("keys", "/exit").await;
    tmux.key("keys", "Enter").await;
    tmux.wait_exited("keys", &project.root().join("keys")).await;
    server.stop().await;
}

//! What a resumed session shows, and the UI's commands against the session's: a compaction of
//! an earlier run comes back as its card (not the summary as a prompt); every built-in the
//! session answers is in the UI's list.

use tine_mock_api::{MockConfig, MockServer, Reply, Rule, Scenario};
use tine_session::Resume;
use tine_tui::UiEvent;

use super::super::start;
use super::{Ui, World};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_its_compaction_as_the_card() {
    let world = World::new();
    let scenario = Scenario::new()
        .rule(
            Rule::new()
                .last_user_contains(tine_compaction::SUMMARY_INSTRUCTION_MARKER)
                .reply(Reply::text(
                    "<summary>1. The user asked SUMMARIZED-QUESTION.</summary>",
                )),
        )
        .default_reply(Reply::text("An answer."));
    let server = MockServer::start(MockConfig::new(scenario)).await.unwrap();
    let started = start(&world.launch(&server), Resume::New).await.unwrap();
    let mut ui = Ui::start(started);
    ui.type_line("the first question");
    ui.turn_end().await;
    ui.type_line("/compact");
    let (live, _) = ui
        .until(|e| match e {
            UiEvent::Compacted(view) => Some(view.clone()),
            _ => None,
        })
        .await;
    ui.turn_end().await;
    ui.type_line("after the compaction");
    ui.turn_end().await;
    ui.exit().await;

    // tine -c: the card where the compaction was, then the turn after it.
    let started = start(&world.launch(&server), Resume::Latest).await.unwrap();
    let mut ui = Ui::start(started);
    let (card, before) = ui
        .until(|e| match e {
            UiEvent::Compacted(view) => Some(view.clone()),
            _ => None,
        })
        .await;
    assert_eq!(card, live, "the card shows the same figures as it did live");
    assert!(
        !before.iter().any(|e| matches!(e, UiEvent::UserMessage(_))),
        "the summarized part is not shown again: {before:?}"
    );
    let (prompt, between) = ui
        .until(|e| match e {
            UiEvent::UserMessage(text) => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(prompt, "after the compaction", "after {between:?}");
    ui.turn_end().await;
    let (_, screen, _) = ui.exit().await;
    assert!(
        screen.contains("Conversation compacted (/compact)"),
        "{screen}"
    );
    assert!(!screen.contains("SUMMARIZED-QUESTION"), "{screen}");
    assert!(
        !screen.contains("continued from an earlier conversation"),
        "{screen}"
    );
}

#[test]
fn every_command_the_session_answers_is_in_the_ui_list() {
    let ui: Vec<String> = tine_tui::slash::builtins()
        .into_iter()
        .map(|spec| spec.name)
        .collect();
    for command in tine_session::COMMANDS {
        assert!(
            ui.iter().any(|name| name == command.name),
            "/{} is answered by the session but missing from the TUI's list",
            command.name
        );
        let spec = tine_tui::slash::builtins()
            .into_iter()
            .find(|spec| spec.name == command.name);
        assert_eq!(
            spec.map(|s| s.runs_turn),
            Some(command.runs_turn),
            "/{}: the UI must hold its turn guard exactly when the session runs a turn",
            command.name
        );
    }
}

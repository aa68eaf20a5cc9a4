//! The tasks panel's keys (select, stop, close), Ctrl+B for a sub-agent in the foreground, and
//! the compaction card.

use crossterm::event::KeyCode;
use tine_tui::{
    CompactionView, TaskKind, TaskStatus, TaskView, ToolResultView, TurnEndReason, UiCommand,
    UiEvent,
};

use super::support::{app, ctrl, key, screen, submit, type_text};

fn task(id: &str, kind: TaskKind, title: &str, status: TaskStatus) -> UiEvent {
    UiEvent::Task(TaskView {
        id: id.into(),
        kind,
        title: title.into(),
        status,
    })
}

#[test]
fn the_tasks_panel_selects_a_running_task_and_k_stops_it() {
    let mut app = app();
    app.handle(task(
        "b_1",
        TaskKind::Shell,
        "npm run dev",
        TaskStatus::Running,
    ));
    app.handle(task(
        "auto_dream",
        TaskKind::Job,
        "memory dream",
        TaskStatus::Running,
    ));
    app.handle(task(
        "a_2",
        TaskKind::Agent,
        "survey",
        TaskStatus::Finished {
            summary: "completed".into(),
        },
    ));
    submit(&mut app, "/tasks");
    // Running first, the most recent of them on top.
    assert_eq!(
        app.selected_task().map(|t| t.id.as_str()),
        Some("auto_dream")
    );
    let shown = screen(&mut app, 80, 20);
    assert!(shown.contains("❯ ◐ job   memory dream"), "{shown}");
    assert_eq!(
        app.handle_key(key(KeyCode::Char('k'))),
        [UiCommand::StopTask {
            id: "auto_dream".into()
        }]
    );
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.selected_task().map(|t| t.id.as_str()), Some("b_1"));
    assert_eq!(
        app.handle_key(key(KeyCode::Delete)),
        [UiCommand::StopTask { id: "b_1".into() }]
    );
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.selected_task().map(|t| t.id.as_str()), Some("a_2"));
    assert_eq!(
        app.handle_key(key(KeyCode::Char('k'))),
        [],
        "a finished task is not stopped"
    );
    // The panel has the keys: nothing was typed into the prompt.
    assert!(app.input().is_empty());
    app.handle_key(key(KeyCode::Esc));
    type_text(&mut app, "k");
    assert_eq!(app.input().text(), "k", "closed: keys type again");
    app.handle_key(ctrl('t'));
    assert_eq!(
        app.selected_task().map(|t| t.id.as_str()),
        Some("auto_dream")
    );
    app.handle_key(ctrl('t'));
    assert_eq!(app.input().text(), "k");
}

#[test]
fn ctrl_b_sends_a_foreground_agent_to_the_background_and_is_a_cursor_key_otherwise() {
    let mut app = app();
    type_text(&mut app, "ab");
    assert_eq!(app.handle_key(ctrl('b')), [], "no turn: the cursor moves");
    type_text(&mut app, "X");
    assert_eq!(app.input().text(), "aXb");
    app.handle_key(ctrl('u'));
    app.handle_key(ctrl('k'));
    submit(&mut app, "delegate the survey");
    app.handle(UiEvent::ToolStarted {
        id: "t1".into(),
        tool: "Agent".into(),
        args: "survey".into(),
    });
    assert_eq!(app.handle_key(ctrl('b')), [UiCommand::BackgroundAgents]);
    app.handle(UiEvent::ToolFinished {
        id: "t1".into(),
        result: ToolResultView {
            is_error: false,
            summary: "sent a_1 to the background".into(),
            content: String::new(),
            display: Default::default(),
        },
    });
    assert_eq!(app.handle_key(ctrl('b')), [], "no agent call runs any more");
    app.handle(UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    });
}

#[test]
fn a_compaction_shows_its_card_with_the_tokens_before_and_after() {
    let mut app = app();
    submit(&mut app, "go on");
    app.handle(UiEvent::Compacted(CompactionView {
        trigger: "auto".into(),
        tokens_before: 156_855,
        tokens_after: 11_902,
        messages_summarized: 120,
    }));
    app.handle(UiEvent::TextDelta("Carrying on.".into()));
    app.handle(UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    });
    let shown = screen(&mut app, 90, 12);
    assert!(
        shown.contains("✻ Conversation compacted automatically · 156,855 → 11,902 tokens"),
        "{shown}"
    );
    assert!(
        shown.contains("120 messages summarized · /compact log shows what was dropped"),
        "{shown}"
    );
    assert!(shown.contains("Carrying on."), "{shown}");
    app.handle(UiEvent::Compacted(CompactionView {
        trigger: "manual".into(),
        tokens_before: 2_000,
        tokens_after: 300,
        messages_summarized: 1,
    }));
    let shown = screen(&mut app, 90, 12);
    assert!(
        shown.contains("Conversation compacted (/compact) · 2,000 → 300 tokens"),
        "{shown}"
    );
    assert!(shown.contains("1 message summarized"), "{shown}");
}

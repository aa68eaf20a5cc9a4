//! The tasks panel's keys (select, stop, close), Ctrl+B for a sub-agent in the foreground, and
//! the compaction card.

use crossterm::event::KeyCode;
use serde_json::json;
use tine_session::{
    BackgroundEvent, CompactBoundary, Event, Op, QueryEvent, SessionEvent, TaskKind, TaskState,
    TaskUpdate, ToolOutput,
};

use super::support::{
    app, call, ctrl, ended, event, handle, key, press, query, result, screen, submit, text,
    type_text,
};

fn task(id: &str, kind: TaskKind, title: &str, state: TaskState) -> Event {
    event(SessionEvent::Task(TaskUpdate {
        id: id.into(),
        kind,
        title: title.into(),
        state,
        detail: String::new(),
        output_file: None,
        activity: None,
    }))
}

#[test]
fn the_tasks_panel_selects_a_running_task_and_k_stops_it() {
    let mut app = app();
    handle(
        &mut app,
        task("b_1", TaskKind::Shell, "npm run dev", TaskState::Running),
    );
    handle(
        &mut app,
        event(SessionEvent::Background(BackgroundEvent::Started {
            job: "auto_dream".into(),
        })),
    );
    handle(
        &mut app,
        task("a_2", TaskKind::Agent, "survey", TaskState::Completed),
    );
    submit(&mut app, "/tasks");
    // Running first, the most recent of them on top.
    assert_eq!(app.selected_task(), Some("auto_dream"));
    let shown = screen(&mut app, 80, 20);
    assert!(shown.contains("❯ ◐ job   memory dream"), "{shown}");
    assert_eq!(
        press(&mut app, key(KeyCode::Char('k'))),
        [Op::StopTask("auto_dream".into())]
    );
    press(&mut app, key(KeyCode::Down));
    assert_eq!(app.selected_task(), Some("b_1"));
    assert_eq!(
        press(&mut app, key(KeyCode::Delete)),
        [Op::StopTask("b_1".into())]
    );
    press(&mut app, key(KeyCode::Down));
    assert_eq!(app.selected_task(), Some("a_2"));
    assert_eq!(
        press(&mut app, key(KeyCode::Char('k'))),
        [],
        "a finished task is not stopped"
    );
    // The panel has the keys: nothing was typed into the prompt.
    assert!(app.input_text().is_empty());
    press(&mut app, key(KeyCode::Esc));
    type_text(&mut app, "k");
    assert_eq!(app.input_text(), "k", "closed: keys type again");
    press(&mut app, ctrl('t'));
    assert_eq!(app.selected_task(), Some("auto_dream"));
    press(&mut app, ctrl('t'));
    assert_eq!(app.input_text(), "k");
}

#[test]
fn a_stopped_task_is_said_in_the_transcript() {
    let mut app = app();
    handle(
        &mut app,
        event(SessionEvent::TaskStopped(tine_session::StoppedTask::Dream)),
    );
    handle(
        &mut app,
        event(SessionEvent::TaskStopped(
            tine_session::StoppedTask::Shell {
                command: "npm run dev".into(),
            },
        )),
    );
    let shown = screen(&mut app, 80, 10);
    assert!(
        shown.contains("dream killed; its lock was rolled back"),
        "{shown}"
    );
    assert!(shown.contains("killed `npm run dev`"), "{shown}");
}

#[test]
fn ctrl_b_sends_a_foreground_agent_to_the_background_and_is_a_cursor_key_otherwise() {
    let mut app = app();
    type_text(&mut app, "ab");
    assert_eq!(press(&mut app, ctrl('b')), [], "no turn: the cursor moves");
    type_text(&mut app, "X");
    assert_eq!(app.input_text(), "aXb");
    press(&mut app, ctrl('u'));
    press(&mut app, ctrl('k'));
    submit(&mut app, "delegate the survey");
    handle(
        &mut app,
        call("t1", "Agent", json!({"description": "survey"})),
    );
    assert_eq!(press(&mut app, ctrl('b')), [Op::BackgroundAgents]);
    handle(
        &mut app,
        result(
            "t1",
            "Agent",
            ToolOutput::text("").with_summary("sent a_1 to the background"),
        ),
    );
    assert_eq!(
        press(&mut app, ctrl('b')),
        [],
        "no agent call runs any more"
    );
    let end = ended(&app);
    handle(&mut app, end);
}

#[test]
fn a_compaction_shows_its_card_with_the_tokens_before_and_after() {
    let mut app = app();
    submit(&mut app, "go on");
    let card = |trigger: &str, tokens_before: u64, tokens_after: u64, messages: usize| {
        serde_json::from_value::<CompactBoundary>(json!({
            "trigger": trigger,
            "tokensBefore": tokens_before,
            "tokensAfter": tokens_after,
            "messagesSummarized": messages,
        }))
        .expect("a boundary")
    };
    handle(
        &mut app,
        query(QueryEvent::HistoryReplaced {
            messages: Vec::new(),
            boundary: card("auto", 156_855, 11_902, 120),
        }),
    );
    handle(&mut app, text("Carrying on."));
    let end = ended(&app);
    handle(&mut app, end);
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
    // `/compact`'s answer carries its boundary: the same card.
    handle(
        &mut app,
        event(SessionEvent::CommandOutput(tine_session::CommandOutput {
            command: "compact".into(),
            text: "Compacted 1 messages".into(),
            is_error: false,
            data: json!({"compact_boundary": card("manual", 2_000, 300, 1)}),
        })),
    );
    let shown = screen(&mut app, 90, 12);
    assert!(
        shown.contains("Conversation compacted (/compact) · 2,000 → 300 tokens"),
        "{shown}"
    );
    assert!(shown.contains("1 message summarized"), "{shown}");
}

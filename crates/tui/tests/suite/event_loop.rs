//! The terminal loop on a TestBackend, with terminal events from a channel and virtual time:
//! idle costs no frame and no timer, bursts coalesce, frames stay under 60/s, the spinner ticks
//! only during a turn, resize redraws, and a scripted session runs through it end to end.

use std::time::Duration;

use crossterm::event::{Event as TerminalEvent, KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tine_session::{
    Answer, CommandOutput, HistoryItem, Op, PermissionAnswer, PermissionRequest, QueryEvent,
    QuestionId, SessionEvent, ToolDisplay, ToolOutput, TurnOutcome,
};
use tine_tui::LoopEnd;
use tokio::time::sleep;

use super::scripted::{run_with, terminal};
use super::support::{app, event, plain};

fn text(text: &str) -> SessionEvent {
    SessionEvent::Query(QueryEvent::TextDelta { text: text.into() })
}

fn request() -> SessionEvent {
    SessionEvent::Query(QueryEvent::RequestStart {
        turn: 1,
        max_tokens: 32_000,
    })
}

#[tokio::test(start_paused = true)]
async fn idle_draws_once_and_sets_no_timer() {
    let mut app = app();
    let mut term = terminal(60, 10);
    let (end, stats) = run_with(&mut app, &mut term, |script| async move {
        sleep(Duration::from_secs(10)).await;
        drop(script);
    })
    .await;
    assert!(
        matches!(end, LoopEnd::SessionClosed | LoopEnd::InputClosed),
        "{end:?}"
    );
    assert_eq!(stats.frames, 1, "the first frame only");
    assert_eq!(stats.wakeups, 0, "no timer ticks while idle");
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_deltas_costs_one_frame() {
    let mut app = app();
    let mut term = terminal(60, 10);
    let (_, stats) = run_with(&mut app, &mut term, |script| async move {
        sleep(Duration::from_millis(100)).await;
        for i in 0..500 {
            script.send(text(&format!("w{i} ")));
        }
        sleep(Duration::from_secs(1)).await;
    })
    .await;
    assert_eq!(stats.session_events, 500);
    assert_eq!(
        stats.frames, 2,
        "the first frame and one for the whole burst"
    );
    assert!(plain(term.backend().buffer()).contains("w499"));
}

#[tokio::test(start_paused = true)]
async fn frames_are_held_to_sixty_per_second() {
    let mut app = app();
    let mut term = terminal(60, 10);
    let (_, stats) = run_with(&mut app, &mut term, |script| async move {
        // A delta every millisecond for one second.
        for i in 0..1000 {
            script.send(text(&format!("{i} ")));
            sleep(Duration::from_millis(1)).await;
        }
        sleep(Duration::from_millis(50)).await;
    })
    .await;
    assert_eq!(stats.session_events, 1000);
    assert!(
        stats.frames <= 62,
        "{} frames in about a second",
        stats.frames
    );
    assert!(
        stats.frames >= 50,
        "but it keeps up: {} frames",
        stats.frames
    );
}

#[tokio::test(start_paused = true)]
async fn the_spinner_ticks_during_a_turn_and_stops_after() {
    let mut app = app();
    let mut term = terminal(60, 10);
    let (_, stats) = run_with(&mut app, &mut term, |mut script| async move {
        script.text("go");
        script.key(KeyCode::Enter);
        assert_eq!(script.op().await, Op::Prompt("go".into()));
        sleep(Duration::from_millis(1200)).await;
        script.end_turn(TurnOutcome::Completed);
        sleep(Duration::from_secs(30)).await;
    })
    .await;
    // About ten spinner frames in 1.2 s (one per 120 ms), then nothing for 30 s.
    assert!((8..=12).contains(&stats.wakeups), "{stats:?}");
    assert!(stats.frames <= 16, "{stats:?}");
}

#[tokio::test(start_paused = true)]
async fn a_minute_after_a_turn_the_loop_sends_the_idle_hint_once() {
    let mut app = app();
    let mut term = terminal(60, 10);
    run_with(&mut app, &mut term, |mut script| async move {
        script.text("go");
        script.key(KeyCode::Enter);
        assert_eq!(script.op().await, Op::Prompt("go".into()));
        script.end_turn(TurnOutcome::Completed);
        sleep(Duration::from_secs(59)).await;
        assert_eq!(script.sent_all().await, []);
        sleep(Duration::from_secs(2)).await;
        assert_eq!(
            script.sent_all().await,
            [Op::FlushBackground, Op::NotifyIdle]
        );
        sleep(Duration::from_secs(600)).await;
        assert_eq!(script.sent_all().await, [], "once per idle stretch");
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn resize_redraws_at_the_new_size() {
    let mut app = app();
    let mut term = terminal(80, 8);
    app.handle(event(SessionEvent::History(vec![HistoryItem::Prompt(
        "a prompt that wraps when the terminal is narrow".into(),
    )])));
    run_with(&mut app, &mut term, |script| async move {
        sleep(Duration::from_millis(10)).await;
        drop(script);
    })
    .await;
    assert!(
        plain(term.backend().buffer())
            .starts_with("> a prompt that wraps when the terminal is narrow\n")
    );
    term.backend_mut().resize(24, 10);
    run_with(&mut app, &mut term, |script| async move {
        script.terminal_event(TerminalEvent::Resize(24, 10));
        sleep(Duration::from_millis(50)).await;
        drop(script);
    })
    .await;
    let shown = plain(term.backend().buffer());
    assert!(
        shown.starts_with("> a prompt that wraps\n  when the terminal is\n  narrow\n"),
        "{shown}"
    );
}

#[tokio::test(start_paused = true)]
async fn keys_exit_the_loop() {
    let mut app = app();
    let mut term = terminal(60, 10);
    let (end, _) = run_with(&mut app, &mut term, |mut script| async move {
        script.terminal_event(TerminalEvent::Key(KeyEvent::new(
            KeyCode::Char('d'),
            KeyModifiers::CONTROL,
        )));
        assert_eq!(script.sent().await, [], "leaving is the front end's, no op");
        // Keep the session open: the loop must end on the exit alone.
        sleep(Duration::from_secs(3600)).await;
    })
    .await;
    assert_eq!(end, LoopEnd::Exit);
}

/// A stand-in for the session: a turn streams text, asks to run a command, and waits for the
/// answer; Esc interrupts; what was queued is sent after.
#[tokio::test(start_paused = true)]
async fn a_scripted_session_through_the_loop() {
    let mut app = app();
    let mut term = terminal(70, 24);
    run_with(&mut app, &mut term, |mut s| async move {
        // Turn 1: stream, ask, approve, finish.
        s.text("list files");
        s.key(KeyCode::Enter);
        assert_eq!(s.op().await, Op::Prompt("list files".into()));
        s.send_for_turn(request());
        for word in "I will **list** the files.".split_inclusive(' ') {
            s.send_for_turn(text(word));
            sleep(Duration::from_millis(20)).await;
        }
        s.send_for_turn(SessionEvent::ToolInput {
            id: "b1".into(),
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
        });
        s.send_for_turn(SessionEvent::PermissionRequest(PermissionRequest {
            id: QuestionId(1),
            tool: "Bash".into(),
            input: json!({"command": "ls"}),
            target: "ls".into(),
            reason: String::new(),
            always: tine_session::AlwaysAllow::saved(vec!["Bash(ls:*)".parse().unwrap()]),
            preview: None,
            tool_use_id: None,
        }));
        // Letters typed while the dialog is up reach neither the dialog nor the prompt.
        sleep(Duration::from_millis(50)).await;
        s.text("stray");
        s.key(KeyCode::Enter);
        assert_eq!(
            s.op().await,
            Op::Answer {
                question: QuestionId(1),
                answer: Answer::Permission(PermissionAnswer::Once)
            }
        );
        s.send_for_turn(SessionEvent::Query(QueryEvent::ToolResult {
            tool_use_id: "b1".into(),
            tool: "Bash".into(),
            output: ToolOutput::text("Cargo.toml\nsrc\n")
                .with_summary("2 lines")
                .with_display(ToolDisplay::Shell {
                    exit_code: Some(0),
                    timed_out: false,
                    truncated: false,
                    background_task: None,
                }),
        }));
        // Turn 1 is still running: this prompt waits.
        s.text("next");
        s.key(KeyCode::Enter);
        sleep(Duration::from_millis(50)).await;
        s.end_turn(TurnOutcome::Completed);
        assert_eq!(s.op().await, Op::Prompt("next".into()));
        // Turn 2: interrupted.
        s.send_for_turn(request());
        s.send_for_turn(text("Starting a long"));
        sleep(Duration::from_millis(50)).await;
        s.key(KeyCode::Esc);
        assert_eq!(s.op().await, Op::Interrupt);
        s.end_turn(TurnOutcome::Interrupted);
        // A slash command.
        s.text("/cost");
        s.key(KeyCode::Enter);
        assert_eq!(
            s.op().await,
            Op::Command {
                name: "cost".into(),
                args: String::new()
            }
        );
        s.send_for_turn(SessionEvent::TurnStarted);
        s.send_for_turn(SessionEvent::CommandOutput(CommandOutput {
            command: "cost".into(),
            text: "Total: **$0.05** · cache read 91%".into(),
            is_error: false,
            data: serde_json::Value::Null,
        }));
        s.end_turn(TurnOutcome::Completed);
        sleep(Duration::from_millis(100)).await;
    })
    .await;
    insta::assert_snapshot!("scripted_session", plain(term.backend().buffer()));
}

/// Ctrl+Z hands the terminal back: the loop returns `Suspend` (the real terminal's `run`
/// stops the process there and takes the loop up again when continued); nothing is lost.
#[tokio::test(start_paused = true)]
async fn ctrl_z_ends_the_loop_for_a_suspension_and_keeps_the_state() {
    let mut app = app();
    let mut term = terminal(60, 10);
    let (end, _) = run_with(&mut app, &mut term, |script| async move {
        script.text("half typed");
        script.terminal_event(TerminalEvent::Key(KeyEvent::new(
            KeyCode::Char('z'),
            KeyModifiers::CONTROL,
        )));
        sleep(Duration::from_secs(3600)).await;
    })
    .await;
    assert_eq!(end, LoopEnd::Suspend);
    assert_eq!(app.input_text(), "half typed");
    assert!(!app.take_suspend(), "the request is taken once");
}

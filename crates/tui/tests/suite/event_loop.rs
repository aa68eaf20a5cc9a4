//! The terminal loop on a TestBackend, with terminal events from a channel and virtual time:
//! idle costs no frame and no timer, bursts coalesce, frames stay under 60/s, the spinner ticks
//! only during a turn, resize redraws, and a scripted session runs through it end to end.

use std::future::Future;
use std::io;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::channel::mpsc as keys;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tine_tui::{
    App, LoopEnd, LoopStats, PermissionAnswer, PermissionRequest, ToolDisplayView, ToolResultView,
    TurnEndReason, UiCommand, UiEvent, event_loop,
};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::time::sleep;

use super::support::{app, plain};

type Keys = keys::UnboundedSender<io::Result<Event>>;

struct Driver {
    ui: UnboundedSender<UiEvent>,
    keys: Keys,
    commands: UnboundedReceiver<UiCommand>,
}

impl Driver {
    fn key(&self, code: KeyCode) {
        let _ = self
            .keys
            .unbounded_send(Ok(Event::Key(KeyEvent::new(code, KeyModifiers::NONE))));
    }

    fn text(&self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    fn send(&self, event: UiEvent) {
        let _ = self.ui.send(event);
    }

    async fn command(&mut self) -> UiCommand {
        match tokio::time::timeout(Duration::from_secs(60), self.commands.recv()).await {
            Ok(Some(c)) => c,
            other => panic!("no command: {other:?}"),
        }
    }
}

/// Runs the loop on `terminal` while `script` drives it; the loop ends when the script drops
/// the driver (the session's channel closes) or the app exits.
async fn run_with<F, Fut>(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    script: F,
) -> (LoopEnd, LoopStats)
where
    F: FnOnce(Driver) -> Fut,
    Fut: Future<Output = ()>,
{
    let (ui_tx, ui_rx) = mpsc::unbounded_channel();
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (keys_tx, keys_rx) = keys::unbounded();
    let driver = Driver {
        ui: ui_tx,
        keys: keys_tx,
        commands: cmd_rx,
    };
    let (result, ()) = tokio::join!(
        event_loop(terminal, app, ui_rx, keys_rx, &cmd_tx),
        script(driver)
    );
    match result {
        Ok(done) => done,
        Err(error) => panic!("loop failed: {error}"),
    }
}

fn terminal(width: u16, height: u16) -> Terminal<TestBackend> {
    match Terminal::new(TestBackend::new(width, height)) {
        Ok(t) => t,
        Err(never) => match never {},
    }
}

#[tokio::test(start_paused = true)]
async fn idle_draws_once_and_sets_no_timer() {
    let mut app = app();
    let mut term = terminal(60, 10);
    let (end, stats) = run_with(&mut app, &mut term, |driver| async move {
        sleep(Duration::from_secs(10)).await;
        drop(driver);
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
    let (_, stats) = run_with(&mut app, &mut term, |driver| async move {
        sleep(Duration::from_millis(100)).await;
        for i in 0..500 {
            driver.send(UiEvent::TextDelta(format!("w{i} ")));
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
    let (_, stats) = run_with(&mut app, &mut term, |driver| async move {
        // A delta every millisecond for one second.
        for i in 0..1000 {
            driver.send(UiEvent::TextDelta(format!("{i} ")));
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
    let (_, stats) = run_with(&mut app, &mut term, |mut driver| async move {
        driver.text("go");
        driver.key(KeyCode::Enter);
        assert_eq!(driver.command().await, UiCommand::Submit("go".into()));
        sleep(Duration::from_millis(1200)).await;
        driver.send(UiEvent::TurnEnded {
            reason: TurnEndReason::Completed,
        });
        sleep(Duration::from_secs(30)).await;
    })
    .await;
    // About ten spinner frames in 1.2 s (one per 120 ms), then nothing for 30 s.
    assert!((8..=12).contains(&stats.wakeups), "{stats:?}");
    assert!(stats.frames <= 16, "{stats:?}");
}

#[tokio::test(start_paused = true)]
async fn resize_redraws_at_the_new_size() {
    let mut app = app();
    let mut term = terminal(80, 8);
    app.handle(UiEvent::UserMessage(
        "a prompt that wraps when the terminal is narrow".into(),
    ));
    run_with(&mut app, &mut term, |driver| async move {
        sleep(Duration::from_millis(10)).await;
        drop(driver);
    })
    .await;
    assert!(
        plain(term.backend().buffer())
            .starts_with("> a prompt that wraps when the terminal is narrow\n")
    );
    term.backend_mut().resize(24, 10);
    run_with(&mut app, &mut term, |driver| async move {
        let _ = driver.keys.unbounded_send(Ok(Event::Resize(24, 10)));
        sleep(Duration::from_millis(50)).await;
        drop(driver);
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
    let (end, _) = run_with(&mut app, &mut term, |mut driver| async move {
        let _ = driver.keys.unbounded_send(Ok(Event::Key(KeyEvent::new(
            KeyCode::Char('d'),
            KeyModifiers::CONTROL,
        ))));
        assert_eq!(driver.command().await, UiCommand::Exit);
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
    run_with(&mut app, &mut term, |mut d| async move {
        // Turn 1: stream, ask, approve, finish.
        d.text("list files");
        d.key(KeyCode::Enter);
        assert_eq!(d.command().await, UiCommand::Submit("list files".into()));
        d.send(UiEvent::RequestStarted);
        for word in "I will **list** the files.".split_inclusive(' ') {
            d.send(UiEvent::TextDelta(word.into()));
            sleep(Duration::from_millis(20)).await;
        }
        d.send(UiEvent::ToolStarted {
            id: "b1".into(),
            tool: "Bash".into(),
            args: "ls".into(),
        });
        d.send(UiEvent::PermissionRequest(PermissionRequest {
            id: "b1".into(),
            tool: "Bash".into(),
            summary: "ls".into(),
            reason: None,
            always_rule: Some("Bash(ls:*)".into()),
            preview: None,
        }));
        // Letters typed while the dialog is up reach neither the dialog nor the prompt.
        sleep(Duration::from_millis(50)).await;
        d.text("stray");
        d.key(KeyCode::Enter);
        assert_eq!(
            d.command().await,
            UiCommand::AnswerPermission {
                id: "b1".into(),
                answer: PermissionAnswer::Once
            }
        );
        d.send(UiEvent::ToolFinished {
            id: "b1".into(),
            result: ToolResultView {
                is_error: false,
                summary: "2 lines".into(),
                content: "Cargo.toml\nsrc\n".into(),
                display: ToolDisplayView::Shell {
                    exit_code: Some(0),
                    timed_out: false,
                    background_task: None,
                },
            },
        });
        // Turn 1 is still running: this prompt waits.
        d.text("next");
        d.key(KeyCode::Enter);
        sleep(Duration::from_millis(50)).await;
        d.send(UiEvent::TurnEnded {
            reason: TurnEndReason::Completed,
        });
        assert_eq!(d.command().await, UiCommand::Submit("next".into()));
        // Turn 2: interrupted.
        d.send(UiEvent::RequestStarted);
        d.send(UiEvent::TextDelta("Starting a long".into()));
        sleep(Duration::from_millis(50)).await;
        d.key(KeyCode::Esc);
        assert_eq!(d.command().await, UiCommand::Interrupt);
        d.send(UiEvent::TurnEnded {
            reason: TurnEndReason::Interrupted,
        });
        // A slash command.
        d.text("/cost");
        d.key(KeyCode::Enter);
        assert_eq!(
            d.command().await,
            UiCommand::SlashCommand {
                name: "cost".into(),
                args: String::new()
            }
        );
        d.send(UiEvent::CommandOutput {
            command: "cost".into(),
            text: "Total: **$0.05** · cache read 91%".into(),
        });
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
    let (end, _) = run_with(&mut app, &mut term, |driver| async move {
        driver.text("half typed");
        let _ = driver.keys.unbounded_send(Ok(Event::Key(KeyEvent::new(
            KeyCode::Char('z'),
            KeyModifiers::CONTROL,
        ))));
        sleep(Duration::from_secs(3600)).await;
    })
    .await;
    assert_eq!(end, LoopEnd::Suspend);
    assert_eq!(app.input().text(), "half typed");
    assert!(!app.take_suspend(), "the request is taken once");
}

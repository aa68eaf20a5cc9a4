//! The away card and speculation's drafts through the terminal loop, under paused time: a
//! return after the idle gap (focus regained, or the first key) asks for the summary once and
//! shows the answer as a card until Enter or Esc; a pause in typing hands the draft over once;
//! both off, nothing is asked and no timer runs.

use std::future::Future;
use std::io;
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures::channel::mpsc as keys;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tine_tui::{App, LoopEnd, LoopStats, TurnEndReason, UiCommand, UiEvent, event_loop};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::time::sleep;

use super::support::{app, plain};

const MINUTE: Duration = Duration::from_secs(60);

struct Driver {
    ui: UnboundedSender<UiEvent>,
    keys: keys::UnboundedSender<io::Result<Event>>,
    commands: UnboundedReceiver<UiCommand>,
}

impl Driver {
    fn event(&self, event: Event) {
        let _ = self.keys.unbounded_send(Ok(event));
    }

    fn key(&self, code: KeyCode) {
        self.event(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    fn text(&self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// What the app sent so far (the loop has had a moment to run).
    async fn sent(&mut self) -> Vec<UiCommand> {
        sleep(Duration::from_millis(5)).await;
        let mut out = Vec::new();
        while let Ok(command) = self.commands.try_recv() {
            out.push(command);
        }
        out
    }
}

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
    result.unwrap_or_else(|error| panic!("loop failed: {error}"))
}

fn terminal() -> Terminal<TestBackend> {
    match Terminal::new(TestBackend::new(80, 24)) {
        Ok(t) => t,
        Err(never) => match never {},
    }
}

/// One turn: the prompt typed and submitted, a reply, the end.
async fn one_turn(d: &mut Driver) {
    d.text("rename the parser module");
    d.key(KeyCode::Enter);
    assert_eq!(
        d.sent().await,
        vec![UiCommand::Submit("rename the parser module".into())]
    );
    let _ = d.ui.send(UiEvent::TextDelta("Renamed it.".into()));
    let _ = d.ui.send(UiEvent::TurnEnded {
        reason: TurnEndReason::Completed,
    });
}

#[tokio::test(start_paused = true)]
async fn a_return_after_the_idle_gap_asks_once_and_shows_the_card() {
    let mut app = app();
    app.set_away_after(Some(5 * MINUTE));
    let mut terminal = terminal();
    run_with(&mut app, &mut terminal, |mut d| async move {
        one_turn(&mut d).await;
        // Back before the gap: nothing asked.
        sleep(4 * MINUTE).await;
        d.key(KeyCode::Char('x'));
        assert_eq!(d.sent().await, Vec::new());
        // Six idle minutes since that key: focus coming back is a return.
        sleep(6 * MINUTE).await;
        d.event(Event::FocusGained);
        assert_eq!(d.sent().await, vec![UiCommand::AwaySummary]);
        // The first key after it is no second return while the answer is awaited.
        d.key(KeyCode::Backspace);
        assert_eq!(d.sent().await, Vec::new());
        let _ = d.ui.send(UiEvent::AwaySummary(
            "You were renaming the parser module; next, run the tests.".into(),
        ));
        sleep(Duration::from_millis(50)).await;
    })
    .await;
    assert!(app.away_card().is_some());
    let screen = plain(terminal.backend().buffer());
    assert!(screen.contains("While you were away"), "{screen}");
    assert!(
        screen.contains("You were renaming the parser module; next, run the tests."),
        "{screen}"
    );

    // A key after a further gap is a return too; Esc takes the card away.
    run_with(&mut app, &mut terminal, |mut d| async move {
        sleep(10 * MINUTE).await;
        d.key(KeyCode::Esc);
        assert_eq!(d.sent().await, vec![UiCommand::AwaySummary]);
        sleep(Duration::from_millis(50)).await;
    })
    .await;
    assert!(app.away_card().is_none());
    let screen = plain(terminal.backend().buffer());
    assert!(!screen.contains("While you were away"), "{screen}");
}

#[tokio::test(start_paused = true)]
async fn a_pause_in_typing_hands_the_draft_over_once() {
    let mut app = app();
    app.set_speculation(true);
    let mut terminal = terminal();
    run_with(&mut app, &mut terminal, |mut d| async move {
        d.text("expl");
        sleep(Duration::from_secs(1)).await;
        assert_eq!(
            d.sent().await,
            Vec::new(),
            "too short to be worth a request"
        );
        d.text("ain src/lib.rs");
        sleep(Duration::from_millis(100)).await;
        assert_eq!(d.sent().await, Vec::new(), "still typing");
        sleep(Duration::from_millis(400)).await;
        assert_eq!(
            d.sent().await,
            vec![UiCommand::Speculate("explain src/lib.rs".into())]
        );
        // The same draft again (typed and erased) is not sent twice.
        d.text("x");
        d.key(KeyCode::Backspace);
        sleep(Duration::from_secs(1)).await;
        assert_eq!(d.sent().await, Vec::new());
        d.text(" please");
        sleep(Duration::from_secs(1)).await;
        assert_eq!(
            d.sent().await,
            vec![UiCommand::Speculate("explain src/lib.rs please".into())]
        );
        // A slash command is never speculated on.
        for _ in 0.."explain src/lib.rs please".len() {
            d.key(KeyCode::Backspace);
        }
        d.text("/compact keep the API");
        sleep(Duration::from_secs(1)).await;
        assert_eq!(d.sent().await, Vec::new());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn both_off_nothing_is_asked_and_no_timer_runs() {
    let mut app = app();
    let mut terminal = terminal();
    run_with(&mut app, &mut terminal, |mut d| async move {
        one_turn(&mut d).await;
        sleep(30 * MINUTE).await;
        d.event(Event::FocusGained);
        d.text("explain src/lib.rs");
        assert_eq!(d.sent().await, Vec::new());
    })
    .await;
    // Typed and paused: no speculation timer is set at all.
    assert_eq!(app.next_wakeup(), None);
}

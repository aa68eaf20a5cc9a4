//! The away card and speculation's drafts through the terminal loop, under paused time: a
//! return after the idle gap (focus regained, or the first key) asks for the summary once and
//! shows the answer as a card until Enter or Esc; a pause in typing hands the draft over once;
//! both off, nothing is asked and no timer runs but the idle hint's.

use std::time::Duration;

use crossterm::event::{Event as TerminalEvent, KeyCode};
use tine_session::{Op, QueryEvent, SessionEvent, TurnOutcome};
use tokio::time::sleep;

use super::scripted::{Script, run_with, terminal};
use super::support::{app, app_with, plain};

const MINUTE: Duration = Duration::from_secs(60);

/// One turn: the prompt typed and submitted, a reply, the end.
async fn one_turn(s: &mut Script) {
    s.text("rename the parser module");
    s.key(KeyCode::Enter);
    assert_eq!(
        s.sent().await,
        vec![Op::Prompt("rename the parser module".into())]
    );
    s.send_for_turn(SessionEvent::Query(QueryEvent::TextDelta {
        text: "Renamed it.".into(),
    }));
    s.end_turn(TurnOutcome::Completed);
}

#[tokio::test(start_paused = true)]
async fn a_return_after_the_idle_gap_asks_once_and_shows_the_card() {
    let mut app = app_with(|info| info.away_after = Some(5 * MINUTE));
    let mut terminal = terminal(80, 24);
    run_with(&mut app, &mut terminal, |mut s| async move {
        one_turn(&mut s).await;
        // Back before the gap: nothing asked.
        sleep(4 * MINUTE).await;
        s.key(KeyCode::Char('x'));
        assert_eq!(s.sent().await, Vec::new());
        // Six idle minutes since that key: focus coming back is a return.
        sleep(6 * MINUTE).await;
        s.terminal_event(TerminalEvent::FocusGained);
        assert_eq!(s.sent().await, vec![Op::AwaySummary]);
        // The first key after it is no second return while the answer is awaited.
        s.key(KeyCode::Backspace);
        assert_eq!(s.sent().await, Vec::new());
        s.send(SessionEvent::AwaySummary(
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
    run_with(&mut app, &mut terminal, |mut s| async move {
        sleep(10 * MINUTE).await;
        s.key(KeyCode::Esc);
        assert_eq!(s.sent().await, vec![Op::AwaySummary]);
        sleep(Duration::from_millis(50)).await;
    })
    .await;
    assert!(app.away_card().is_none());
    let screen = plain(terminal.backend().buffer());
    assert!(!screen.contains("While you were away"), "{screen}");
}

#[tokio::test(start_paused = true)]
async fn a_pause_in_typing_hands_the_draft_over_once() {
    let mut app = app_with(|info| info.speculation = true);
    let mut terminal = terminal(80, 24);
    run_with(&mut app, &mut terminal, |mut s| async move {
        s.text("expl");
        sleep(Duration::from_secs(1)).await;
        assert_eq!(
            s.sent().await,
            Vec::new(),
            "too short to be worth a request"
        );
        s.text("ain src/lib.rs");
        sleep(Duration::from_millis(100)).await;
        assert_eq!(s.sent().await, Vec::new(), "still typing");
        sleep(Duration::from_millis(400)).await;
        assert_eq!(
            s.sent().await,
            vec![Op::Speculate("explain src/lib.rs".into())]
        );
        // The same draft again (typed and erased) is not sent twice.
        s.text("x");
        s.key(KeyCode::Backspace);
        sleep(Duration::from_secs(1)).await;
        assert_eq!(s.sent().await, Vec::new());
        s.text(" please");
        sleep(Duration::from_secs(1)).await;
        assert_eq!(
            s.sent().await,
            vec![Op::Speculate("explain src/lib.rs please".into())]
        );
        // A slash command is never speculated on.
        for _ in 0.."explain src/lib.rs please".len() {
            s.key(KeyCode::Backspace);
        }
        s.text("/compact keep the API");
        sleep(Duration::from_secs(1)).await;
        assert_eq!(s.sent().await, Vec::new());
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn both_off_nothing_is_asked_and_no_timer_runs() {
    let mut app = app();
    let mut terminal = terminal(80, 24);
    run_with(&mut app, &mut terminal, |mut s| async move {
        one_turn(&mut s).await;
        sleep(30 * MINUTE).await;
        s.terminal_event(TerminalEvent::FocusGained);
        s.text("explain src/lib.rs");
        assert_eq!(s.sent().await, Vec::new());
    })
    .await;
    // Typed and paused: no speculation timer is set at all (the idle hint went long ago).
    assert_eq!(app.next_wakeup(), None);
}

//! The terminal loop on a TestBackend with a scripted stand-in for the session: the script
//! sends the session's events and terminal events, and reads the ops the loop submitted
//! (a recorder numbers them as a session would).

use std::future::Future;
use std::io;
use std::time::Duration;

use crossterm::event::{Event as TerminalEvent, KeyCode, KeyEvent, KeyModifiers};
use futures::channel::mpsc as keys;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tine_session::{Event, Op, OpId, SessionClosed, SessionEvent, TurnOutcome};
use tine_tui::{App, LoopEnd, LoopStats, Submitter, event_loop};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::time::sleep;

use super::support::turn_end;

/// Numbers the ops as a session would and hands them to the script.
pub(super) struct Recorder {
    next: u64,
    ops: UnboundedSender<(OpId, Op)>,
}

impl Submitter for Recorder {
    fn submit(&mut self, op: Op) -> Result<OpId, SessionClosed> {
        self.next += 1;
        let id = OpId(self.next);
        self.ops.send((id, op)).map_err(|_| SessionClosed)?;
        Ok(id)
    }
}

/// The script's side.
pub(super) struct Script {
    events: UnboundedSender<Event>,
    pub keys: keys::UnboundedSender<io::Result<TerminalEvent>>,
    ops: UnboundedReceiver<(OpId, Op)>,
    /// The last turn op submitted (a prompt or a command).
    turn: Option<OpId>,
}

impl Script {
    pub(super) fn terminal_event(&self, event: TerminalEvent) {
        let _ = self.keys.unbounded_send(Ok(event));
    }

    pub(super) fn key(&self, code: KeyCode) {
        self.terminal_event(TerminalEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    pub(super) fn text(&self, text: &str) {
        for c in text.chars() {
            self.key(KeyCode::Char(c));
        }
    }

    /// An event of the session's, naming no op.
    pub(super) fn send(&self, msg: SessionEvent) {
        let _ = self.events.send(Event { id: None, msg });
    }

    /// An event of the running turn (the last turn op submitted).
    pub(super) fn send_for_turn(&self, msg: SessionEvent) {
        let _ = self.events.send(Event { id: self.turn, msg });
    }

    /// The last turn op's end.
    pub(super) fn end_turn(&self, outcome: TurnOutcome) {
        self.send_for_turn(SessionEvent::TurnEnded(turn_end(outcome)));
    }

    fn note(&mut self, id: OpId, op: &Op) {
        if matches!(op, Op::Prompt(_) | Op::Command { .. }) {
            self.turn = Some(id);
        }
    }

    /// The next op submitted.
    pub(super) async fn op(&mut self) -> Op {
        match tokio::time::timeout(Duration::from_secs(60), self.ops.recv()).await {
            Ok(Some((id, op))) => {
                self.note(id, &op);
                op
            }
            other => panic!("no op: {other:?}"),
        }
    }

    /// What was submitted so far, but the idle hints (the loop has had a moment to run).
    pub(super) async fn sent(&mut self) -> Vec<Op> {
        self.sent_all()
            .await
            .into_iter()
            .filter(|op| !matches!(op, Op::FlushBackground | Op::NotifyIdle))
            .collect()
    }

    /// Everything submitted so far (the loop has had a moment to run).
    pub(super) async fn sent_all(&mut self) -> Vec<Op> {
        sleep(Duration::from_millis(5)).await;
        let mut out = Vec::new();
        while let Ok((id, op)) = self.ops.try_recv() {
            self.note(id, &op);
            out.push(op);
        }
        out
    }
}

/// Runs the loop on `terminal` while `script` drives it; the loop ends when the script drops
/// its side (the session's channel closes) or the app exits.
pub(super) async fn run_with<F, Fut>(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    script: F,
) -> (LoopEnd, LoopStats)
where
    F: FnOnce(Script) -> Fut,
    Fut: Future<Output = ()>,
{
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let (ops_tx, ops_rx) = mpsc::unbounded_channel();
    let (keys_tx, keys_rx) = keys::unbounded();
    let mut recorder = Recorder {
        next: 0,
        ops: ops_tx,
    };
    let side = Script {
        events: events_tx,
        keys: keys_tx,
        ops: ops_rx,
        turn: None,
    };
    let (result, ()) = tokio::join!(
        event_loop(terminal, app, events_rx, keys_rx, &mut recorder),
        script(side)
    );
    match result {
        Ok(done) => done,
        Err(error) => panic!("loop failed: {error}"),
    }
}

pub(super) fn terminal(width: u16, height: u16) -> Terminal<TestBackend> {
    match Terminal::new(TestBackend::new(width, height)) {
        Ok(t) => t,
        Err(never) => match never {},
    }
}

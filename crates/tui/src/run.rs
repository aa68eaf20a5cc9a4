//! The terminal loop: terminal events (crossterm's async `EventStream`) and the session's
//! [`Event`]s in, [`Op`]s submitted (each op's id told to the app), a frame drawn when the app
//! is dirty, at most one per [`FRAME_INTERVAL`] (a burst of deltas between two frames costs
//! one frame). Idle costs nothing: with no input, no session event and no turn running there
//! is no timer at all (the spinner ticks only while a turn runs; the idle hint once, a minute
//! after a turn), so the task sleeps until something happens. With
//! [`AppConfig::history_file`](crate::AppConfig), the loop keeps the prompt box's history on
//! disk (`prompt_history`).
//!
//! [`event_loop`] takes any ratatui backend, any stream of terminal events and any
//! [`Submitter`], so tests drive it with a `TestBackend`, a channel and a recorder under paused
//! time (or a real session); [`run`] is the real terminal.

use std::io::{self, BufWriter};
use std::path::PathBuf;

use crossterm::event::{Event as TerminalEvent, EventStream};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use tine_session::{EXPORT_CLIPBOARD, Event, Op, OpId, SessionClosed, SessionEvent, SessionHandle};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Duration, Instant, sleep_until};

use crate::app::App;
use crate::frame_times::{FrameTimes, thread_cpu};
use crate::highlight;
use crate::prompt_history;
use crate::terminal::{TerminalGuard, TerminalOptions};

/// The shortest time between two frames (60 per second).
pub const FRAME_INTERVAL: Duration = Duration::from_micros(16_667);
/// Session events handled in one go before looking at the keyboard again.
const EVENT_BATCH: usize = 1024;

/// Where the UI's ops go: the session, or a test's recorder.
pub trait Submitter {
    /// Submits `op`; returns the id the events answering it carry.
    fn submit(&mut self, op: Op) -> Result<OpId, SessionClosed>;
}

impl Submitter for SessionHandle {
    fn submit(&mut self, op: Op) -> Result<OpId, SessionClosed> {
        SessionHandle::submit(self, op)
    }
}

/// Why the loop failed.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// Reading or writing the terminal failed.
    #[error("the terminal failed: {0}")]
    Terminal(#[from] io::Error),
    /// Drawing a frame failed.
    #[error("drawing failed: {0}")]
    Draw(String),
}

/// What the loop did (tests and benchmarks read it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopStats {
    /// Frames drawn.
    pub frames: u64,
    /// Keys, pastes, mouse and resize events handled.
    pub terminal_events: u64,
    /// The session's events handled.
    pub session_events: u64,
    /// Times the loop woke on its own timer (spinner frames, a frame held back, the Ctrl+C
    /// hint): zero while idle.
    pub wakeups: u64,
    /// How long each frame took to draw.
    pub draw: FrameTimes,
}

/// Why the loop returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopEnd {
    /// The person asked to exit (`/exit`, Ctrl-D on an empty prompt, Ctrl-C twice): the front
    /// end shuts the session down.
    Exit,
    /// The session's event channel closed, or it refused an op (it has ended).
    SessionClosed,
    /// The terminal's input ended.
    InputClosed,
    /// Ctrl+Z: [`run`] restores the terminal, stops the process and, once it is continued,
    /// takes the terminal again and goes on. Only [`event_loop`] returns it.
    Suspend,
}

/// Runs the UI on the real terminal until the person exits or the session goes away: the
/// session's `events` in, ops to `session`. The terminal is restored when this returns, and
/// on panic.
pub async fn run<S: Submitter>(
    app: &mut App,
    events: UnboundedReceiver<Event>,
    session: &mut S,
    options: TerminalOptions,
) -> Result<(LoopEnd, LoopStats), TuiError> {
    // Loading syntect's syntaxes takes a moment: do it off the loop before a code block needs it.
    let _preload = tokio::task::spawn_blocking(highlight::preload);
    let mut events = events;
    let mut input = EventStream::new();
    let mut pump = Pump::new(session);
    loop {
        let guard = TerminalGuard::enter(options)?;
        // One write per frame: the whole diff of a frame goes out at once.
        let backend = CrosstermBackend::new(BufWriter::with_capacity(1 << 16, io::stdout()));
        let mut terminal = Terminal::new(backend)?;
        terminal.clear()?;
        // `/export`'s copy goes to the terminal between frames (each frame is flushed whole).
        let mut stdout = io::stdout();
        let result = drive(
            &mut terminal,
            app,
            &mut events,
            &mut input,
            &mut pump,
            Some(&mut stdout),
        )
        .await;
        drop(terminal);
        drop(guard);
        match result {
            Ok((LoopEnd::Suspend, _)) => {
                suspend();
                // Continued (`fg`): everything is drawn again on the retaken screen.
                app.mark_dirty();
            }
            other => return other,
        }
    }
}

/// Stops the process's group as the terminal's Ctrl+Z would (raw mode made it a key), with the
/// terminal already restored; returns once continued. Where nothing could continue it (an
/// orphaned group: no shell with job control), the kernel ignores the stop and the UI comes
/// straight back.
fn suspend() {
    use nix::sys::signal::{Signal, killpg};
    if let Err(error) = killpg(nix::unistd::getpgrp(), Signal::SIGTSTP) {
        tracing::warn!(%error, "cannot suspend");
    }
}

/// The loop itself, on any backend, any stream of terminal events and any [`Submitter`].
pub async fn event_loop<B, I, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    mut events: UnboundedReceiver<Event>,
    mut input: I,
    session: &mut S,
) -> Result<(LoopEnd, LoopStats), TuiError>
where
    B: Backend,
    I: Stream<Item = io::Result<TerminalEvent>> + Unpin,
    S: Submitter,
{
    let mut pump = Pump::new(session);
    // No terminal to write escapes to: what is for the clipboard stays in the app
    // (`App::take_clipboard`).
    drive(terminal, app, &mut events, &mut input, &mut pump, None).await
}

/// Moves ops from the app to the session, telling the app each op's id, and keeps the prompt
/// history file.
struct Pump<'a, S> {
    session: &'a mut S,
    /// The history file and the project, once the session said where they are.
    history: Option<(PathBuf, PathBuf)>,
}

impl<'a, S: Submitter> Pump<'a, S> {
    fn new(session: &'a mut S) -> Self {
        Self {
            session,
            history: None,
        }
    }

    /// One session event into the app, then what it made due.
    fn event(&mut self, app: &mut App, event: Event) -> Result<(), SessionClosed> {
        if let SessionEvent::Configured(info) = &event.msg
            && self.history.is_none()
            && app.keeps_history_file()
        {
            let path = prompt_history::history_path(&info.home);
            app.add_history(prompt_history::load(&path, &info.cwd));
            self.history = Some((path, info.cwd.clone()));
        }
        let ops = app.handle(event);
        self.submit(app, ops)
    }

    fn submit(&mut self, app: &mut App, ops: Vec<Op>) -> Result<(), SessionClosed> {
        for op in ops {
            if let Some((path, project)) = &self.history {
                match &op {
                    Op::Prompt(text) => prompt_history::append(path, project, text),
                    // `/export` as typed, not as the UI asks the session for the clipboard.
                    Op::Command { name, args }
                        if args.is_empty() || (name == "export" && args == EXPORT_CLIPBOARD) =>
                    {
                        prompt_history::append(path, project, &format!("/{name}"));
                    }
                    Op::Command { name, args } => {
                        prompt_history::append(path, project, &format!("/{name} {args}"));
                    }
                    _ => {}
                }
            }
            let id = self.session.submit(op.clone())?;
            app.submitted(&op, id);
        }
        Ok(())
    }
}

/// The loop, on borrowed channels (so [`run`] can take it up again after a suspension).
async fn drive<B, I, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &mut UnboundedReceiver<Event>,
    input: &mut I,
    pump: &mut Pump<'_, S>,
    mut escapes: Option<&mut (dyn io::Write + Send)>,
) -> Result<(LoopEnd, LoopStats), TuiError>
where
    B: Backend,
    I: Stream<Item = io::Result<TerminalEvent>> + Unpin,
    S: Submitter,
{
    let mut stats = LoopStats::default();
    let mut last_frame: Option<Instant> = None;
    // The frames of the running turn, logged when it ends.
    let mut turn_frames = FrameTimes::default();
    let mut was_busy = app.is_busy();
    // A status line command's run ending wakes the loop (no timer polls it).
    let status_command_done = app.status_command_waker();
    app.mark_dirty();
    // What the session said before the loop began (its `Configured` first) comes before any
    // key: a key must meet the session as it is.
    while let Ok(event) = events.try_recv() {
        stats.session_events += 1;
        if pump.event(app, event).is_err() {
            return Ok((LoopEnd::SessionClosed, stats));
        }
    }
    let end = loop {
        if app.is_dirty() {
            let now = Instant::now();
            if last_frame.is_none_or(|t| now >= t + FRAME_INTERVAL) {
                // Real clocks, also under a test's paused time: this is what a frame costs.
                let (wall, cpu) = (std::time::Instant::now(), thread_cpu());
                terminal
                    .draw(|frame| app.render(frame))
                    .map_err(|e| TuiError::Draw(e.to_string()))?;
                let (wall, cpu) = (
                    wall.elapsed(),
                    cpu.and_then(|c| Some(thread_cpu()?.saturating_sub(c))),
                );
                stats.draw.record(wall, cpu);
                if app.is_busy() {
                    turn_frames.record(wall, cpu);
                }
                last_frame = Some(now);
                stats.frames += 1;
            }
        }
        let busy = app.is_busy();
        if was_busy && !busy {
            turn_frames.log("turn");
            turn_frames = FrameTimes::default();
        }
        was_busy = busy;
        if app.should_exit() {
            break LoopEnd::Exit;
        }
        if app.take_suspend() {
            break LoopEnd::Suspend;
        }
        let frame_due = if app.is_dirty() {
            last_frame.map(|t| t + FRAME_INTERVAL)
        } else {
            None
        };
        let wake = match (frame_due, app.next_wakeup()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let sent = tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => {
                    stats.terminal_events += 1;
                    let ops = app.handle_terminal_event(event);
                    pump.submit(app, ops)
                }
                Some(Err(error)) => return Err(error.into()),
                None => break LoopEnd::InputClosed,
            },
            event = events.recv() => match event {
                Some(event) => {
                    stats.session_events += 1;
                    let mut sent = pump.event(app, event);
                    for _ in 1..EVENT_BATCH {
                        let Ok(event) = events.try_recv() else { break };
                        stats.session_events += 1;
                        sent = sent.and_then(|()| pump.event(app, event));
                    }
                    sent
                }
                None => break LoopEnd::SessionClosed,
            },
            () = status_command_done.notified() => {
                app.tick(Instant::now());
                Ok(())
            }
            () = sleep_until(wake.unwrap_or_else(Instant::now)), if wake.is_some() => {
                stats.wakeups += 1;
                app.tick(Instant::now());
                let ops = app.due_ops(Instant::now());
                pump.submit(app, ops)
            }
        };
        if let Some(out) = escapes.as_deref_mut()
            && let Some(text) = app.take_clipboard()
        {
            copy(out, &text);
        }
        // The session has ended: it takes nothing more, and its channel closes.
        if sent.is_err() {
            break LoopEnd::SessionClosed;
        }
    };
    stats.draw.log("session");
    Ok((end, stats))
}

/// Writes `text` to the clipboard as the OSC 52 escape. A terminal that does not know it
/// ignores it; a failed write is logged (the screen is the terminal's, not ours to print on).
fn copy(out: &mut (dyn io::Write + Send), text: &str) {
    let sequence = crate::clipboard::sequence(text);
    let written = out
        .write_all(sequence.as_bytes())
        .and_then(|()| out.flush());
    if let Err(error) = written {
        tracing::warn!(%error, "cannot write the clipboard's escape to the terminal");
    }
}

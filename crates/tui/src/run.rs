//! The terminal loop: terminal events (crossterm's async `EventStream`) and the session's
//! [`UiEvent`]s in, [`UiCommand`]s out, a frame drawn when the app is dirty, at most one per
//! [`FRAME_INTERVAL`] (a burst of deltas between two frames costs one frame). Idle costs
//! nothing: with no input, no session event and no turn running there is no timer at all (the
//! spinner ticks only while a turn runs), so the task sleeps until something happens.
//!
//! [`event_loop`] takes any ratatui backend and any stream of terminal events, so tests drive it
//! with a `TestBackend` and a channel under paused time; [`run`] is the real terminal.

use std::io::{self, BufWriter};

use crossterm::event::{Event, EventStream};
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::time::{Duration, Instant, sleep_until};

use crate::app::App;
use crate::event::{UiCommand, UiEvent};
use crate::frame_times::{FrameTimes, thread_cpu};
use crate::highlight;
use crate::terminal::{TerminalGuard, TerminalOptions};

/// The shortest time between two frames (60 per second).
pub const FRAME_INTERVAL: Duration = Duration::from_micros(16_667);
/// Session events handled in one go before looking at the keyboard again.
const EVENT_BATCH: usize = 1024;

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("the terminal failed: {0}")]
    Terminal(#[from] io::Error),
    #[error("drawing failed: {0}")]
    Draw(String),
}

/// What the loop did (tests and benchmarks read it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoopStats {
    pub frames: u64,
    pub terminal_events: u64,
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
    /// The person asked to exit (`UiCommand::Exit` was sent).
    Exit,
    /// The session's event channel closed.
    SessionClosed,
    /// The terminal's input ended.
    InputClosed,
    /// Ctrl+Z: [`run`] restores the terminal, stops the process and, once it is continued,
    /// takes the terminal again and goes on. Only [`event_loop`] returns it.
    Suspend,
}

/// Runs the UI on the real terminal until the person exits or the session goes away. The
/// terminal is restored when this returns, and on panic.
pub async fn run(
    app: &mut App,
    ui_events: UnboundedReceiver<UiEvent>,
    commands: UnboundedSender<UiCommand>,
    options: TerminalOptions,
) -> Result<(LoopEnd, LoopStats), TuiError> {
    // Loading syntect's syntaxes takes a moment: do it off the loop before a code block needs it.
    let _preload = tokio::task::spawn_blocking(highlight::preload);
    let mut ui_events = ui_events;
    let mut input = EventStream::new();
    loop {
        let guard = TerminalGuard::enter(options)?;
        // One write per frame: the whole diff of a frame goes out at once.
        let backend = CrosstermBackend::new(BufWriter::with_capacity(1 << 16, io::stdout()));
        let mut terminal = Terminal::new(backend)?;
        terminal.clear()?;
        let result = drive(&mut terminal, app, &mut ui_events, &mut input, &commands).await;
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

/// The loop itself, on any backend and any stream of terminal events.
pub async fn event_loop<B, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    mut ui_events: UnboundedReceiver<UiEvent>,
    mut input: S,
    commands: &UnboundedSender<UiCommand>,
) -> Result<(LoopEnd, LoopStats), TuiError>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
{
    drive(terminal, app, &mut ui_events, &mut input, commands).await
}

/// The loop, on borrowed channels (so [`run`] can take it up again after a suspension).
async fn drive<B, S>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    ui_events: &mut UnboundedReceiver<UiEvent>,
    input: &mut S,
    commands: &UnboundedSender<UiCommand>,
) -> Result<(LoopEnd, LoopStats), TuiError>
where
    B: Backend,
    S: Stream<Item = io::Result<Event>> + Unpin,
{
    let mut stats = LoopStats::default();
    let mut last_frame: Option<Instant> = None;
    // The frames of the running turn, logged when it ends.
    let mut turn_frames = FrameTimes::default();
    let mut was_busy = app.is_busy();
    app.mark_dirty();
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
        tokio::select! {
            event = input.next() => match event {
                Some(Ok(event)) => {
                    stats.terminal_events += 1;
                    send(commands, app.handle_terminal_event(event));
                }
                Some(Err(error)) => return Err(error.into()),
                None => break LoopEnd::InputClosed,
            },
            event = ui_events.recv() => match event {
                Some(event) => {
                    stats.session_events += 1;
                    send(commands, app.handle(event));
                    for _ in 1..EVENT_BATCH {
                        let Ok(event) = ui_events.try_recv() else { break };
                        stats.session_events += 1;
                        send(commands, app.handle(event));
                    }
                }
                None => break LoopEnd::SessionClosed,
            },
            () = sleep_until(wake.unwrap_or_else(Instant::now)), if wake.is_some() => {
                stats.wakeups += 1;
                app.tick(Instant::now());
                send(commands, app.due_commands(Instant::now()));
            }
        }
    };
    stats.draw.log("session");
    Ok((end, stats))
}

fn send(commands: &UnboundedSender<UiCommand>, out: Vec<UiCommand>) {
    for command in out {
        // A session that has gone away cannot take commands; the loop ends on its channel.
        let _ = commands.send(command);
    }
}

//! tine-tui: the interactive terminal UI (ratatui + crossterm), a front end of the session.
//!
//! It speaks the session's protocol directly: the session's [`Event`]s come in, the person's
//! keys go out as [`Op`]s, both of `tine-session`. [`App`] is a pure state machine: events,
//! keys and time in, ops out, a frame drawn on request; whoever submits an op tells the app
//! the id it got, so the app knows which turn is its own. What the UI works out for itself is
//! rendering: a tool call's three phases, the diff of an edit, "Rejected by you" for a refused
//! call, files relative to the project, the names of background jobs. [`run()`] owns the
//! terminal and the loop; [`event_loop`] is the same loop on any backend.
//!
//! ```
//! use ratatui::{Terminal, backend::TestBackend};
//! use tine_session::{Event, Op, OpId, QueryEvent, SessionEvent};
//! use tine_tui::{App, AppConfig};
//!
//! let mut app = App::new(AppConfig::default());
//! let mut ops = Vec::new();
//! for c in "hello".chars() {
//!     ops.extend(app.handle_key(crossterm::event::KeyCode::Char(c).into()));
//! }
//! ops.extend(app.handle_key(crossterm::event::KeyCode::Enter.into()));
//! assert_eq!(ops, [Op::Prompt("hello".into())]);
//! // The session named the prompt's op; the events of its turn carry that id.
//! app.submitted(&ops[0], OpId(1));
//! app.handle(Event {
//!     id: Some(OpId(1)),
//!     msg: SessionEvent::Query(QueryEvent::TextDelta { text: "Hi **there**.".into() }),
//! });
//! let mut terminal = Terminal::new(TestBackend::new(40, 8))?;
//! terminal.draw(|frame| app.render(frame))?;
//! let screen = format!("{:?}", terminal.backend().buffer());
//! assert!(screen.contains("● Hi there."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Modules in reading order (private; the items re-exported here are the API):
//! - `app`: [`App`], its state, the turn guard by op id and the queue of prompts sent while a
//!   turn runs.
//! - `incoming`: what each session event does (a new conversation in place, turns' start and
//!   end, questions, commands' answers, background work, the status line); `reply`: the
//!   running turn's text, thinking, tool calls and retries; `replay`: a resumed conversation
//!   shown again; `server_tools`: web search calls shown as finished calls.
//! - `keys`: what each key, paste and wheel notch does.
//! - `view`: drawing a frame.
//! - `transcript`: entries with virtual scrolling and per-width cached rows; `entry`,
//!   `layout`, `tool_call`, `shown`: how each entry lays out, a tool call's three phases, how
//!   files and calls are named; `agent_call`: an Agent call's sub-agent's latest calls while
//!   it runs, its "Done (…)" after.
//! - `stream`, `markdown`, `highlight`: incremental markdown, code highlighting.
//! - `diff`: Edit/Write previews and results as coloured diffs.
//! - `input`: the prompt box's editor, history and pastes; `prompt_history`: the history file;
//!   `history_search`: Ctrl+R over the prompts sent before.
//! - `slash`: the command table (the session's and the UI's own) and its completion;
//!   `at_mention`: the `@` file picker over the project.
//! - `permission`, `choice`, `plan_approval`: the permission dialog and its queue, its
//!   options, the ExitPlanMode labels; `elicitation`, `elicitation_form`: an MCP server's
//!   question, its form; `thinking`: Tab toggles extended thinking.
//! - `away`, `speculation`, `idle`: the away card after an idle gap; drafts handed to the
//!   session while typing pauses; the idle hint a minute after a turn.
//! - `status_command`, `sgr`: the settings' status line command run on the figures' changes,
//!   and its output's colours read into styles.
//! - `tasks_panel`, `panel_task`: the tasks panel (`/tasks`, Ctrl+T) and its rows: background
//!   work listed, the selected
//!   task stopped.
//! - `wrap`, `theme`: word wrapping with hanging prefixes; colours.
//! - `run`, `terminal`: the terminal loop (raw mode, alternate screen, frame pacing) and
//!   restoring the terminal on exit and on panic; `frame_times`: what each frame cost;
//!   `clipboard`: `/export`'s copy written to the terminal as OSC 52.
//!
//! # Types from other crates
//!
//! The protocol's types are `tine-session`'s ([`Event`], [`Op`], [`OpId`],
//! [`SessionInfo`](tine_session::SessionInfo), [`SessionHandle`]); frames are ratatui's and
//! terminal events crossterm's.
//!
//! [`Event`]: tine_session::Event
//! [`Op`]: tine_session::Op
//! [`OpId`]: tine_session::OpId
//! [`SessionHandle`]: tine_session::SessionHandle
#![warn(missing_docs, unnameable_types)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod agent_call;
mod app;
mod at_mention;
mod away;
mod choice;
mod clipboard;
mod diff;
mod elicitation;
mod elicitation_form;
mod entry;
mod frame_times;
mod highlight;
mod history_search;
mod idle;
mod incoming;
mod input;
mod keys;
mod layout;
mod markdown;
mod panel_task;
mod permission;
mod plan_approval;
mod prompt_history;
mod replay;
mod reply;
mod resume_picker;
mod rewind;
mod run;
mod server_tools;
mod sgr;
mod shown;
mod slash;
mod speculation;
mod status_command;
mod stream;
mod tasks_panel;
mod terminal;
mod theme;
mod thinking;
mod tool_call;
mod transcript;
mod trust;
mod view;
mod wrap;

pub use app::{App, AppConfig};
pub use frame_times::FrameTimes;
pub use idle::IDLE_AFTER;
pub use run::{FRAME_INTERVAL, LoopEnd, LoopStats, Submitter, TuiError, event_loop, run};
pub use terminal::{TerminalGuard, TerminalOptions, restore};
pub use trust::{TrustKey, TrustQuestion, ask_trust};

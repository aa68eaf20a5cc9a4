//! tine-tui: the interactive terminal UI (ratatui + crossterm), a front end of the session.
//!
//! It knows nothing of the session's crates: the session's events come in as [`UiEvent`]s and
//! the UI's requests go out as [`UiCommand`]s (`event`), which a thin adapter maps to and from
//! the session's own types. [`App`] is a pure state machine (events and keys in, commands out,
//! a frame drawn on request); [`run()`] owns the terminal and the loop.
//!
//! Modules in reading order:
//! - [`event`]: the vocabulary with the session: [`UiEvent`], [`UiCommand`] and view types.
//! - [`app`]: [`App`], its state and what each session event does; the turn guard and queue.
//! - [`keys`]: what each key, paste and wheel notch does (`App::handle_key`, ...).
//! - [`view`]: drawing a frame (`App::render`).
//! - [`transcript`]: entries with virtual scrolling and per-width cached rows.
//! - [`entry`], [`tool_call`]: how each entry lays out; a tool call's three phases.
//! - [`stream`], [`markdown`], [`highlight`]: incremental markdown, code highlighting.
//! - [`diff`]: Edit/Write results as coloured diffs.
//! - [`input`]: the prompt box's editor, history and pastes.
//! - [`slash`]: slash commands and their completion.
//! - [`permission`]: the permission dialog and its queue; [`elicitation`]: an MCP server's
//!   question (its form) and its queue; `plan_approval`: its ExitPlanMode labels; `thinking`:
//!   Tab toggles extended thinking.
//! - [`away`], [`speculation`]: the away card after an idle gap; drafts handed to the session
//!   for speculation while typing pauses.
//! - [`tasks_panel`]: the tasks panel (`/tasks`, Ctrl+T): background work listed, the selected
//!   task stopped.
//! - [`wrap`], [`theme`]: word wrapping with hanging prefixes; colours.
//! - [`run`](mod@run), [`terminal`]: the terminal loop (raw mode, alternate screen, frame pacing) and
//!   restoring the terminal on exit and on panic; [`frame_times`]: what each frame cost.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod away;
pub mod diff;
pub mod elicitation;
pub mod entry;
pub mod event;
pub mod frame_times;
pub mod highlight;
pub mod input;
pub mod keys;
pub mod markdown;
pub mod permission;
mod plan_approval;
pub mod run;
pub mod slash;
pub mod speculation;
pub mod stream;
pub mod tasks_panel;
pub mod terminal;
pub mod theme;
mod thinking;
pub mod tool_call;
pub mod transcript;
pub mod view;
pub mod wrap;

pub use app::{App, AppConfig, Queued};
pub use elicitation::{
    ElicitationField, ElicitationReply, ElicitationRequest, FieldKind, FieldValue,
};
pub use event::{
    CompactionView, DiffSource, NoticeLevel, PermissionAnswer, PermissionMode, PermissionRequest,
    StuckQuestion, TaskKind, TaskStatus, TaskView, TodoStatus, TodoView, ToolDisplayView,
    ToolResultView, TurnEndReason, UiCommand, UiEvent, UsageView,
};
pub use run::{FRAME_INTERVAL, LoopEnd, LoopStats, TuiError, event_loop, run};
pub use slash::SlashCommandSpec;
pub use terminal::{TerminalGuard, TerminalOptions, restore};

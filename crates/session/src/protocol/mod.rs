//! The session protocol: one queue of typed operations in ([`Op`], each named by an [`OpId`]
//! when submitted) and one stream of events out ([`Event`]: the id of the op it answers and a
//! [`SessionEvent`]), in the shape of codex's `Op` / `EventMsg` pair. Every front end (the
//! TUI, headless `-p`, and any other) speaks only this: the types live here, and nothing here
//! depends on how the session works inside.
//!
//! - `op`: [`Op`], [`Answer`], [`PermissionAnswer`], the ids ([`OpId`], [`QuestionId`]) and
//!   [`SessionEndReason`].
//! - `event`: [`Event`], [`SessionEvent`] and what they carry ([`TurnEnd`], [`UsageReport`],
//!   [`SessionCost`], [`PermissionRequest`], [`StuckQuestion`], [`ElicitationQuestion`],
//!   [`TaskUpdate`], [`Notice`], [`ShutdownReport`], ...).
//! - `info`: [`SessionInfo`], the command table ([`CommandInfo`]) and the status line command
//!   ([`StatusLineCommand`]).
//! - `history`: [`HistoryItem`], a resumed conversation shown again.
//! - `display`: how a call reads to people ([`call_summary`]).

mod display;
mod event;
mod history;
mod info;
mod op;

pub use display::call_summary;
pub use event::{
    AgentReport, CommandOutput, EditPreview, ElicitationQuestion, Event, MAIN_SOURCE, Notice,
    NoticeLevel, PermissionRequest, RequestSummary, RewindPoint, RewindReport, SessionCost,
    SessionEvent, ShutdownReport, StoppedTask, StuckQuestion, TaskUpdate, TurnEnd, TurnOutcome,
    UsageReport,
};
pub use history::HistoryItem;
pub use info::{
    CLAUDE_CODE_PROTOCOL_VERSION, CommandInfo, CommandSource, SessionInfo, StatusLineCommand,
};
pub use op::{
    Answer, Op, OpId, PermissionAnswer, PermissionUpdate, QuestionId, RewindScope, RewindTarget,
    SessionEndReason,
};

//! What every entry's layout shares: the context it is laid out in (width, Ctrl+O, the time)
//! and the gutters of the transcript: "● " before the assistant's text and tool calls, "  ⎿  "
//! before a result's first row, the indents of continuation rows.

use ratatui::text::{Line, Span};
use tokio::time::Instant;

use crate::theme;
use crate::wrap::IndentedLine;

/// What the layout of an entry depends on besides the entry itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LayoutCtx {
    pub(crate) width: u16,
    /// Ctrl+O: results and thinking shown in full.
    pub(crate) expanded: bool,
    pub(crate) now: Instant,
}

/// The first-row prefix of the assistant's text and of tool calls.
pub(crate) const BULLET: &str = "● ";
/// Continuation of those.
pub(crate) const INDENT: &str = "  ";
/// The first row of a result under a call.
pub(crate) const RESULT: &str = "  ⎿  ";
/// Continuation of a result.
pub(crate) const RESULT_INDENT: &str = "     ";

pub(crate) fn bullet() -> Vec<Span<'static>> {
    vec![Span::raw(BULLET)]
}

pub(crate) fn indent() -> Vec<Span<'static>> {
    vec![Span::raw(INDENT)]
}

/// A line under a call: "  ⎿  text", continuation rows indented to match.
pub(crate) fn result_line(body: Line<'static>) -> IndentedLine {
    IndentedLine {
        first: vec![Span::styled(RESULT, theme::dim())],
        rest: vec![Span::raw(RESULT_INDENT)],
        body,
    }
}

/// A further line of a result (no "⎿").
pub(crate) fn result_more(body: Line<'static>) -> IndentedLine {
    IndentedLine {
        first: vec![Span::raw(RESULT_INDENT)],
        rest: vec![Span::raw(RESULT_INDENT)],
        body,
    }
}

//! The transcript's entries and how each lays out into rows at a width: the user's prompts,
//! the assistant's streamed markdown, thinking, tool calls, notices, errors, command output.

use ratatui::text::{Line, Span};
use tine_session::{CompactBoundary, NoticeLevel};
use tokio::time::Instant;

use crate::layout::{INDENT, LayoutCtx, RESULT, RESULT_INDENT, bullet, indent, result_line};
use crate::stream::MarkdownStream;
use crate::theme;
use crate::tool_call::ToolCall;
use crate::wrap::{IndentedLine, sanitize};

/// One item of the conversation as shown.
pub(crate) enum Entry {
    /// A prompt the person sent (or a slash command they ran).
    User {
        text: String,
    },
    /// The assistant's text, markdown, streaming until the reply ends.
    Assistant(MarkdownStream),
    Thinking {
        text: String,
        done: bool,
    },
    Tool(ToolCall),
    /// A line for the person (the session's notices, the UI's own).
    Notice {
        level: NoticeLevel,
        text: String,
    },
    /// "Interrupted by user".
    Interrupted,
    /// A turn that ended in an error, a command that failed, an unknown command.
    Error {
        message: String,
    },
    /// What a slash command answered.
    CommandOutput {
        body: MarkdownStream,
    },
    /// The conversation was replaced by a summary (automatically or by `/compact`).
    Compacted(CompactBoundary),
}

impl Entry {
    /// A value that changes when the entry's look changes with time alone (a running tool's
    /// elapsed seconds), so a cached layout is redone then and only then.
    pub(crate) fn time_salt(&self, now: Instant) -> u64 {
        match self {
            Entry::Tool(call) => call.time_salt(now),
            Entry::User { .. }
            | Entry::Assistant(_)
            | Entry::Thinking { .. }
            | Entry::Notice { .. }
            | Entry::Interrupted
            | Entry::Error { .. }
            | Entry::CommandOutput { .. }
            | Entry::Compacted(_) => 0,
        }
    }

    /// The entry's rows (all but the assistant's streamed text, which caches its own).
    pub(crate) fn layout(&mut self, ctx: &LayoutCtx) -> Vec<Line<'static>> {
        let mut lines: Vec<IndentedLine> = Vec::new();
        match self {
            Entry::User { text } => {
                for (i, line) in sanitize(text).split('\n').enumerate() {
                    let first = if i == 0 { "> " } else { "  " };
                    lines.push(IndentedLine {
                        first: vec![Span::styled(first, theme::dim())],
                        rest: vec![Span::raw("  ")],
                        body: Line::from(Span::styled(line.to_owned(), theme::user_prompt())),
                    });
                }
            }
            Entry::Assistant(stream) => {
                // Callers use `Transcript`'s fast path; this is the complete fallback.
                let (head, tail) = stream.rows(ctx.width, &bullet(), &indent());
                return head.iter().chain(tail.iter()).cloned().collect();
            }
            Entry::Thinking { text, done } => thinking(text, *done, ctx.expanded, &mut lines),
            Entry::Tool(call) => call.layout(ctx, &mut lines),
            Entry::Notice { level, text } => {
                let (mark, style) = match level {
                    NoticeLevel::Info => ("✻ ", theme::dim()),
                    NoticeLevel::Warning => ("⚠ ", theme::warning()),
                };
                for (i, line) in sanitize(text).split('\n').enumerate() {
                    lines.push(IndentedLine {
                        first: vec![Span::styled(if i == 0 { mark } else { "  " }, style)],
                        rest: vec![Span::raw("  ")],
                        body: Line::from(Span::styled(line.to_owned(), style)),
                    });
                }
            }
            Entry::Interrupted => lines.push(result_line(Line::from(Span::styled(
                "Interrupted by user",
                theme::error(),
            )))),
            Entry::Error { message } => {
                for (i, line) in sanitize(message).split('\n').enumerate() {
                    lines.push(IndentedLine {
                        first: vec![Span::styled(
                            if i == 0 { "✗ " } else { "  " },
                            theme::error(),
                        )],
                        rest: vec![Span::raw("  ")],
                        body: Line::from(Span::styled(line.to_owned(), theme::error())),
                    });
                }
            }
            Entry::CommandOutput { body } => {
                let first = vec![Span::styled(RESULT, theme::dim())];
                let rest = vec![Span::raw(RESULT_INDENT)];
                let (head, tail) = body.rows(ctx.width, &first, &rest);
                return head.iter().chain(tail.iter()).cloned().collect();
            }
            Entry::Compacted(view) => compacted(view, &mut lines),
        }
        let mut rows = Vec::with_capacity(lines.len());
        for line in &lines {
            line.wrap(ctx.width, &mut rows);
        }
        rows
    }
}

fn thinking(text: &str, done: bool, expanded: bool, out: &mut Vec<IndentedLine>) {
    let head = if done {
        "✻ Thought"
    } else {
        "✻ Thinking…"
    };
    let count = text.lines().count();
    let mut header = vec![Span::styled(head, theme::thinking())];
    if !expanded && count > 0 {
        header.push(Span::styled(
            format!(" ({count} lines, ctrl+o to show)"),
            theme::dim(),
        ));
    }
    out.push(IndentedLine::plain(Line::from(header)));
    if expanded {
        for line in sanitize(text).lines() {
            out.push(IndentedLine {
                first: vec![Span::raw(INDENT)],
                rest: vec![Span::raw(INDENT)],
                body: Line::from(Span::styled(line.to_owned(), theme::thinking())),
            });
        }
    }
}

/// "✻ Conversation compacted automatically · 156,855 → 11,902 tokens", then how many
/// messages the summary replaced and where to see what was dropped.
fn compacted(view: &CompactBoundary, out: &mut Vec<IndentedLine>) {
    let how = match view.trigger.as_str() {
        "auto" => "automatically",
        "reactive" => "(the prompt was too long)",
        _ => "(/compact)",
    };
    out.push(IndentedLine::plain(Line::from(vec![
        Span::styled(format!("✻ Conversation compacted {how}"), theme::accent()),
        Span::styled(
            format!(
                " · {} → {} tokens",
                thousands(view.tokens_before),
                thousands(view.tokens_after)
            ),
            theme::dim(),
        ),
    ])));
    let unit = if view.messages_summarized == 1 {
        "message"
    } else {
        "messages"
    };
    out.push(result_line(Line::from(Span::styled(
        format!(
            "{} {unit} summarized · /compact log shows what was dropped",
            view.messages_summarized
        ),
        theme::dim(),
    ))));
}

/// 156855 → "156,855".
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

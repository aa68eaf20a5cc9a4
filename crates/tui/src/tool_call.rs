//! A tool call in its three phases: the call line "● Read(src/main.rs)"; while it runs,
//! elapsed time and lines of output (an Agent call: its sub-agent's latest calls,
//! `agent_call`); the result, collapsed to a few lines when long ("… +N lines (ctrl+o to
//! expand)"), Edit/Write as a coloured diff with the file relative to the project, a call the
//! person refused as "Rejected by you", an Agent call's "Done (…)".

use std::path::Path;
use std::time::Duration;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use tine_session::{ToolDisplay, ToolOutput};
use tine_tools::TodoStatus;
use tokio::time::Instant;

use crate::agent_call::{AgentLines, done_line};
use crate::diff::{self, DiffLine, DiffSource};
use crate::layout::{BULLET, INDENT, LayoutCtx, RESULT_INDENT, result_line, result_more};
use crate::shown::{declined_summary, shown_path};
use crate::theme;
use crate::wrap::{IndentedLine, sanitize};

/// Lines of a long result shown while collapsed.
pub(crate) const PREVIEW_LINES: usize = 3;
/// Diff lines shown while collapsed.
pub(crate) const DIFF_PREVIEW_LINES: usize = 16;

pub(crate) struct ToolCall {
    pub tool: String,
    pub args: String,
    pub started: Instant,
    pub progress: Option<Progress>,
    /// An Agent call's sub-agent, as its latest progress report said.
    pub agent: Option<AgentLines>,
    pub state: ToolState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    pub elapsed: Duration,
    pub lines: u64,
    pub bytes: u64,
}

pub(crate) enum ToolState {
    Running,
    Done {
        /// The result, its summary as the person reads it ("Rejected by you"). Boxed: the
        /// other states are small.
        result: Box<ToolOutput>,
        /// An Edit/Write's file as shown and its diff's lines, made once when the result
        /// arrived.
        diff: Option<(String, Vec<DiffLine>)>,
        /// The person refused the call: collapsed, the summary says so; what the model was
        /// told is behind Ctrl+O.
        declined: bool,
    },
    /// The turn ended (interrupted) while it ran.
    Interrupted,
}

impl ToolCall {
    pub(crate) fn new(tool: String, args: String, now: Instant) -> Self {
        Self {
            tool,
            args,
            started: now,
            progress: None,
            agent: None,
            state: ToolState::Running,
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        matches!(self.state, ToolState::Running)
    }

    /// The call finished with `result`; files inside `cwd` are shown relative to it.
    pub(crate) fn finish(&mut self, mut result: ToolOutput, cwd: Option<&Path>) {
        let diff = match &result.display {
            ToolDisplay::Diff {
                file_path, unified, ..
            } => {
                let path = file_path.display().to_string();
                let shown = cwd.map_or_else(|| path.clone(), |cwd| shown_path(&path, cwd));
                let lines = diff::diff_lines(&DiffSource::Unified(unified));
                Some((shown, lines))
            }
            ToolDisplay::None
            | ToolDisplay::Todos(_)
            | ToolDisplay::Shell { .. }
            | ToolDisplay::Agent(_) => None,
        };
        let declined = match declined_summary(&result.content) {
            Some(summary) if result.is_error => {
                result.summary = summary;
                true
            }
            _ => false,
        };
        self.state = ToolState::Done {
            result: Box::new(result),
            diff,
            declined,
        };
    }

    pub(crate) fn time_salt(&self, now: Instant) -> u64 {
        match self.state {
            ToolState::Running => now.saturating_duration_since(self.started).as_secs() + 1,
            ToolState::Done { .. } | ToolState::Interrupted => 0,
        }
    }

    pub(crate) fn layout(&self, ctx: &LayoutCtx, out: &mut Vec<IndentedLine>) {
        let bullet_style = match &self.state {
            ToolState::Running => theme::dim(),
            ToolState::Done { result, .. } if result.is_error => theme::error(),
            ToolState::Done { .. } => theme::success(),
            ToolState::Interrupted => theme::error(),
        };
        let mut call = vec![Span::styled(self.tool.clone(), theme::bold())];
        let args = sanitize(&self.args).replace('\n', " ");
        if !args.is_empty() {
            call.push(Span::raw(format!("({args})")));
        }
        out.push(IndentedLine {
            first: vec![Span::styled(BULLET, bullet_style)],
            rest: vec![Span::raw(INDENT)],
            body: Line::from(call),
        });
        match &self.state {
            // A sub-agent's latest calls say more than a clock.
            ToolState::Running if self.agent.is_some() => {
                if let Some(agent) = &self.agent {
                    agent.layout(out);
                }
            }
            ToolState::Running => {
                // The tool's own clock when it reports one; ours between reports.
                let ours = ctx.now.saturating_duration_since(self.started);
                let elapsed = self
                    .progress
                    .map_or(ours, |p| p.elapsed.max(ours))
                    .as_secs();
                let mut text = format!("Running… ({elapsed}s");
                if let Some(p) = self.progress.filter(|p| p.lines > 0) {
                    let unit = if p.lines == 1 { "line" } else { "lines" };
                    text.push_str(&format!(" · {} {unit}", p.lines));
                }
                text.push(')');
                out.push(result_line(Line::from(Span::styled(text, theme::dim()))));
            }
            ToolState::Interrupted => out.push(result_line(Line::from(Span::styled(
                "Interrupted",
                theme::error(),
            )))),
            ToolState::Done {
                result,
                diff,
                declined,
            } => {
                if *declined && !ctx.expanded {
                    let line = vec![
                        Span::styled(sanitize(&result.summary), theme::error()),
                        Span::styled(" (ctrl+o to expand)", theme::dim()),
                    ];
                    out.push(result_line(Line::from(line)));
                } else {
                    result_rows(result, diff.as_ref(), ctx.expanded, out);
                }
            }
        }
    }
}

/// A finished call's rows under its call line.
fn result_rows(
    result: &ToolOutput,
    diff: Option<&(String, Vec<DiffLine>)>,
    expanded: bool,
    out: &mut Vec<IndentedLine>,
) {
    if result.is_error {
        let style = theme::error();
        let text = if result.content.trim().is_empty() {
            &result.summary
        } else {
            &result.content
        };
        preview(text, style, expanded, out);
        return;
    }
    match &result.display {
        ToolDisplay::Diff { .. } => {
            let (path, lines) = match diff {
                Some((path, lines)) => (path.as_str(), lines.as_slice()),
                None => ("", &[][..]),
            };
            let (added, removed) = diff::counts(lines);
            let head = format!(
                "Updated {path} with {added} {} and {removed} {}",
                plural(added, "addition", "additions"),
                plural(removed, "removal", "removals"),
            );
            out.push(result_line(Line::from(head)));
            let cap = (!expanded).then_some(DIFF_PREVIEW_LINES);
            let (rows, more) = diff::render(lines, cap);
            for row in rows {
                out.push(row.nested(&[Span::raw(RESULT_INDENT)], &[Span::raw(RESULT_INDENT)]));
            }
            if more > 0 {
                out.push(result_more(expand_hint(more)));
            }
        }
        ToolDisplay::Todos(items) => {
            for (i, item) in items.iter().enumerate() {
                let (mark, style) = match item.status {
                    TodoStatus::Pending => ("☐ ", Style::default()),
                    TodoStatus::InProgress => ("◐ ", theme::accent()),
                    TodoStatus::Completed => ("☒ ", theme::dim()),
                };
                let body = Line::from(vec![
                    Span::styled(mark, style),
                    Span::styled(sanitize(&item.content), style),
                ]);
                out.push(if i == 0 {
                    result_line(body)
                } else {
                    result_more(body)
                });
            }
            if items.is_empty() {
                out.push(result_line(Line::from(Span::styled(
                    "(no todos)",
                    theme::dim(),
                ))));
            }
        }
        ToolDisplay::Shell {
            exit_code,
            timed_out,
            background_task,
            truncated: _,
        } => {
            if let Some(task) = background_task {
                out.push(result_line(Line::from(Span::styled(
                    format!("Running in the background ({task})"),
                    theme::dim(),
                ))));
                return;
            }
            let text = if result.content.trim().is_empty() {
                "(No content)"
            } else {
                &result.content
            };
            preview(text, Style::default(), expanded, out);
            let mut status = Vec::new();
            if *timed_out {
                status.push("timed out".to_owned());
            }
            if let Some(code) = exit_code.filter(|c| *c != 0) {
                status.push(format!("exit code {code}"));
            }
            if !status.is_empty() {
                out.push(result_more(Line::from(Span::styled(
                    status.join(", "),
                    theme::error(),
                ))));
            }
        }
        ToolDisplay::Agent(totals) => {
            let mut line = vec![Span::raw(done_line(totals))];
            if !result.content.trim().is_empty() {
                if expanded {
                    out.push(result_line(Line::from(line)));
                    for row in sanitize(&result.content).lines() {
                        out.push(result_more(Line::from(row.to_owned())));
                    }
                    return;
                }
                line.push(Span::styled(" (ctrl+o to expand)", theme::dim()));
            }
            out.push(result_line(Line::from(line)));
        }
        ToolDisplay::None => {
            if expanded && !result.content.trim().is_empty() {
                if !result.summary.is_empty() {
                    out.push(result_line(Line::from(result.summary.clone())));
                    for line in sanitize(&result.content).lines() {
                        out.push(result_more(Line::from(line.to_owned())));
                    }
                } else {
                    preview(&result.content, Style::default(), true, out);
                }
            } else if !result.summary.is_empty() {
                let mut line = vec![Span::raw(sanitize(&result.summary))];
                if result.content.lines().count() > 1 {
                    line.push(Span::styled(" (ctrl+o to expand)", theme::dim()));
                }
                out.push(result_line(Line::from(line)));
            } else {
                preview(&result.content, Style::default(), expanded, out);
            }
        }
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

fn expand_hint(more: usize) -> Line<'static> {
    let unit = if more == 1 { "line" } else { "lines" };
    Line::from(Span::styled(
        format!("… +{more} {unit} (ctrl+o to expand)"),
        theme::dim(),
    ))
}

/// The text's first lines (all of them when expanded), then how many more.
fn preview(text: &str, style: Style, expanded: bool, out: &mut Vec<IndentedLine>) {
    let text = sanitize(text);
    let text = text.trim_end_matches('\n');
    let total = text.lines().count().max(1);
    let shown = if expanded || total <= PREVIEW_LINES + 1 {
        total
    } else {
        PREVIEW_LINES
    };
    for (i, line) in text.split('\n').take(shown).enumerate() {
        let body = Line::from(Span::styled(line.to_owned(), style));
        out.push(if i == 0 {
            result_line(body)
        } else {
            result_more(body)
        });
    }
    if shown < total {
        out.push(result_more(expand_hint(total - shown)));
    }
}
